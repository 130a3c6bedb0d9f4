"""The catalogue's attempts on the real probe: a descriptor handed in at start is a
route (fs-inherited-fds), and `probe confine`'s knobs leave exactly one thing open
(the mutants of matrices/mutants.toml are built from them)."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.probe.build import build_probe
from tests.probe.seccomp import deny_list

ROOT = Path(__file__).resolve().parents[2]

TOKEN = "0123456789abcdef0123456789abcdef"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (capabilities)")


@pytest.fixture(scope="module")
def probe() -> Path:
    return build_probe().path


def _held(
    probe: Path, sentinel: Path, *, hand_in: str | None, fd: int = 3, more: int = 0
) -> dict[str, object]:
    """fs-inherited-fds's line, with `fd` opened on `hand_in` by the launcher (and
    `more` descriptors on /dev/null from 10 up)."""
    run = [str(probe), "run", "--tag", "t", "--token", TOKEN, "--sentinel", str(sentinel)]
    script = f'for i in $(seq 10 {9 + more}); do eval "exec $i</dev/null"; done; '
    script += f'exec {fd}<"$0" && exec "$@"' if hand_in else 'exec "$@"'
    launch = ["bash", "-c", script, hand_in or "bash"] if hand_in or more else []
    out = subprocess.run([*launch, *run, "filesystem-confinement"], capture_output=True, text=True)
    for line in out.stdout.splitlines():
        row = json.loads(line)
        if row.get("id") == "fs-inherited-fds":
            return dict(row)
    raise AssertionError(out.stdout + out.stderr)


def test_a_folder_handed_in_at_start_is_a_route(probe: Path, tmp_path: Path) -> None:
    """A launcher's leaked descriptor on a folder above the sentinel reaches it."""
    sentinel = tmp_path / "deep" / "sentinel"
    sentinel.parent.mkdir()
    sentinel.write_text(TOKEN)
    row = _held(probe, sentinel, hand_in=str(tmp_path / "deep"))
    assert row["outcome"] == "escaped", row
    assert "descriptor 3 held at start" in str(row["detail"])


def test_a_file_handed_in_at_start_is_read(probe: Path, tmp_path: Path) -> None:
    sentinel = tmp_path / "sentinel"
    sentinel.write_text(TOKEN)
    row = _held(probe, tmp_path / "elsewhere", hand_in=str(sentinel))
    assert row["outcome"] == "escaped", row


def test_a_descriptor_at_any_number_is_found(probe: Path, tmp_path: Path) -> None:
    """A leak at fd 1500 is as good as one at fd 3 (no scan stops at 1024)."""
    sentinel = tmp_path / "deep" / "sentinel"
    sentinel.parent.mkdir()
    sentinel.write_text(TOKEN)
    row = _held(probe, sentinel, hand_in=str(tmp_path / "deep"), fd=1500)
    assert row["outcome"] == "escaped", row
    assert "descriptor 1500 held at start" in str(row["detail"])


def test_more_descriptors_than_it_checks_is_no_pass(probe: Path, tmp_path: Path) -> None:
    """Past the first 64, descriptors are counted: the check is an error, not blocked."""
    row = _held(probe, tmp_path / "sentinel", hand_in=None, more=70)
    assert row["outcome"] == "error", row
    assert "beyond the 64 it checks" in str(row["detail"])


def _rows(row: dict[str, object]) -> dict[str, list[str]]:
    evidence = row["evidence"]
    assert isinstance(evidence, dict)
    return {r[0]: r for r in evidence["held_files"]}


def test_a_held_descriptor_is_judged_by_what_goes_through_it(probe: Path, tmp_path: Path) -> None:
    """Opened for reading is no proof of read-only: a file re-opened for writing through
    /proc/self/fd, a folder given an O_TMPFILE, count as writes ("rw"); nothing is
    changed, and a file with an execute bit is never opened for writing."""
    data = tmp_path / "data"
    data.write_text("x")
    data.chmod(0o644)
    before = data.stat()
    rows = _rows(_held(probe, tmp_path / "sentinel", hand_in=str(data)))
    assert rows["3"][1:2] + rows["3"][6:8] == ["file", "rw", "read"], rows
    after = data.stat()
    assert (after.st_mtime_ns, after.st_size, data.read_text()) == (
        before.st_mtime_ns,
        before.st_size,
        "x",
    )
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    rows = _rows(_held(probe, tmp_path / "sentinel", hand_in=str(tool)))
    assert rows["3"][6:8] == ["r", "read"], rows
    folder = tmp_path / "held"
    folder.mkdir()
    names = sorted(p.name for p in tmp_path.iterdir())
    rows = _rows(_held(probe, tmp_path / "sentinel", hand_in=str(folder)))
    assert rows["3"][1:2] + rows["3"][6:8] == ["dir", "rw", "listed"], rows
    assert sorted(p.name for p in tmp_path.iterdir()) == names
    assert list(folder.iterdir()) == []


def test_an_append_only_file_held_is_written_by_appending(probe: Path, tmp_path: Path) -> None:
    """An append-only file (chattr +a) takes no plain open for writing, only one for
    appending: a held one is judged by that."""
    log = tmp_path / "log"
    log.write_text("l")
    log.chmod(0o644)
    if subprocess.run(["chattr", "+a", str(log)], capture_output=True).returncode != 0:
        pytest.skip("no append-only flag here (not root, or not on this filesystem)")
    try:
        rows = _rows(_held(probe, tmp_path / "sentinel", hand_in=str(log)))
        assert rows["3"][6:8] == ["rw", "read"], rows
        assert log.read_text() == "l"
    finally:
        subprocess.run(["chattr", "-a", str(log)], check=True)


def _holding(
    probe: Path, fd: int, *, shell: str = "", preexec: Callable[[], None] | None = None
) -> dict[str, object]:
    """fs-inherited-fds's line, the probe holding `fd` (the test's) as descriptor 3, or
    (`shell`, run in a mount namespace of its own, as root) what `shell` leaves there;
    `preexec` run in the launcher before it starts (a filter loaded)."""
    run = [str(probe), "run", "--tag", "t", "--token", TOKEN, "--sentinel", "/nonexistent"]
    launch = ["bash", "-c", f'exec 3<&{fd} {fd}<&-; exec "$@"', "bash"]
    if shell:
        launch = ["unshare", "--mount", "--propagation", "private", "sh", "-c", shell, "sh"]
    done = subprocess.run(
        [*launch, *run, "filesystem-confinement"],
        capture_output=True,
        text=True,
        pass_fds=(fd,) if fd >= 0 else (),
        preexec_fn=preexec,
    )
    for line in done.stdout.splitlines():
        row = json.loads(line)
        if row.get("id") == "fs-inherited-fds":
            return dict(row)
    raise AssertionError(done.stdout + done.stderr)


def test_a_held_pty_master_is_placed_by_its_terminal(probe: Path) -> None:
    """A pty master types into whatever reads its terminal: its row is the terminal's
    (the slave's device and path, TIOCGPTPEER's), and nothing is written into it."""
    master, slave = os.openpty()
    try:
        row = _holding(probe, master)
        st = os.fstat(slave)
        dev = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
        assert _rows(row)["3"][1:4] == ["pty", dev, os.ttyname(slave)], row
        assert "3:pty" in str(row["evidence"]), row
        os.set_blocking(slave, False)
        with pytest.raises(BlockingIOError):
            os.read(slave, 1)  # nothing typed
    finally:
        os.close(master)
        os.close(slave)


def test_priv_held_tty_reports_the_held_masters_terminal_alone(probe: Path, tmp_path: Path) -> None:
    """The privilege floor's row of the same master (priv-held-tty): its terminal's row,
    as fs-inherited-fds reports it, and nothing typed; another held file is no row."""
    master, slave = os.openpty()
    other = tmp_path / "other"
    other.write_text("x")
    try:
        launch = ["bash", "-c", f'exec 3<&{master} {master}<&- 4<"$0"; exec "$@"', str(other)]
        run = [str(probe), "run", "--tag", "t", "privilege-floor"]
        done = subprocess.run([*launch, *run], capture_output=True, text=True, pass_fds=(master,))
        row = next(
            r for r in map(json.loads, done.stdout.splitlines()) if r.get("id") == "priv-held-tty"
        )
        assert row["outcome"] == "blocked", row  # the judge places it
        st = os.fstat(slave)
        dev = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
        assert set(_rows(row)) == {"3"}, row
        assert _rows(row)["3"][1:4] == ["pty", dev, os.ttyname(slave)], row
        os.set_blocking(slave, False)
        with pytest.raises(BlockingIOError):
            os.read(slave, 1)  # nothing typed
    finally:
        os.close(master)
        os.close(slave)


@needs_root
def test_a_pty_of_a_devpts_of_its_own_is_placed_there(probe: Path) -> None:
    """A master of a new devpts instance mounted where the workload stands (bwrap
    --dev's) is on that mount: the sandbox's own terminal."""
    shell = (
        "mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts && "
        'exec 3<>/dev/pts/ptmx && exec "$@"'
    )
    row = _holding(probe, -1, shell=shell)
    host = os.stat("/dev/pts").st_dev
    pty = _rows(row)["3"]
    assert pty[1] == "pty" and pty[4] == "/dev/pts", row
    assert pty[2] != f"{os.major(host)}:{os.minor(host)}", row


@needs_root
def test_a_held_files_metadata_is_set_to_what_it_was(probe: Path, tmp_path: Path) -> None:
    """A root-owned file of mode 0400 held by its owner: no write bit, yet its mode and
    times can be set through the descriptor (an O_PATH one by its /proc/self/fd link),
    each to what it was; on a read-only view of it nothing goes through."""
    token = tmp_path / "token"
    token.write_text("t")
    token.chmod(0o400)
    before = token.stat()
    for flags in (os.O_RDONLY, os.O_PATH):
        fd = os.open(token, flags | os.O_CLOEXEC)
        try:
            row = _holding(probe, fd)
        finally:
            os.close(fd)
        ways = dict(row["evidence"]["held_changed"])["3"]  # type: ignore[index]
        assert {"fchmod", "futimens"} <= set(ways.split(", ")), row
    after = token.stat()
    assert (after.st_mode, after.st_mtime_ns, token.read_text()) == (
        before.st_mode,
        before.st_mtime_ns,
        "t",
    )
    shell = f'mount --bind -o ro {token} {token} && exec 3<{token} && exec "$@"'
    row = _holding(probe, -1, shell=shell)
    assert _rows(row)["3"][1] == "file" and row["evidence"]["held_changed"] == [], row  # type: ignore[index]


METADATA_CALLS = (
    "chmod,fchmod,fchmodat,chown,fchown,lchown,fchownat,utime,utimes,futimesat,utimensat,"
    "setxattr,lsetxattr,fsetxattr,removexattr,lremovexattr,fremovexattr,setxattrat,"
    "removexattrat,file_setattr,FS_IOC_SETFLAGS,FS_IOC_FSSETXATTR,FS_IOC_SETVERSION,"
    "EXT4_IOC_SETVERSION"
)


@needs_root
@pytest.mark.skipif(platform.machine() != "x86_64", reason="the i386 entry is x86_64's")
def test_a_held_files_metadata_is_changed_by_each_way_a_deny_list_leaves(
    probe: Path, tmp_path: Path
) -> None:
    """Behind a deny-list of the metadata calls, a held file's mode is still set through
    fchmodat2 on the descriptor where the list lacks it, and through the i386 entry where
    it checks no architecture: each named; with the list complete, nothing goes through,
    and the file is as it was."""
    token = tmp_path / "token"
    token.write_text("t")
    token.chmod(0o444)
    before = token.stat()
    cases = (
        (deny_list(METADATA_CALLS), "fchmodat2 AT_EMPTY_PATH"),
        (deny_list(METADATA_CALLS + ",fchmodat2", any_arch=True), "chmod by /proc/self/fd (i386)"),
        (deny_list(METADATA_CALLS + ",fchmodat2"), None),
    )
    for preexec, way in cases:
        fd = os.open(token, os.O_RDONLY | os.O_CLOEXEC)
        try:
            row = _holding(probe, fd, preexec=preexec)
        finally:
            os.close(fd)
        changed = dict(row["evidence"]["held_changed"])  # type: ignore[index]
        if way is None:
            assert changed == {}, row
        else:
            assert way in changed["3"].split(", "), row
    after = token.stat()
    # (its access time is the probe's reads', which a relatime mount may move)
    assert (after.st_mode, after.st_uid, after.st_mtime_ns, token.read_text()) == (
        before.st_mode,
        before.st_uid,
        before.st_mtime_ns,
        "t",
    )


def test_a_held_folder_names_where_dot_dot_leads(probe: Path, tmp_path: Path) -> None:
    """Each ancestor ".." reaches from a held folder is a row of its own, up to the
    root: the folder's own grant says nothing of its parents."""
    folder = tmp_path / "a" / "b"
    folder.mkdir(parents=True)
    rows = _rows(_held(probe, tmp_path / "sentinel", hand_in=str(folder)))
    assert rows["3/.."][3] == str(folder.parent), rows
    assert rows["3/../.."][3] == str(tmp_path), rows
    top = max((k for k in rows if k.startswith("3")), key=len)
    assert rows[top][3] == "/", rows


def test_nothing_handed_in_is_blocked_and_says_what_it_held(probe: Path, tmp_path: Path) -> None:
    row = _held(probe, tmp_path / "sentinel", hand_in=None)
    assert row["outcome"] == "blocked", row
    assert "3:" not in str(row["evidence"]), row  # only what the test's runner left open


def _confined(probe: Path, tmp_path: Path, knobs: list[str], command: list[str]) -> int:
    argv = [str(probe), "confine", *knobs, "--read", "/", "--write", str(tmp_path / "w")]
    tool = shutil.which(command[0]) or command[0]  # confine execs without a PATH search
    done = subprocess.run([*argv, "--", tool, *command[1:]], capture_output=True, text=True)
    if "Landlock unavailable" in done.stdout + done.stderr:
        pytest.skip("this kernel has no Landlock")
    return done.returncode


@needs_root
@pytest.mark.parametrize(
    ("knob", "command", "changed"),
    [
        (["--unfiltered", "chmod"], ["chmod", "600", "{f}"], lambda f: f.stat().st_mode & 0o777),
        (["--unfiltered", "chown"], ["chown", "65534", "{f}"], lambda f: f.stat().st_uid),
        (["--unfiltered", "utime"], ["touch", "-d", "@5", "{f}"], lambda f: f.stat().st_mtime),
        (["--unhandled", "make-dir"], ["mkdir", "{o}/d"], lambda f: (f.parent / "d").exists()),
        (["--unhandled", "remove-file"], ["rm", "{f}"], lambda f: f.exists()),
    ],
)
def test_each_knob_leaves_its_change_open_and_only_then(
    probe: Path,
    tmp_path: Path,
    knob: list[str],
    command: list[str],
    changed: Callable[[Path], object],
) -> None:
    """Without the knob the change is refused (Landlock, or the filter on metadata
    calls, which covers the writable folder too); with it, it goes through."""
    (tmp_path / "w").mkdir()
    outside = tmp_path / "o"
    outside.mkdir()
    f = outside / "f"
    f.write_text("x")
    f.chmod(0o666)
    argv = [a.format(f=f, o=outside) for a in command]
    before = changed(f)
    assert _confined(probe, tmp_path, [], argv) != 0
    assert changed(f) == before
    assert _confined(probe, tmp_path, knob, argv) == 0
    assert changed(f) != before


def test_a_program_granted_as_data_runs_only_with_execute_unhandled(
    probe: Path, tmp_path: Path
) -> None:
    """`--data` grants reading alone: the program is refused (Landlock wants EXECUTE
    as well as READ_FILE to run it) until EXECUTE is left unhandled; `--read` grants
    running too (landlock-unhandled-execute's mutant is built from this)."""
    (tmp_path / "w").mkdir()
    program = tmp_path / "exec-me"
    shutil.copy(probe, program)

    def run(*knobs: str) -> int:
        argv = [str(probe), "confine", *knobs, "--write", str(tmp_path / "w")]
        done = subprocess.run([*argv, "--", str(program), "version"], capture_output=True)
        if b"Landlock unavailable" in done.stdout:
            pytest.skip("this kernel has no Landlock")
        return done.returncode

    assert run("--data", str(program)) == 127
    assert run("--unhandled", "execute", "--data", str(program)) == 0
    assert run("--read", str(program)) == 0


def _overwrite(probe: Path, tmp_path: Path, knobs: list[str], target: Path) -> dict[str, object]:
    """fs-overwrite-outside's line, the probe run under `probe confine` with `knobs`."""
    run = [str(probe), "run", "--tag", "t", "--token", TOKEN, "--overwrite", str(target)]
    argv = [str(probe), "confine", *knobs, "--read", "/", "--write", str(tmp_path / "w")]
    argv += ["--", *run, "filesystem-confinement"]
    out = subprocess.run(argv, capture_output=True, text=True)
    if "Landlock unavailable" in out.stdout + out.stderr:
        pytest.skip("this kernel has no Landlock")
    for line in out.stdout.splitlines():
        row = json.loads(line)
        if row.get("id") == "fs-overwrite-outside":
            return dict(row)
    raise AssertionError(out.stdout + out.stderr)


@needs_root
def test_the_overwrite_asks_for_write_file_alone(probe: Path, tmp_path: Path) -> None:
    """fs-overwrite-outside opens without O_TRUNC (which asks for TRUNCATE too, the
    truncate row's right): a ruleset that handles TRUNCATE but leaves WRITE_FILE
    unhandled lets it change the file (landlock-unhandled-write-file's mutant)."""
    (tmp_path / "w").mkdir()
    target = tmp_path / "o" / "overwrite-me"
    target.parent.mkdir()
    target.write_text("harness: original content\n")
    target.chmod(0o666)
    assert _overwrite(probe, tmp_path, [], target)["outcome"] == "blocked"
    assert target.read_text() == "harness: original content\n"
    row = _overwrite(probe, tmp_path, ["--unhandled", "write-file"], target)
    assert row["outcome"] == "succeeded", row
    assert target.read_text().startswith(TOKEN)


@pytest.mark.parametrize("knob", [["--unhandled", "nothing"], ["--unfiltered", "mount"]])
def test_an_unknown_knob_is_a_usage_error(probe: Path, knob: list[str]) -> None:
    done = subprocess.run([str(probe), "confine", *knob, "--", "true"], capture_output=True)
    assert done.returncode == 2
    assert b"unknown" in done.stdout + done.stderr
