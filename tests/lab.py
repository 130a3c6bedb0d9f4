"""Real test infrastructure: OpenSSH sshd instances on loopback addresses.

Each instance has its own host key, config and port; the client key and a
known_hosts file are generated per session. Nothing here is mocked.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def require_tool(name: str) -> str:
    """Skip when a tool is missing, unless CI is set: then a missing tool fails."""
    path = shutil.which(name) or (SSHD if name == "sshd" and os.path.exists(SSHD) else None)
    if path:
        return path
    if os.environ.get("CI"):
        pytest.fail(f"{name} is required under CI but is not installed")
    pytest.skip(f"{name} is not installed")


def free_port(address: str) -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


def keygen(path: Path, comment: str) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
    )
    return Path(f"{path}.pub").read_text().strip()


@dataclass
class Sshd:
    """One running sshd on a loopback address."""

    name: str
    address: str
    port: int
    host_pub: str
    process: subprocess.Popen[bytes]
    log: Path

    def known_hosts_line(self) -> str:
        kind, key = self.host_pub.split()[:2]
        return f"[{self.address}]:{self.port} {kind} {key}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_sshd(
    root: Path, *, name: str, address: str, authorized: Path, port: int | None = None
) -> Sshd:
    """Start sshd in the foreground (-D) and wait until it accepts connections."""
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    folder = root / name
    folder.mkdir(parents=True)
    hostkey = folder / "host_key"
    host_pub = keygen(hostkey, f"host-{name}")
    port = port or free_port(address)
    config = folder / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"ListenAddress {address}:{port}",
                f"HostKey {hostkey}",
                f"PidFile {folder / 'sshd.pid'}",
                f"AuthorizedKeysFile {authorized}",
                "PermitRootLogin prohibit-password",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "StrictModes no",
                "MaxSessions 20",
                "MaxStartups 100:30:200",
                "Subsystem sftp internal-sftp",
                "LogLevel ERROR",
                "",
            ]
        )
    )
    log = folder / "sshd.log"
    with open(log, "wb") as log_file:  # the child keeps its own copy of the fd
        process = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=log_file
        )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd {name} exited: {log.read_text()}")
        try:
            with socket.create_connection((address, port), timeout=0.5) as s:
                if s.recv(4).startswith(b"SSH-"):
                    break
        except OSError:
            time.sleep(0.05)
    else:
        process.kill()
        raise RuntimeError(f"sshd {name} did not start: {log.read_text()}")
    return Sshd(name=name, address=address, port=port, host_pub=host_pub, process=process, log=log)


class CuttableProxy:
    """A TCP proxy on loopback that a test can cut: every open connection is
    closed at once, as a network failure would, while the listener stays up."""

    def __init__(self, address: str, target: tuple[str, int]) -> None:
        import threading

        self.server = socket.create_server((address, 0))
        self.address = address
        self.port = int(self.server.getsockname()[1])
        self.target = target
        self.conns: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            with self._lock:
                self.conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        with self._lock:
            for conn in self.conns:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                    conn.close()
                except OSError:
                    pass
            self.conns.clear()

    def close(self) -> None:
        self.cut()
        self.server.close()


class SilentServer:
    """Accepts TCP connections and never says a word (not even an SSH banner)."""

    def __init__(self, address: str) -> None:
        import threading

        self.server = socket.create_server((address, 0))
        self.port = int(self.server.getsockname()[1])
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self) -> None:
        for conn in self.held:
            conn.close()
        self.server.close()
