"""The probe's egress command line for tests that stand the canary in a network
namespace of their own: every option the egress scenario needs, aimed at that
canary (its IPv4 address on one port), the rest at loopback where nothing listens."""

from __future__ import annotations

import base64
import contextlib
import os
import socket
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Callable

from harness.probe.build import build_probe

# A cell's tag as a run's cells have them (`harness-RUNID-SERIAL`), of a run that never
# is: a run sharing this host takes what these tests' sweeps send its canary for
# another run's, not for an arrival nothing explains (judge/arrivals.py).
TAG = "harness-00000000-00001"

# `unshare` for a probe run unsandboxed as root in a network namespace of its own (add
# "-n"): in a PID namespace (and mount namespace, for its /proc) where only the test's
# own processes are in view. Else held-fds takes the sockets of every host process (the
# CI runner's, a database's) with pidfd_getfd and writes its line into their
# connections, and setns enters the host's network through /proc/<pid>/ns/net.
ALONE = ("unshare", "-p", "-f", "--mount-proc")


def egress_argv(canary: str, port: int, canary6: str = "::1") -> list[str]:
    """`probe run ... egress-confinement` against `canary`:`port` (and `canary6` on
    the same port, for the lines that try IPv6), with the host's
    namespaces (net first) as harness hands them: the probe may change routes, rules
    or a firewall only where it shows it stands elsewhere."""
    host_ns = ",".join(str(os.stat(f"/proc/self/ns/{k}").st_ino) for k in ("net", "pid", "mnt"))
    return [
        str(build_probe().path), "run", "--tag", TAG, "--nonce", "n1",
        "--resolver-ranges", "127.0.0.0/8", "--denied-name", "denied.example",
        "--resolver", "127.0.0.1:53", "--canary-tcp", f"{canary}:{port}",
        "--alt-dns", "127.0.0.1:5353", "--doh", "127.0.0.1:443", "--canary4", canary,
        "--canary6", canary6, "--high-port", "40000", "--allowed-tcp", "127.0.0.1:1",
        "--check-timeout-ms", "2000", "--host-ns", host_ns, "egress-confinement",
    ]  # fmt: skip


def canary_script(address: str, port: int = 9) -> str:
    """A stand-in canary (`python -c`): listens on `address`:`port` (IPv4 or IPv6),
    prints "up", and answers HARNESS with the nonce n1."""
    family = "socket.AF_INET6" if ":" in address else "socket.AF_INET"
    return f"""import socket
s = socket.socket({family})
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("{address}", {port}))
s.listen(16)
print("up", flush=True)
while True:
    c, _ = s.accept()
    with c:
        c.settimeout(2)
        try:
            if c.recv(256).startswith(b"HARNESS "):
                c.sendall(b"NONCE n1\\n")
        except OSError:
            pass
"""


def stand_in_proxy(sock: socket.socket) -> None:
    """Serve `sock` (bound, unix or TCP) as a proxy to the canary would answer: an HTTP
    CONNECT with 200, then the HARNESS line with the nonce n1. A daemon thread; closing
    the socket ends it."""
    sock.listen(8)

    def serve() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(3)
                try:
                    if conn.recv(512).startswith(b"CONNECT "):
                        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                        if conn.recv(512).startswith(b"HARNESS "):
                            conn.sendall(b"NONCE n1\n")
                except OSError:
                    pass

    threading.Thread(target=serve, daemon=True).start()


def run_beside(code: str, name: str) -> subprocess.CompletedProcess[str]:
    """The probe's egress run (`egress_argv`, canary 127.0.0.1:9) in a network namespace
    of its own (`unshare -n`, loopback up), with `code` (python -c, which prints "up"
    once it listens) started there first: a sidecar of the test's own on that
    namespace's loopback. Its log is /tmp/harness-NAME-PID.log, removed after."""
    script = (
        'ip link set lo up && "$PY" -c "$CODE" > "$LOG" 2>&1 & '
        'while ! grep -q up "$LOG" 2>/dev/null; do sleep 0.05; done; "$@"'
    )
    env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
        "PY": sys.executable,
        "CODE": code,
        "LOG": f"/tmp/harness-{name}-{os.getpid()}.log",
    }
    try:
        return subprocess.run(
            [*ALONE, "-n", "sh", "-c", script, "sh", *egress_argv("127.0.0.1", 9)],
            capture_output=True, text=True, timeout=120, check=False, env=env,
        )  # fmt: skip
    finally:
        if os.path.exists(env["LOG"]):
            os.unlink(env["LOG"])


# A veth from the probe's namespace (unshare -n; v0, `$NEAR`) to a second namespace
# the script makes (v1, `$FAR`), both ends up, where `$CODE` listens (python -c, "up" once it does);
# `$ROUTE` an IPv6 route of the probe's side (`$ROUTE4` an IPv4 one), `$RESOLV` a
# resolv.conf bound over /etc/resolv.conf (a mount namespace of its own). Both
# namespaces go with the script.
ACROSS = """set -e
ns=$NS far=
trap 'kill $far 2>/dev/null; ip netns del "$ns" 2>/dev/null' EXIT
ip link set lo up
ip netns add "$ns"
ip link add v0 type veth peer name v1 netns "$ns"
ip addr add $NEAR dev v0 nodad
ip link set v0 up
ip -n "$ns" addr add $FAR dev v1 nodad
ip -n "$ns" link set v1 up
ip -n "$ns" link set lo up
# Until the kernel's link watch marks both ends up, their queue drops what is sent
# (a datagram is sent once; TCP's SYN would be sent again).
up() { ip "$@" | grep -q "state UP"; }
until up -o link show dev v0 && up -n "$ns" -o link show dev v1; do sleep 0.05; done
if [ -n "$ROUTE" ]; then ip -6 route add $ROUTE; fi
if [ -n "$ROUTE4" ]; then ip route add $ROUTE4; fi
if [ -n "$RESOLV" ]; then mount --bind "$RESOLV" /etc/resolv.conf; fi
ip netns exec "$ns" "$PY" -c "$CODE" > "$LOG" 2>&1 &
far=$!
while ! grep -q up "$LOG"; do sleep 0.05; done
set +e
"$@"
"""


def run_across(
    code: str,
    near: str,
    far: str,
    argv: list[str],
    *,
    route: str = "",
    resolv: str = "",
    route4: str = "",
) -> subprocess.CompletedProcess[str]:
    """`argv` (the probe's egress run) in a network namespace of its own linked by a veth
    to a second one the script makes, where `code` listens (the host's end of the
    sandbox's link, `far`; the probe's end `near`, both "ADDR/LEN"). Root: the second
    namespace is `ip netns`'s, removed at the end with the first."""
    env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PY": sys.executable, "CODE": code,
        "NEAR": near, "FAR": far, "ROUTE": route, "ROUTE4": route4, "RESOLV": resolv,
        "LOG": f"/tmp/harness-across-{os.getpid()}.log", "NS": f"harness-link-test-{os.getpid()}",
    }  # fmt: skip
    try:
        return subprocess.run(
            [*ALONE, "-n", "sh", "-c", ACROSS, "sh", *argv],
            capture_output=True, text=True, timeout=120, check=False, env=env,
        )  # fmt: skip
    finally:  # the script's trap, where it was killed first: the listener, the namespace
        pids = subprocess.run(
            ["ip", "netns", "pids", env["NS"]], capture_output=True, text=True, check=False
        )
        for pid in pids.stdout.split():
            with contextlib.suppress(OSError):
                os.kill(int(pid), 9)
        subprocess.run(["ip", "netns", "del", env["NS"]], capture_output=True, check=False)
        if os.path.exists(env["LOG"]):
            os.unlink(env["LOG"])


def unhurried(argv: list[str], ms: int = 6000) -> list[str]:
    """`argv` with the check's time raised to `ms`: a datagram's first hop across a link
    just made waits for the neighbour's address, and the sweep sends it once."""
    at = argv.index("--check-timeout-ms")
    return [*argv[: at + 1], str(ms), *argv[at + 2 :]]


def far_listener(kind: str, address: str, port: int, serve: str) -> str:
    """The code (python -c) of a listener at `address`:`port` (IPv6, "fe80::1%v1" with a
    link), served by `serve` (a function of tests.probe's, "module:name"), printing up."""
    module, name = serve.split(":")
    host, _, link = address.partition("%")
    return f"""import socket, sys, time
sys.path.insert(0, {os.getcwd()!r})
from {module} import {name}
s = socket.socket(socket.AF_INET6, socket.{kind})
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(({host!r}, {port}, 0, {f"socket.if_nametoindex({link!r})" if link else "0"}))
{name}(s)
print("up", flush=True)
time.sleep(120)
"""


def _exactly(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n and (chunk := conn.recv(n - len(data))):
        data += chunk
    return data


def _head(conn: socket.socket, first: bytes = b"") -> bytes:
    """An HTTP request's or answer's head, through its blank line."""
    data = first
    while b"\r\n\r\n" not in data and len(data) < 8192 and (chunk := conn.recv(1024)):
        data += chunk
    return data


def login_proxy(sock: socket.socket, user: str, password: str, *, socks_only: bool = False) -> None:
    """`stand_in_proxy` for a client that logs in alone: HTTP CONNECT with Basic
    Proxy-Authorization (else 407), or SOCKS5 username/password (RFC 1929; else method
    0xFF). socks_only: an HTTP request is closed on, as a SOCKS5 server does."""
    sock.listen(8)
    basic = b"Basic " + base64.b64encode(f"{user}:{password}".encode())

    def one(conn: socket.socket) -> None:
        first = conn.recv(1)
        if first == b"\x05":
            methods = _exactly(conn, _exactly(conn, 1)[0])
            if 2 not in methods:
                conn.sendall(b"\x05\xff")
                return
            conn.sendall(b"\x05\x02")
            name = _exactly(conn, _exactly(conn, 2)[1])
            secret = _exactly(conn, _exactly(conn, 1)[0])
            if (name, secret) != (user.encode(), password.encode()):
                conn.sendall(b"\x01\x01")
                return
            conn.sendall(b"\x01\x00")
            _exactly(conn, 10)  # the connect request (IPv4)
            conn.sendall(b"\x05\x00\x00\x01" + bytes(6))
        elif socks_only:
            return
        else:
            lines = _head(conn, first).split(b"\r\n")
            if not any(
                ln.lower().startswith(b"proxy-authorization:") and ln[20:].strip() == basic
                for ln in lines
            ):
                conn.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n")
                return
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if conn.recv(512).startswith(b"HARNESS "):
            conn.sendall(b"NONCE n1\n")

    _serve(sock, one)


def forward_proxy(sock: socket.socket, ports: dict[int, int] | None = None) -> None:
    """Serve `sock` as a plain forward HTTP proxy: `GET http://host:port/path HTTP/1.1`
    sent on in origin form, an HTTP answer handed back (anything else: 502, as squid);
    CONNECT refused (405). ports: the only ports let out, each to the port it maps to
    (a stand-in for a canary answering at every port); any other gets 403."""
    sock.listen(8)

    def one(conn: socket.socket) -> None:
        head = _head(conn)
        method, uri, version = head.split(b"\r\n", 1)[0].decode().split(" ")
        if method == "CONNECT":
            conn.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        url = urllib.parse.urlsplit(uri)
        port = url.port or 80
        if ports is not None and port not in ports:
            conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return
        rest = head.split(b"\r\n", 1)[1]
        with socket.create_connection((url.hostname, (ports or {}).get(port, port)), 3) as out:
            out.sendall(f"{method} {url.path} {version}\r\n".encode() + rest)
            answer = b"".join(iter(lambda: out.recv(4096), b""))
        relayed = answer.startswith(b"HTTP/1.")  # an answer not HTTP's is no answer
        conn.sendall(answer if relayed else b"HTTP/1.1 502 Bad Gateway\r\n\r\n")

    _serve(sock, one)


def _serve(sock: socket.socket, one: Callable[[socket.socket], None]) -> None:
    """Each connection to `sock` served by `one`, on a daemon thread of its own (the probe
    asks one relay several ways at once); closing `sock` ends it."""

    def each(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError, ValueError, IndexError):
            conn.settimeout(3)
            one(conn)

    def serve() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            threading.Thread(target=each, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
