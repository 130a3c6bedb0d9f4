"""The probe's egress command line for tests that stand the canary in a network
namespace of their own: every option the egress scenario needs, aimed at that
canary (its IPv4 address on one port), the rest at loopback where nothing listens."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

from harness.probe.build import build_probe


def egress_argv(canary: str, port: int, canary6: str = "::1") -> list[str]:
    """`probe run ... egress-confinement` against `canary`:`port` (and `canary6` on
    the same port, for the lines that try IPv6), with the host's
    namespaces (net first) as harness hands them: the probe may change routes, rules
    or a firewall only where it shows it stands elsewhere."""
    host_ns = ",".join(str(os.stat(f"/proc/self/ns/{k}").st_ino) for k in ("net", "pid", "mnt"))
    return [
        str(build_probe().path), "run", "--tag", "t", "--nonce", "n1",
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
            ["unshare", "-n", "sh", "-c", script, "sh", *egress_argv("127.0.0.1", 9)],
            capture_output=True, text=True, timeout=120, check=False, env=env,
        )  # fmt: skip
    finally:
        if os.path.exists(env["LOG"]):
            os.unlink(env["LOG"])
