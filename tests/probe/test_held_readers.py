"""fs-inherited-fds on the real probe, with what a launcher leaves where the workload
only has to read it or write into it: descriptors queued in a message of no bytes or
in a connection waiting on a held unix listener, the write end of a pipe a process
outside reads, and a controlling terminal of the launcher's session. Nothing is ever
written into the pipe nor typed into the terminal."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import subprocess
import termios
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.probe.build import build_probe

TOKEN = "0123456789abcdef0123456789abcdef"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a PID namespace)")
needs_unshare = pytest.mark.skipif(shutil.which("unshare") is None, reason="no unshare")


@pytest.fixture(scope="module")
def probe() -> Path:
    return build_probe().path


def _line(
    probe: Path,
    fd: int = -1,
    *,
    wrap: tuple[str, ...] = (),
    stdin: int | None = None,
    preexec: Callable[[], None] | None = None,
) -> dict[str, object]:
    """fs-inherited-fds's line, the probe holding `fd` (the test's) as descriptor 3,
    started through `wrap` (a PID namespace of its own)."""
    run = [str(probe), "run", "--tag", "t", "--token", TOKEN, "--sentinel", "/nonexistent"]
    hand = ["bash", "-c", f'exec 3<&{fd} {fd}<&-; exec "$@"', "bash"] if fd >= 0 else []
    done = subprocess.run(
        [*hand, *wrap, *run, "filesystem-confinement"],
        capture_output=True,
        text=True,
        pass_fds=(fd,) if fd >= 0 else (),
        stdin=stdin,
        preexec_fn=preexec,
    )
    for line in done.stdout.splitlines():
        row = json.loads(line)
        if row.get("id") == "fs-inherited-fds":
            return dict(row)
    raise AssertionError(done.stdout + done.stderr)


def _rows(row: dict[str, object]) -> dict[str, list[str]]:
    evidence = row["evidence"]
    assert isinstance(evidence, dict)
    return {r[0]: r for r in evidence["held_files"]}


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[int]:
    """A descriptor of a folder of the test's, to be queued."""
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    yield fd
    os.close(fd)


@pytest.mark.parametrize(
    "kind", [socket.SOCK_DGRAM, socket.SOCK_SEQPACKET], ids=["dgram", "seqpacket"]
)
def test_a_descriptor_queued_in_a_message_of_no_bytes_is_received(
    probe: Path, tmp_path: Path, folder: int, kind: int
) -> None:
    """SCM_RIGHTS alone, no byte: recvmsg returns 0 with the descriptor in its control
    data, after empty messages too; a seqpacket peer's end is no error."""
    mine, theirs = socket.socketpair(socket.AF_UNIX, kind)
    with mine, theirs:
        for _ in range(3):
            mine.send(b"")
        socket.send_fds(mine, [b""], [folder])
        mine.close()
        row = _line(probe, theirs.fileno())
    assert row["outcome"] == "blocked", row
    assert "3:queued 0:dir" in str(row["evidence"]), row
    assert _rows(row)["3:queued 0"][3] == str(tmp_path), row


def test_a_queue_longer_than_it_receives_is_no_pass(probe: Path, folder: int) -> None:
    """Messages still waiting after the ones harness receives may hold anything: an
    error, never blocked."""
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    with mine, theirs:
        for _ in range(20):
            mine.send(b"")
        socket.send_fds(mine, [b""], [folder])
        row = _line(probe, theirs.fileno())
    assert row["outcome"] == "error", row
    assert "still has messages queued" in str(row["detail"]), row


def test_a_connection_waiting_on_a_held_unix_listener_is_accepted(
    probe: Path, tmp_path: Path, folder: int
) -> None:
    """A host client of the launcher's control listener queued a descriptor and hung
    up: accept, then recvmsg, give it. An IP listener's connections are left waiting
    (a socket-activated server's clients)."""
    name = b"\0harness-test-ctl-%d" % os.getpid()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(name)
        listener.listen(4)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(name)
            socket.send_fds(client, [b"x"], [folder])
        row = _line(probe, listener.fileno())
    assert "3:accepted 0:queued 0:dir" in str(row["evidence"]), row
    assert _rows(row)["3:accepted 0:queued 0"][3] == str(tmp_path), row
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(4)
        with socket.create_connection(tcp.getsockname()):
            row = _line(probe, tcp.fileno())
            tcp.settimeout(5)
            tcp.accept()[0].close()  # still there
    assert row["outcome"] == "blocked" and "accepted" not in str(row["evidence"]), row


def _nothing_written(read_end: int) -> None:
    os.set_blocking(read_end, False)
    with pytest.raises(BlockingIOError):
        os.read(read_end, 1)


def test_a_held_pipe_whose_reader_is_outside_is_no_pass(probe: Path) -> None:
    """The write end of a pipe the test reads (a host shell fed through it): what reads
    it harness cannot tell, an error; nothing is written. One nobody reads, or whose
    reader the probe holds itself, reaches nothing."""
    r, w = os.pipe()
    try:
        row = _line(probe, w)
        assert row["outcome"] == "error", row
        assert str(row["detail"]) == (
            "descriptor 3 held at start is the write end of a pipe whose reader is outside the"
            " sandbox: what reads it harness cannot tell"
        )
        _nothing_written(r)
        hand = f'exec 3<&{w} 4<&{r} {w}<&- {r}<&-; exec "$@"'
        run = [str(probe), "run", "--tag", "t", "--token", TOKEN, "--sentinel", "/x"]
        done = subprocess.run(
            ["bash", "-c", hand, "bash", *run, "filesystem-confinement"],
            capture_output=True,
            text=True,
            pass_fds=(r, w),
        )
        both = next(json.loads(x) for x in done.stdout.splitlines() if "fs-inherited-fds" in x)
        assert both["outcome"] == "blocked", both
        os.close(r)
        r = -1
        assert _line(probe, w)["outcome"] == "blocked"
    finally:
        os.close(w)
        if r >= 0:
            os.close(r)


@needs_root
@needs_unshare
def test_a_pipe_read_inside_its_own_pid_namespace_is_its_own(probe: Path) -> None:
    """In a PID namespace of its own, a reader among its processes is the sandbox's; one
    outside it is not."""
    wrap = ("unshare", "--pid", "--fork", "--mount-proc")
    inside = 'exec 3> >(exec cat >/dev/null); exec "$@"'
    run = [str(probe), "run", "--tag", "t", "--token", TOKEN, "--sentinel", "/x"]
    done = subprocess.run(
        [*wrap, "bash", "-c", inside, "bash", *run, "filesystem-confinement"],
        capture_output=True,
        text=True,
    )
    row = next(json.loads(x) for x in done.stdout.splitlines() if "fs-inherited-fds" in x)
    assert row["outcome"] == "blocked" and "3:pipe" in str(row["evidence"]), row
    r, w = os.pipe()
    try:
        row = _line(probe, w, wrap=wrap)
        assert row["outcome"] == "error" and "write end of a pipe" in str(row["detail"]), row
        _nothing_written(r)
    finally:
        os.close(r)
        os.close(w)


def _on_a_terminal(probe: Path, wrap: tuple[str, ...] = ()) -> dict[str, object]:
    """The probe as the operator's shell would start it: in the session of a new
    terminal, its controlling one, on its standard input. Nothing may be typed."""
    master, slave = os.openpty()

    def session() -> None:
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    try:
        row = _line(probe, wrap=wrap, stdin=slave, preexec=session)
        st = os.fstat(slave)
        found = row["evidence"]["ctty"][0]  # type: ignore[index]
        assert found[0] == "fd 0" and found[3] == f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
        assert found[4] == os.ttyname(slave), row
        _nothing_written(slave)  # nothing typed into its input
        return row
    finally:
        os.close(slave)
        os.close(master)


def test_a_controlling_terminal_is_reported_and_nothing_typed(probe: Path) -> None:
    """Its session, where it was found, the devpts it lies on, and what TIOCSTI needs;
    the judge places it. Without a controlling terminal (harness's own way of starting
    a probe), nothing is reported."""
    row = _on_a_terminal(probe)
    found = row["evidence"]["ctty"][0]  # type: ignore[index]
    assert found[1] not in ("", "0") and found[2] == "initial" and found[5] == "/dev/pts", row
    assert found[6] in ("0", "1", "absent") and found[7] in ("0", "1"), row
    alone = _line(probe, preexec=os.setsid)
    assert "ctty" not in alone["evidence"], alone  # type: ignore[operator]


@needs_root
@needs_unshare
def test_a_session_led_from_outside_its_pid_namespace_is_told(probe: Path) -> None:
    """bwrap without --new-session: the session's leader is outside the workload's PID
    namespace, and getsid says 0."""
    row = _on_a_terminal(probe, ("unshare", "--pid", "--fork", "--mount-proc"))
    found = row["evidence"]["ctty"][0]  # type: ignore[index]
    assert found[1:3] == ["0", "own"], row
