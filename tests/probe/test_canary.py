"""The canary's daemon mode, run for real on loopback: `pid=N` only once it listens,
its log in a file, its session its own; a canary that cannot listen says why on
stderr with exit 86 and leaves nothing running."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import resource
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from harness.hostside.canary_setup import NOT_READY
from harness.probe.build import build_probe
from tests.lab import free_port, require_tool


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


class _MqAttr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long),
                ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long),
                ("pad", ctypes.c_long * 4)]  # fmt: skip


_LIBC = ctypes.CDLL(None, use_errno=True)


def _mq_open(name: str, flags: int, attr: _MqAttr | None = None) -> int:
    """POSIX mq_open (no binding in the standard library): the descriptor, or -errno."""
    fd = _LIBC.mq_open(name.encode(), flags, 0o600, ctypes.byref(attr) if attr else None)
    return int(fd) if fd >= 0 else -ctypes.get_errno()


def _tag(n: int) -> str:
    return f"t{os.getpid()}-{n}"


def _msgqueue_rlimit() -> None:  # the kernel's default for every user: 800 KiB
    resource.setrlimit(resource.RLIMIT_MSGQUEUE, (819200, 819200))


def test_a_dozen_canaries_each_make_their_queues_and_remove_them(
    probe: Path, tmp_path: Path
) -> None:
    """What failed CI: every canary's POSIX queue took ~80 KiB of its owner's 800 KiB
    RLIMIT_MSGQUEUE, so from the tenth canary on one host (or fewer, with queues left
    by killed ones) none could be made and every sandbox's ipc-posix-mq check was
    inconclusive. A dozen at once now all bind, and each removes its own at SIGTERM."""
    pids, names = [], [f"/harness-test-{_tag(n)}" for n in range(12)]
    try:
        for n, name in enumerate(names):
            log = tmp_path / f"canary{n}.log"
            argv = [str(probe), "canary", "--tcp", f"127.0.0.1:{free_port('127.0.0.1')}",
                    "--sysv", hex(0x7A000000 + os.getpid() % 0x10000 * 16 + n), "--mqueue", name,
                    "--nonce", "n0nce", "--daemon", str(log)]  # fmt: skip
            done = subprocess.run(argv, capture_output=True, text=True, timeout=20,
                                  preexec_fn=_msgqueue_rlimit)  # fmt: skip
            assert done.returncode == 0, done.stderr
            pids.append(int(done.stdout.strip().removeprefix("pid=")))
            assert '"unbound"' not in log.read_text(), log.read_text()
        assert all(_mq_open(name, os.O_WRONLY) >= 0 for name in names)
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [_mq_open(name, os.O_WRONLY) for name in names] == [-errno.ENOENT] * len(names)


def test_a_full_queue_is_an_error_never_blocked(probe: Path, tmp_path: Path) -> None:
    """A queue crowded by other cells' lines is a busy receiver, not a fence: the
    sweep waits for room, then reports an error (inconclusive), never `blocked`
    (which would certify a sandbox that shares the host's IPC namespace)."""
    name = f"/harness-test-full-{_tag(0)}"
    attr = _MqAttr(maxmsg=1, msgsize=256)
    fd = _mq_open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, attr)
    assert fd >= 0, os.strerror(-fd)
    try:
        assert _LIBC.mq_send(fd, b"x", 1, 0) == 0
        argv = [str(probe), "run", "--tag", "t", "--nonce", "n", "--denied-name", "d.test",
                "--canary-tcp", "127.0.0.1:9", "--high-port", "40000", "--canary-mq", name,
                "egress-confinement"]  # fmt: skip
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        (mq,) = [x for x in lines if x.get("id") == "ipc-posix-mq"]
        assert mq["outcome"] == "error" and "stayed full" in mq["detail"], mq
        buf = ctypes.create_string_buffer(256)
        assert _LIBC.mq_receive(fd, buf, 256, None) == 1  # room again: the next one lands
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
        (mq,) = [json.loads(x) for x in done.stdout.splitlines() if '"ipc-posix-mq"' in x]
        assert mq["outcome"] == "succeeded", mq
        assert _LIBC.mq_receive(fd, buf, 256, None) > 0 and b"HARNESS t ipc-posix-mq" in buf.value
    finally:
        os.close(fd)
        _LIBC.mq_unlink(name.encode())


def _listen_capture(
    probe: Path, log: Path, *addresses: str, pre: list[str] | None = None
) -> tuple[int, bool]:
    """A canary in the host's namespace, capturing what is sent to `addresses`: its
    pid, and whether it said its capture runs."""
    argv = [*(pre or []), str(probe), "canary", "--tcp", f"{addresses[0]}:{free_port('127.0.0.1')}",
            *[x for a in addresses for x in ("--capture-to", a)],
            "--nonce", "n0nce", "--daemon", str(log)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split()
    return int(lines[0].removeprefix("pid=")), lines[1:] == ["capture=on"]


def _send(address: str, proto: int, payload: bytes, port: int = 0) -> None:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    kind = socket.SOCK_RAW if proto == 253 else socket.SOCK_DGRAM
    with socket.socket(family, kind, proto) as s:
        s.sendto(payload, (address, port))


def test_a_listen_capture_logs_only_marked_or_unusual_packets_to_its_addresses(
    probe: Path, tmp_path: Path
) -> None:
    """In the host's namespace (lo included) the capture sees UDP-Lite and raw IP sent
    to the canary's addresses, marked or not, and marked ICMP; a marked datagram to
    another address never reaches its log, nor any TCP or UDP at all: on the host's
    address that is its services' traffic (an allowed supervisor's first leg carries
    the workload's marked bytes), and the canary's own listeners log what reaches them."""
    mine, other = f"127.{100 + os.getpid() % 100}.{os.getpid() % 250}.7", "127.0.0.1"
    log, tag = tmp_path / "canary.log", _tag(0)
    pid, captures = _listen_capture(probe, log, mine, "::1")
    assert captures, log.read_text()
    try:
        for address in (mine, other):
            _send(address, 136, f"HARNESS {tag} udplite4\n".encode(), 40001)  # UDP-Lite
            _send(address, 253, f"HARNESS {tag} rawip4\n".encode())
            _send(address, 17, b"an ordinary datagram\n", 40002)
            with contextlib.suppress(OSError):  # an ordinary connection, refused
                socket.create_connection((address, free_port(mine)), timeout=1).close()
        _send(mine, 253, b"no marker\n")
        _send(mine, 17, f"HARNESS {tag} udp4\n".encode(), 40003)  # to a service there
        with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) as ping:
            ping.sendto(
                b"\x08\x00\x00\x00\x00\x01\x00\x01" + f"HARNESS {tag} icmp4\n".encode(), (mine, 0)
            )
            ping.sendto(b"\x08\x00\x00\x00\x00\x01\x00\x02" + b"an ordinary ping", (mine, 0))
        _send("::1", 253, f"HARNESS {tag} rawip6\n".encode())
        deadline = time.monotonic() + 5
        while f"{tag} rawip6" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        os.kill(pid, signal.SIGKILL)
    packets = [e for e in map(json.loads, log.read_text().splitlines()) if e["event"] == "packet"]
    assert all(p["dst"] in (mine, "::1") for p in packets), packets
    assert not [p for p in packets if p["proto"] in ("tcp", "udp")], packets
    assert all(p.get("mark") for p in packets if p["proto"] in ("icmp", "icmp6"))
    seen = {(p["proto"], p["dst"], p.get("mark", "")) for p in packets}
    assert {
        ("udplite", mine, f"HARNESS.{tag}.udplite4."),
        ("ip253", mine, f"HARNESS.{tag}.rawip4."),
        ("ip253", mine, ""),
        ("icmp", mine, f"HARNESS.{tag}.icmp4."),
        ("ip253", "::1", f"HARNESS.{tag}.rawip6."),
    } <= seen
    assert len([p for p in packets if tag in p.get("mark", "")]) == 4  # each once: no OUTGOING


def test_a_canary_that_cannot_capture_says_so_and_still_runs(probe: Path, tmp_path: Path) -> None:
    """Without CAP_NET_RAW there is no packet socket: the canary logs why, starts all
    the same, and does not claim the capture ("capture=on"), so nothing relies on it."""
    require_tool("setpriv")
    log = tmp_path / "canary.log"
    pid, captures = _listen_capture(
        probe, log, "127.0.0.1", pre=["setpriv", "--bounding-set", "-net_raw"]
    )
    os.kill(pid, signal.SIGKILL)
    assert not captures
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert {"event": "unbound", "proto": "capture", "error": "Operation not permitted"} in events
    assert events[-1]["event"] == "ready"


def test_an_http_request_is_answered_in_http_its_login_withheld(
    probe: Path, tmp_path: Path
) -> None:
    """A forward proxy's request (an absolute-URI GET, sent on in origin form, its head
    in two parts) is answered once its head is in, in HTTP (a proxy relays nothing
    else), the nonce its body; a login a relay passed on as it came is not logged."""
    port, log = free_port("127.0.0.1"), tmp_path / "canary.log"
    done = subprocess.run(_canary(probe, port, log), capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.strip().removeprefix("pid="))
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(b"GET /harness/t/tcp-proxy HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            time.sleep(0.2)
            conn.sendall(b"Proxy-Authorization: Basic YnVpbGQ6czNjcmV0\r\n\r\n")
            answer = b"".join(iter(lambda: conn.recv(4096), b""))
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 ") and body == b"NONCE n0nce\n", answer
        assert f"Content-Length: {len(body)}".encode() in head
        deadline = time.monotonic() + 5
        while '"event":"tcp"' not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.02)
        text = log.read_text()
        tcp = [json.loads(line) for line in text.splitlines() if '"event":"tcp"' in line]
        assert tcp[0]["line"] == "GET /harness/t/tcp-proxy HTTP/1.1"
        assert "YnVpbGQ6czNjcmV0" not in text and "Proxy-Authorization:" in tcp[0]["data"]
    finally:
        os.kill(pid, signal.SIGKILL)
