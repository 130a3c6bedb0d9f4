"""A policy's paths are compared as the host resolves them (Debian's /lib is
/usr/lib): for the grants the judge reads, the sentinels left out, the work folder
refusal, and the host files the probe is told to try."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from harness.hostside.filesystem import SentinelsFixture
from harness.hostside.hostfs import HostFsFixture, grants, link_grants
from harness.matrix.models import CommandRuntimeSpec, HostRuntimeSpec
from harness.policy.models import FilesystemPolicy, Policy, within
from harness.runtimes import Runtime, make_runtime
from harness.transport import LocalTransport
from tests.hostside.setups import local_cell, local_host

pytestmark = pytest.mark.anyio


def _runtime(*readable: str) -> Runtime:
    policy = Policy(filesystem_policy=FilesystemPolicy(read_only=list(readable)))
    spec = CommandRuntimeSpec(kind="command", argv=["sh", "{probe}", "{args}"], policy=policy)
    return make_runtime("rt", spec)


_host = local_host
_cell = local_cell


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """real/work (the work folder) and link -> real."""
    (tmp_path / "real" / "work").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    return tmp_path


@pytest.mark.parametrize(("granted", "workdir"), [("link", "real/work"), ("real", "link/work")])
async def test_a_policy_reaching_the_work_folder_by_a_symlink_grants_every_read(
    tree: Path, granted: str, workdir: str
) -> None:
    """The policy names a symlink to the work folder's parent (or the work folder is
    named through one): every sentinel is the workload's to read, so reads are not
    judged (the cell still is, on the rest), and the work folder's sentinel is not made."""
    runtime = _runtime(str(tree / granted))
    fixture = SentinelsFixture()
    await fixture.start(_host(str(tree / workdir), runtime))
    cell = _cell(runtime, str(tree / workdir))
    assert fixture.refuse(cell.cell) is None
    assert fixture.reads_granted(cell)
    fixture.prepare(cell)
    assert cell.sentinels is not None
    assert cell.sentinels.skip == (cell.sentinels.places[2],)


async def test_an_unrelated_policy_is_not_refused(tree: Path) -> None:
    runtime = _runtime("/usr")
    fixture = SentinelsFixture()
    await fixture.start(_host(str(tree / "real" / "work"), runtime))
    cell = _cell(runtime, str(tree / "real" / "work"))
    assert fixture.refuse(cell.cell) is None and not fixture.reads_granted(cell)
    fixture.prepare(cell)
    assert cell.sentinels is not None and cell.sentinels.skip == ()


async def test_the_grants_and_the_targets_follow_the_policys_symlinks(tree: Path) -> None:
    """A policy granting `link` grants the host's `real` (what bwrap and Landlock
    open); the probe is not told to try reading files there, nor anything in
    harness's fs/ folder, but is told of the others."""
    runtime = _runtime(str(tree / "link"))
    workdir = str(tree / "work")
    fixture = HostFsFixture()
    await fixture.start(_host(workdir, runtime))
    cell = _cell(runtime, workdir)
    assert str(tree / "real") in grants(runtime, cell.paths, fixture.real)["host"]
    fixture.targets = [
        ("254:0", "/x/real/a", f"{tree}/real/a"),
        ("254:0", "/x/work/fs/c/outside/sentinel", f"{workdir}/fs/c/outside/sentinel"),
        ("254:0", "/x/other", f"{tree}/other"),
    ]
    # Writes are tried in the read-only grant too: reading it is no leave to change it.
    # (The host's block devices, for priv-root-mknod, follow: `_without_devices`.)
    assert _without_devices(fixture.probe_args(cell)) == [
        "--reach-targets",
        "254:0 /x/other",
        "--write-targets",
        "254:0 /x/real/a\n254:0 /x/other",
        "--write-skip",
        # No allowed folder in this cell, no read_write in its policy: only where the
        # host's write grants lead (the cell's rootfs), which the probe skips by identity.
        f"{workdir}/c/rootfs",
    ]


async def test_the_host_lists_its_files_below_each_mount(tmp_path: Path) -> None:
    """The local host's list holds the first levels of its root filesystem, each as
    (device, path inside the filesystem, host path), and is bounded."""
    from harness.hostside.hostfs import MAX_TARGETS, list_targets, read_host_fs

    view = await read_host_fs(LocalTransport())
    mounts = view["mounts"]
    assert isinstance(mounts, list)
    found = await list_targets(LocalTransport(), mounts)
    assert 0 < len(found) <= MAX_TARGETS
    root = next(m for m in mounts if m[2] == "/")
    assert (root[0], root[3].rstrip("/") + "/etc", "/etc") in found
    assert not any(path.startswith("/proc/") for _, _, path in found)


async def test_read_only_grants_get_harness_s_folder_as_the_host_resolves_them(
    tree: Path,
) -> None:
    """A read-only grant named through a symlink gets harness's folder in the real
    folder, at the policy's path inside; not where the policy also allows writing, not
    in a file or below /proc; the host control gets one in every policy's grants."""
    (tree / "file").write_text("f")
    (tree / "rw").mkdir()
    policy = Policy(
        filesystem_policy=FilesystemPolicy(
            read_only=[str(tree / "link"), str(tree / "file"), "/proc", str(tree / "rw")],
            read_write=[str(tree / "rw")],
        )
    )
    spec = CommandRuntimeSpec(kind="command", argv=["sh", "{probe}", "{args}"], policy=policy)
    runtime = make_runtime("rt", spec)
    host_rt = make_runtime("host", HostRuntimeSpec(kind="host"))
    fixture = SentinelsFixture()
    host = _host(str(tree / "work"), runtime)
    await fixture.start(replace(host, runtimes=(runtime, host_rt)))
    for rt in (runtime, host_rt):
        cell = _cell(rt, str(tree / "work"))
        fixture.prepare(cell)
        assert cell.sentinels is not None
        assert cell.sentinels.granted == ((str(tree / "real"), str(tree / "link")),)
    plain = _cell(make_runtime("plain", CommandRuntimeSpec(kind="command", argv=["x"])), "/w")
    fixture.prepare(plain)
    assert plain.sentinels is not None and plain.sentinels.granted == ()


async def test_the_host_says_what_a_held_descriptors_name_leads_to(tmp_path: Path) -> None:
    """Only descriptors from outside the sandbox's mount namespace (no mount point in
    its table) are named to the host, each once; it answers device and inode, or ""
    where nothing is there (a name the kernel kept for a moved or unmounted file)."""
    from harness.hostside.hostfs import held_outside, identify
    from harness.probe.protocol import ProbeOutput
    from harness.results.records import ProbeCheck

    there = tmp_path / "f"
    there.write_text("x")
    rows = [
        ["3", "file", "254:0", str(there), "", "", "r", "read", "1"],
        ["4", "file", "254:0", str(there), "", "", "r", "read", "1"],
        ["5", "file", "254:0", "/inside/x", "/inside", "/w", "r", "read", "1"],
        ["6", "file", "254:0", f"{tmp_path}/gone (deleted)", "", "", "r", "read", "1"],
    ]
    check = ProbeCheck(
        "fs-inherited-fds", "filesystem-confinement", "attempt", "blocked",
        evidence={"held_files": rows},
    )  # fmt: skip
    named = held_outside(ProbeOutput(checks=[check]))
    assert named == [str(there), f"{tmp_path}/gone (deleted)"]
    st = there.stat()
    found = await identify(LocalTransport(), named)
    assert found == {
        str(there): f"{os.major(st.st_dev)}:{os.minor(st.st_dev)} {st.st_ino}",
        f"{tmp_path}/gone (deleted)": "",
    }


def test_the_working_folders_name_is_asked_too() -> None:
    """fs-cwd's rows of the working folder, fs-proc-1-root's of pid 1's root, and
    fs-proc-fds' of another process's root, from outside the sandbox's mount namespace
    are named to the host as a held descriptor's are; another check's rows are not."""
    from harness.hostside.hostfs import held_outside
    from harness.probe.protocol import ProbeOutput
    from harness.results.records import ProbeCheck

    rows = [["cwd", "dir", "254:0", "/", "", "", "rw", "listed", "2"]]
    cwd = ProbeCheck(
        "fs-cwd", "filesystem-confinement", "attempt", "blocked", evidence={"held_files": rows}
    )
    other = ProbeCheck(
        "fs-routes", "filesystem-confinement", "attempt", "blocked", evidence={"held_files": rows}
    )
    assert held_outside(ProbeOutput(checks=[cwd])) == ["/"]
    root = ProbeCheck(
        "fs-proc-1-root", "filesystem-confinement", "attempt", "blocked",
        evidence={"held_files": [["/proc/1/root", *rows[0][1:]]]},
    )  # fmt: skip
    assert held_outside(ProbeOutput(checks=[root])) == ["/"]
    other_root = ProbeCheck(
        "fs-proc-fds", "filesystem-confinement", "attempt", "blocked",
        evidence={"held_files": [["/proc/13/root", *rows[0][1:]]]},
    )  # fmt: skip
    assert held_outside(ProbeOutput(checks=[other_root])) == ["/"]
    assert held_outside(ProbeOutput(checks=[other])) == []


async def test_the_write_reach_options_by_runtime(tree: Path) -> None:
    """The mount points a cell may write are not tried (the sandbox's view of its
    write grants: the allowed folder, the policy's read_write; and the host's, where
    they lead, for the probe to skip by identity); the host control
    makes no named file on the host's own folders; a kernel of its own gets no
    host targets."""
    from harness.matrix.models import RunscRuntimeSpec

    workdir = str(tree / "real" / "work")
    fixture = HostFsFixture()
    policy = Policy(filesystem_policy=FilesystemPolicy(read_write=["/workspace"]))
    spec = CommandRuntimeSpec(kind="command", argv=["sh", "{probe}", "{args}"], policy=policy)
    rootfs = f"{workdir}/c/rootfs"
    for runtime, want in (
        (make_runtime("cmd", spec), ["--write-skip", f"/workspace\n{rootfs}"]),
        (
            make_runtime("host", HostRuntimeSpec(kind="host")),
            ["--write-skip", rootfs, "--write-named", "0"],
        ),
        (make_runtime("runsc", RunscRuntimeSpec(kind="runsc")), ["--write-skip", f"/\n{rootfs}"]),
    ):
        await fixture.start(_host(workdir, runtime))
        args = _without_devices(fixture.probe_args(_cell(runtime, workdir)))
        assert args[-len(want) :] == want, runtime.name
        assert ("--write-targets" in args) is (not runtime.promises_own_kernel), runtime.name


async def test_a_host_that_cannot_say_confirms_nothing() -> None:
    """A cut connection or a timed-out `stat` is no answer (None), never an empty one:
    an empty answer would deny every held path its grant."""
    from harness.hostside.hostfs import identify
    from harness.transport.base import Completed

    class Cut(LocalTransport):
        async def run(self, argv: object, **_: object) -> Completed:
            return Completed(("sh",), None, None, "", "", 30.0, timed_out=True)

    assert await identify(Cut(), ["/etc/hosts"]) is None


async def test_what_the_write_reach_could_not_remove_is_removed_on_the_host(tmp_path: Path) -> None:
    """A folder Landlock let the probe make but not remove, on a host filesystem, is
    removed by the host after the cell: only `.harness-w-TAG` there, never followed,
    never a path climbing out with `..`, never one of the sandbox's own filesystems."""
    from harness.hostside.hostfs import leftovers, read_host_fs, remove_leftovers
    from harness.probe.protocol import ProbeOutput
    from harness.results.records import ProbeCheck

    view = await read_host_fs(LocalTransport())
    mounts = view["mounts"]
    assert isinstance(mounts, list)
    dev, root, point = next((m[0], m[3], m[2]) for m in mounts if within(str(tmp_path), m[2]))
    below = str(tmp_path)[len(point.rstrip("/")) + 1 :]
    (tmp_path / ".harness-w-c1").mkdir()
    (tmp_path / "keep").mkdir()
    rows = [
        [dev, "ext4", point, root, below, "made a folder it could not remove"],
        [dev, "ext4", point, root, f"{below}/keep", "made and removed a folder"],
        [dev, "ext4", point, root, f"{below}/../x", "made a folder it could not remove"],
        ["0:99", "tmpfs", "/tmp", "/", "", "made a folder it could not remove"],
    ]
    check = ProbeCheck(
        "fs-write-reach",
        "filesystem-confinement",
        "attempt",
        "succeeded",
        evidence={"writes": rows},
    )
    output = ProbeOutput(checks=[check])
    assert leftovers(view, output, "c1") == [f"{tmp_path}/.harness-w-c1"]
    await remove_leftovers(LocalTransport(), view, output, "c1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep"]


async def test_the_hosts_list_of_its_folders(tmp_path: Path) -> None:
    """Every folder of the host's own filesystems, each as its device and its path
    in that filesystem; made once for a mount table and reused within the hour; a
    host with more folders than the bound says it was cut."""
    from harness.hostside import hostfs

    view = await hostfs.read_host_fs(LocalTransport())
    mounts = view["mounts"]
    assert isinstance(mounts, list)
    deep = tmp_path / "a" / "b" / "c" / "d"
    deep.mkdir(parents=True)
    out = tmp_path / "lists"
    out.mkdir()
    made = await hostfs.list_folders(LocalTransport(), mounts, str(out))
    assert made is not None and made.startswith(f"{out}/host-dirs-")
    lines = Path(made).read_text().splitlines()
    dev, root, point = next((m[0], m[3], m[2]) for m in mounts if within(str(deep), m[2]))
    fspath = root.rstrip("/") + str(deep)[len(point.rstrip("/")) :]
    assert f"{dev} {fspath}" in lines
    assert "# cut" not in lines
    assert oct(Path(made).stat().st_mode & 0o777) == "0o644"
    # Reused: a folder made since is not in it, until the hour is out.
    (tmp_path / "later").mkdir()
    assert await hostfs.list_folders(LocalTransport(), mounts, str(out)) == made
    assert f"{dev} {fspath.rsplit('/a/', 1)[0]}/later" not in Path(made).read_text()
    os.utime(made, (0, 0))
    old = tmp_path / "lists" / "host-dirs-0"
    old.write_text("")
    os.utime(old, (0, 0))
    try:
        hostfs.MAX_FOLDERS, bound = 5, hostfs.MAX_FOLDERS
        again = await hostfs.list_folders(LocalTransport(), mounts, str(out))
    finally:
        hostfs.MAX_FOLDERS = bound
    assert again == made
    assert Path(made).read_text().splitlines()[-1] == "# cut"
    assert len(Path(made).read_text().splitlines()) == 6
    assert not old.exists()  # a list two hours old is removed


def _without_devices(args: Sequence[str]) -> list[str]:
    """The probe's options less `--block-devs` and `--leased` and their values, which
    this host's own block devices and leases make (read_host_fs: /sys/class/block,
    /proc/locks)."""
    found = list(args)
    if "--block-devs" in found:
        at = found.index("--block-devs")
        assert all(line.startswith("/dev/") for line in found[at + 1].splitlines())
        del found[at : at + 2]
    if "--leased" in found:
        at = found.index("--leased")
        del found[at : at + 2]
    return found


async def test_the_host_names_its_block_devices_for_the_probe(tree: Path) -> None:
    """/sys/class/block's names, each a node in /dev the probe tries where /dev does
    not list (priv-root-mknod: a sandbox granting one node of it)."""
    from harness.hostside.hostfs import read_host_fs

    view = await read_host_fs(LocalTransport())
    assert view["block"] == sorted(os.listdir("/sys/class/block"))
    runtime = _runtime(str(tree / "link"))
    fixture = HostFsFixture()
    await fixture.start(_host(str(tree / "work"), runtime))
    args = list(fixture.probe_args(_cell(runtime, str(tree / "work"))))
    if view["block"]:
        nodes = args[args.index("--block-devs") + 1].splitlines()
        assert nodes == [f"/dev/{n}" for n in view["block"]]


async def test_the_host_names_the_files_it_holds_leases_on(tree: Path) -> None:
    """/proc/locks' leases, as MAJ:MIN:INO: the probe never truncates one (truncate(2)
    breaks a lease before any access check, and waits for its holder)."""
    import fcntl

    from harness.hostside.hostfs import leased_files, read_host_fs

    held = tree / "held"
    held.write_text("x")
    fd = os.open(held, os.O_RDONLY)
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        view = await read_host_fs(LocalTransport())
        st = held.stat()
        name = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}:{st.st_ino}"
        assert name in view["leased"]
        runtime = _runtime(str(tree / "link"))
        fixture = HostFsFixture()
        await fixture.start(_host(str(tree / "work"), runtime))
        args = list(fixture.probe_args(_cell(runtime, str(tree / "work"))))
        assert name in args[args.index("--leased") + 1].splitlines()
    finally:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
        os.close(fd)
    locks = (
        "1: LEASE  ACTIVE    READ 1234 fd:00:5678 0 EOF\n"
        "2: DELEG  ACTIVE    READ 99 08:11:42 0 EOF\n"
        "3: POSIX  ADVISORY  WRITE 77 08:01:9 0 EOF\n"
    )
    assert leased_files(locks) == ["253:0:5678", "8:17:42"]


def test_what_a_launcher_names_is_tried_as_a_target() -> None:
    """A command runtime's argv names its grants (`--write /var/lib/x`, `--opt=/srv/y`):
    each absolute path is a target on the host mount serving it, the latest mount at
    the longest point; placeholders, relative words and kernel filesystems are not."""
    from harness.hostside.hostfs import named_targets

    mounts = [
        ["254:0", "ext4", "/", "/"],
        ["254:0", "ext4", "/srv/data", "/exports/data"],
        ["0:21", "proc", "/proc", "/"],
    ]
    argv = ["confine", "--write", "/var/lib/apt/../apt/lists/fresh", "--opt=/srv/data/x",
            "{allowed}", "/proc/sys", "relative", "/", "--", "{probe}"]  # fmt: skip
    spec = CommandRuntimeSpec(kind="command", argv=[*argv, "{args}"])
    assert named_targets([make_runtime("rt", spec)], mounts) == [
        ("254:0", "/var/lib/apt/lists/fresh", "/var/lib/apt/lists/fresh"),
        ("254:0", "/exports/data/x", "/srv/data/x"),
    ]


def test_a_named_path_is_tried_where_it_really_leads() -> None:
    """Debian's /bin is /usr/bin: the symlink's own path is no target (reading it
    reads a granted folder). A path not there yet stays as named: the launcher makes
    it at the cell's start."""
    from harness.hostside.hostfs import named_targets

    mounts = [["254:0", "ext4", "/", "/"]]
    spec = CommandRuntimeSpec(kind="command", argv=["/bin/sh", "/new/a", "{probe}", "{args}"])
    found = named_targets([make_runtime("rt", spec)], mounts, {"/bin/sh": "/usr/bin/dash"})
    assert found == [
        ("254:0", "/usr/bin/dash", "/usr/bin/dash"),
        ("254:0", "/new/a", "/new/a"),
    ]


def test_a_policys_write_grants_are_held_to_their_links_only_in_a_sandbox_of_its_own() -> None:
    """A co-located sandbox's /tmp is the host's own folder, its links its users':
    the probe counts them (`--write-skip`) but holds only the allowed folder's files
    to theirs; a sandbox with a kernel of its own has its grants to itself."""
    policy = Policy(filesystem_policy=FilesystemPolicy(read_write=["/tmp", "/sandbox"]))
    argv = ["sh", "{probe}", "{args}"]
    colocated = CommandRuntimeSpec(kind="command", argv=argv, policy=policy)
    own = CommandRuntimeSpec(kind="command", argv=argv, policy=policy, own_kernel=True)
    assert link_grants(make_runtime("rt", colocated)) == []
    assert link_grants(make_runtime("rt", own)) == ["/tmp", "/sandbox"]
