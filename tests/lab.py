"""Real test infrastructure: OpenSSH sshd instances on loopback addresses.

Each instance has its own host key, config and port; the client key and a
known_hosts file are generated per session. Nothing here is mocked.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
from pathlib import Path

import pytest

from tests.sshd import SSHD, Sshd, keygen, spawn_sshd

__all__ = ["Sshd", "free_port", "keygen", "require_tool", "start_sshd"]


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


def start_sshd(
    root: Path,
    *,
    name: str,
    address: str,
    authorized: Path,
    port: int | None = None,
    sftp: bool = True,
) -> Sshd:
    """A test host: sshd with a host key of its own, in `root/name`, on a free port
    unless one is given; `sftp=False` leaves out the SFTP subsystem, as some hosts do."""
    folder = root / name
    folder.mkdir(parents=True)
    hostkey = folder / "host_key"
    host_pub = keygen(hostkey, f"host-{name}")
    return spawn_sshd(
        folder,
        name=name,
        address=address,
        port=port or free_port(address),
        host_keys=[hostkey],
        authorized=authorized,
        host_pub=host_pub,
        sftp=sftp,
    )


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
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target)
            except OSError:  # the target is gone (its test ended): this client with it
                client.close()
                continue
            with self._lock:
                self.conns += [client, upstream]
                if self._closed:  # accepted while closing: nobody else will close these
                    self._cut_locked()
                    return
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
            self._cut_locked()

    def _cut_locked(self) -> None:
        for conn in self.conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()
        self.conns.clear()

    def close(self) -> None:
        """Stop accepting first, then close every connection, even one accepted while
        closing: a socket left to the garbage collector fails a later test with a
        ResourceWarning (the suite runs with warnings as errors)."""
        with self._lock:
            self._closed = True
        self.server.close()
        self.cut()


class SilentServer:
    """Accepts TCP connections and never says a word (not even an SSH banner)."""

    def __init__(self, address: str) -> None:
        import threading

        self.server = socket.create_server((address, 0))
        self.port = int(self.server.getsockname()[1])
        self.held: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with self._lock:
                if self._closed:
                    conn.close()
                    return
                self.held.append(conn)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for conn in self.held:
                conn.close()
            self.held.clear()
        self.server.close()
