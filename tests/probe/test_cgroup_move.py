"""priv-root-kernel-state's other way to a cgroup.procs: a process born into a host
cgroup by clone3(CLONE_INTO_CGROUP). The kernel asks for an O_PATH handle on the
folder and the write permission of cgroup.procs' mode, never a writable mount, so a
sandbox that shows the unified hierarchy read-only (no file of it opens for
writing) still lets root move a process out of its own cgroup. Moves into the
workload's own cgroup, or below it, are its own business; a uid the file's mode
refuses moves nothing.

Real bwrap and the host's cgroup2 mount: the test makes a cgroup of its own below the
hierarchy's root, places the sandbox's launcher in it, and removes it afterwards
(root needed)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.lab import require_tool
from tests.probe.copies import runnable_copy


def _unified_mount() -> Path | None:
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split(" - ")
        if len(fields) == 2 and fields[1].split()[0] == "cgroup2":
            return Path(fields[0].split()[4])
    return None


UNIFIED = _unified_mount()
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or UNIFIED is None, reason="needs root and a cgroup2 mount"
)


@pytest.fixture
def own_cgroup() -> Iterator[Path]:
    """A cgroup of the test's own, a child of the unified hierarchy's root."""
    assert UNIFIED is not None
    folder = UNIFIED / f"harness-test-move-{secrets.token_hex(4)}"
    folder.mkdir()
    try:
        yield folder
    finally:
        for _ in range(100):  # the sandbox's last process may still be on its way out
            try:
                folder.rmdir()
                break
            except OSError:
                time.sleep(0.05)


def _kernel_state_row(folder: Path, cgroup: Path, *shape: str, nobody: bool = False) -> dict:
    """priv-root-kernel-state of a probe run by bwrap (the bwrap reference's
    namespaces, caps dropped but the set-id pair) started inside `cgroup`, with the
    view `shape` adds."""
    probe = runnable_copy(folder)
    launcher = 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"'
    argv = ["sh", "-c", launcher, "sh", str(cgroup), require_tool("bwrap")]
    argv += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup"]
    argv += ["--die-with-parent", "--cap-drop", "ALL", "--cap-add", "CAP_SETUID"]
    argv += ["--cap-add", "CAP_SETGID", "--ro-bind", str(probe), "/probe", *shape]
    argv += ["--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    argv += ["--", "/probe", "run", "--tag", "t", "privilege-floor"]
    if nobody:  # setpriv of the host's /usr, the probe's root rows run as that uid
        usr = ["--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib"]
        usr += ["--symlink", "usr/lib64", "/lib64"]
        argv[argv.index("--proc") : argv.index("--proc")] = usr
        argv[-5:-5] = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    found = [r for r in rows if r.get("id") == "priv-root-kernel-state"]
    assert found, done.stdout + done.stderr
    return found[0]


def test_a_read_only_hierarchy_still_lets_root_move_out(
    open_folder: Path, own_cgroup: Path
) -> None:
    """The host's /sys read-only: no cgroup file opens for writing, yet a child is
    born outside the workload's cgroup (its cgroup namespace no boundary: this
    hierarchy has no nsdelegate). By hand, the same shape moved a shell's child into
    a sibling cgroup."""
    row = _kernel_state_row(open_folder, own_cgroup, "--ro-bind", "/sys", "/sys")
    assert row["outcome"] == "escaped", row
    assert "clone3(CLONE_INTO_CGROUP)" in row["detail"], row
    assert f"{own_cgroup}:" not in row["detail"] and f"{own_cgroup}/" not in row["detail"], row
    assert row["evidence"]["cgroup_moves_tried"] >= 1, row


def test_the_workloads_own_cgroup_shown_alone_is_no_move(
    open_folder: Path, own_cgroup: Path
) -> None:
    """Only its own cgroup bound in, read-only: nothing else of the hierarchy is in
    view, so no move is tried, and its limits stay as they were set. Read-write, its
    limits are the escape (whoever placed it there set them), not a move."""
    shown = ("--ro-bind", str(own_cgroup), "/sys/fs/cgroup")
    row = _kernel_state_row(open_folder, own_cgroup, *shown)
    assert row["outcome"] == "blocked", row
    assert row["evidence"]["cgroup_moves_tried"] == 0, row
    writable = ("--bind", str(own_cgroup), "/sys/fs/cgroup")
    row = _kernel_state_row(open_folder, own_cgroup, *writable)
    assert row["outcome"] == "escaped" and "a limit on its own cgroup" in row["detail"], row
    assert row["evidence"]["cgroup_moves_tried"] == 0, row


def test_a_uid_the_mode_refuses_moves_nothing(open_folder: Path, own_cgroup: Path) -> None:
    """The read-only shape again, the workload nobody: cgroup.procs is root's, mode
    0644, so every move is refused (by the mode, read first: no clone3 spent on it)."""
    row = _kernel_state_row(open_folder, own_cgroup, "--ro-bind", "/sys", "/sys", nobody=True)
    assert row["outcome"] == "blocked", row
    assert row["evidence"]["cgroup_moves_tried"] == 0, row
    assert row["evidence"]["cgroup_moves_refused_by_mode"] >= 1, row


def _confined_row(folder: Path, cgroup: Path, *mistake: str) -> dict:
    """priv-root-kernel-state of a probe run by `probe confine` (the Landlock
    reference's launcher, offline, in namespaces of its own but the cgroup one) started
    inside `cgroup`, with `mistake` added to its options."""
    probe = runnable_copy(folder)
    launcher = 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"'
    argv = ["sh", "-c", launcher, "sh", str(cgroup), "unshare", "--net", "--ipc", "--uts"]
    argv += ["--pid", "--fork", "--mount-proc", "--", str(probe), "confine", *mistake]
    for grant in ("/usr", "/etc", "/proc", str(folder)):
        argv += ["--read", grant]
    argv += ["--write", "/tmp", "--write", "/dev/null", "--", str(probe)]
    argv += ["run", "--tag", "t", "privilege-floor"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    found = [r for r in rows if r.get("id") == "priv-root-kernel-state"]
    assert found, done.stdout + done.stderr
    return found[0]


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the i386 entry is x86_64's")
def test_clone3_through_the_i386_entry(open_folder: Path, own_cgroup: Path) -> None:
    """x86_64's clone3 refused by the filter (ENOSYS), the i386 entry's (int $0x80,
    435, the same call) let through: a child is born in the host's root cgroup that
    way, and the reason names it. The filter complete (the reference: every call of
    another entry refused) is the twin: tried, nothing moved. By hand, the mutant's
    shape bore a child into the hierarchy's root ("0::/") through the i386 entry."""
    row = _confined_row(open_folder, own_cgroup, "--i386-open", "clone3")
    assert row["outcome"] == "escaped", row
    assert "clone3(CLONE_INTO_CGROUP) through the i386 entry" in row["detail"], row
    twin = _confined_row(open_folder, own_cgroup)
    assert twin["outcome"] == "blocked", twin
    assert twin["evidence"]["cgroup_moves_tried"] >= 1, twin


def test_ns_last_pid_open_to_anyone_is_no_write_without_the_capability(open_folder: Path) -> None:
    """/proc/sys/kernel/ns_last_pid is mode 0666, so anyone opens it for writing; a
    write asks CAP_CHECKPOINT_RESTORE (or CAP_SYS_ADMIN) over the host's user namespace.
    A workload of uid nobody in the host's PID namespace, the host's /proc in view, is
    judged by what it can write: before, that open alone was a violation."""
    probe = runnable_copy(open_folder)
    nobody = [require_tool("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups"]
    nobody += ["--inh-caps=-all"]
    # As nobody; and as root of a user namespace of its own, which owns no PID namespace
    # in view: every capability there, none over the host's.
    for shape in ([], [require_tool("unshare"), "--user", "--map-root-user"]):
        argv = [*nobody, *shape, str(probe), "run", "--tag", "t", "privilege-floor"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        rows = [json.loads(line) for line in done.stdout.splitlines()]
        row = next((r for r in rows if r.get("id") == "priv-root-kernel-state"), None)
        assert row, done.stdout + done.stderr
        assert "ns_last_pid" not in row["detail"], (shape, row)
        assert row["outcome"] == "blocked" and row["evidence"]["files_tried"] > 0, (shape, row)


@pytest.fixture
def delegated_cgroup() -> Iterator[tuple[Path, Path]]:
    """A cgroup delegated to nobody (the folder and its cgroup.procs nobody's, as
    systemd delegates a user's subtree), the workload's own cgroup below it, and 40
    root's folders beside that (a busy host's services): (the delegated one, the
    workload's)."""
    assert UNIFIED is not None
    top = UNIFIED / f"harness-test-deleg-{secrets.token_hex(4)}"
    top.mkdir()
    made = [top / "own", *(top / f"svc{i:02d}" for i in range(40))]
    for folder in made:
        folder.mkdir()
    for path in (top, top / "cgroup.procs", top / "own", top / "own" / "cgroup.procs"):
        os.chown(path, 65534, 65534)
    try:
        yield top, top / "own"
    finally:
        for folder in [*made, top]:
            for _ in range(100):
                try:
                    folder.rmdir()
                    break
                except OSError:
                    time.sleep(0.05)


def test_a_delegated_cgroup_past_the_cap_on_moves_is_tried(
    open_folder: Path, delegated_cgroup: tuple[Path, Path]
) -> None:
    """The read-only shape, the workload nobody in a cgroup below one delegated to it,
    beside 40 root's folders: the walk meets those first (children before their parent),
    each a move the mode refuses. Before, they spent the cap on moves (32) and the
    delegated folder, where nobody's process is born (by hand: `echo $$ >
    <delegated>/cgroup.procs` as nobody from its own cgroup moved the shell), was never
    tried: blocked. Now a folder whose cgroup.procs' mode refuses the uid spends no
    move, and the one it may write is tried: escaped."""
    top, own = delegated_cgroup
    row = _kernel_state_row(open_folder, own, "--ro-bind", "/sys", "/sys", nobody=True)
    assert row["outcome"] == "escaped", row
    assert f"cgroup {top}" in row["detail"] or top.name in row["detail"], row
    assert row["evidence"]["cgroup_moves_refused_by_mode"] >= 40, row
