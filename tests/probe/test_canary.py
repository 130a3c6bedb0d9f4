"""The canary's daemon mode, run for real on loopback: `pid=N` only once it listens,
its log in a file, its session its own; a canary that cannot listen says why on
stderr with exit 86 and leaves nothing running."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from harness.fixtures.canary import NOT_READY
from harness.probe.build import build_probe
from tests.lab import free_port


def _canary(probe: Path, port: int, log: Path) -> list[str]:
    return [str(probe), "canary", "--tcp", f"127.0.0.1:{port}", "--nonce", "n0nce",
            "--daemon", str(log)]  # fmt: skip


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def probe() -> Path:
    return build_probe().path


def test_pid_is_printed_once_the_daemon_listens(probe: Path, tmp_path: Path) -> None:
    port, log = free_port("127.0.0.1"), tmp_path / "canary.log"
    done = subprocess.run(_canary(probe, port, log), capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.strip().removeprefix("pid="))
    try:
        assert os.getsid(pid) == pid  # its own session: the command's clean-up misses it
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:  # no wait needed
            conn.sendall(b"HARNESS t c\n")
            assert conn.recv(100).startswith(b"NONCE n0nce")
        deadline = time.monotonic() + 5
        while '"event":"tcp"' not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.02)
        events = [json.loads(line) for line in log.read_text().splitlines()]
        assert events[0] == {"event": "ready", "pid": pid}
        assert events[1]["line"] == "HARNESS t c"
    finally:
        os.kill(pid, signal.SIGKILL)


def test_a_canary_that_cannot_listen_says_why(probe: Path, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        log = tmp_path / "canary.log"
        done = subprocess.run(_canary(probe, port, log), capture_output=True, text=True, timeout=20)
    assert done.returncode == NOT_READY and done.stdout == ""
    fatal = json.loads(done.stderr.strip().splitlines()[-1])
    assert fatal["event"] == "fatal" and "Address in use" in fatal["detail"]
    assert not any(_alive(int(p)) for p in _pids_logging(log))


def test_a_log_that_cannot_be_written_is_reported(probe: Path, tmp_path: Path) -> None:
    log = tmp_path / "missing-folder" / "canary.log"
    done = subprocess.run(
        _canary(probe, free_port("127.0.0.1"), log), capture_output=True, text=True, timeout=20
    )
    assert done.returncode == NOT_READY
    assert f"canary failed before writing {log}" in done.stderr


def _pids_logging(log: Path) -> list[str]:
    found = subprocess.run(["pgrep", "-f", str(log)], capture_output=True, text=True).stdout
    return found.split()


def test_ipv6_and_udp_sweep_listeners_and_a_taken_port(probe: Path, tmp_path: Path) -> None:
    """On IPv6 loopback: a UDP sweep port answers a datagram with the nonce and logs its
    line; a sweep port already taken is logged as unbound, and the canary still starts."""
    log = tmp_path / "canary.log"
    udp = _free_udp6()
    with socket.socket(socket.AF_INET6) as taken:
        taken.bind(("::1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        argv = [str(probe), "canary", "--tcp", f"[::1]:{free_port('127.0.0.1')}",
                "--sweep-udp", f"[::1]:{udp}", "--sweep-tcp", f"[::1]:{busy}",
                "--nonce", "n0nce", "--daemon", str(log)]  # fmt: skip
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.strip().removeprefix("pid="))
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
            s.settimeout(5)
            s.sendto(b"HARNESS t udp6-123\n", ("::1", udp))
            assert s.recv(100).startswith(b"NONCE n0nce")
        events = [json.loads(line) for line in log.read_text().splitlines()]
        assert {"event": "unbound", "proto": "tcp", "listen": f"[::1]:{busy}",
                "error": "Address in use"} in events  # fmt: skip
        udp_events = [e for e in events if e["event"] == "udp"]
        assert udp_events[0]["line"] == "HARNESS t udp6-123"
        assert udp_events[0]["listen"] == f"[::1]:{udp}"
    finally:
        os.kill(pid, signal.SIGKILL)


def _free_udp6() -> int:
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
        s.bind(("::1", 0))
        return int(s.getsockname()[1])
