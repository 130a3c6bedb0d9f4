"""A stand-in egress supervisor for attribution tests, written for the tests.

It accepts connections on a loopback port (the "allowed destination"), works out
which process on this machine owns the client socket (through /proc, as a real
host-side supervisor would), and publishes one decision record per connection
over HTTP, as a JSON array or as JSON lines. Modes let a test make it omit
records, drop the identity, or declare the identity unavailable.

With an `upstream`, it is a forwarding proxy instead (the upstream: the canary's
allowed port, so that harness sees what gets through), and it supports revocation
through its HTTP endpoint: `POST /revoke?dst=IP:PORT` (the allowed destination,
as harness's `revoke` command passes it) refuses new connections and, per
`on_revoke`, cuts the established ones; `POST /restore` forwards again. Both answer
only once in force, as docs/matrix.md asks of a `revoke` command.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import struct
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _socket_inode(local_port: int, remote_port: int) -> str | None:
    """The inode of the TCP socket bound to local_port and connected to remote_port."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                lines = fh.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            local, remote, inode = parts[1], parts[2], parts[9]
            if (
                int(local.rsplit(":", 1)[1], 16) == local_port
                and int(remote.rsplit(":", 1)[1], 16) == remote_port
            ):
                return inode
    return None


def _owner_exe(inode: str) -> tuple[str, bytes] | None:
    """The path and content of the executable of the process holding socket `inode`,
    read through /proc/<pid>/exe (its path may be one only its mount namespace has,
    as a sandboxed probe's /probe is)."""
    target = f"socket:[{inode}]"
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    with open(f"/proc/{pid}/exe", "rb") as fh:
                        return os.readlink(f"/proc/{pid}/exe"), fh.read()
        except OSError:
            continue
    return None


@dataclass
class Supervisor:
    """Allowed-destination listener plus decision-record HTTP endpoint, on loopback."""

    mode: str = "attribute"  # attribute | unavailable | silent | anonymous
    shape: str = "array"  # array | lines
    token: str | None = None
    path: str | None = None  # also append records to this JSON-lines file
    upstream: str | None = None  # IP:PORT: forward each connection there
    on_revoke: str = "cut"  # cut | keep (refuse new ones but keep the established)
    records: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, str]] = field(default_factory=list)
    revocations: list[str] = field(default_factory=list)  # "revoke DST" / "restore"
    revoked: bool = False
    _open: set[socket.socket] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.allowed = f"127.0.0.1:{self.listener.getsockname()[1]}"
        supervisor = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                supervisor.requests.append(dict(self.headers))
                if (
                    supervisor.token
                    and self.headers.get("Authorization") != f"Bearer {supervisor.token}"
                ):
                    self.send_response(401)
                    self.end_headers()
                    return
                if supervisor.shape == "array":
                    body = json.dumps(supervisor.records)
                else:
                    body = "\n".join(json.dumps(r) for r in supervisor.records)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body.encode())

            def do_POST(self) -> None:
                what, _, query = self.path.partition("?")
                if what == "/revoke" and query == f"dst={supervisor.allowed}":
                    supervisor.revoke()
                elif what == "/restore":
                    supervisor.restore()
                else:  # a revocation of something this supervisor does not allow
                    self.send_response(400)
                    self.end_headers()
                    return
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/decisions"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        threading.Thread(target=self._accept, daemon=True).start()

    def revoke(self) -> None:
        """The rule out: new connections refused; established ones cut unless
        `on_revoke` is "keep" (a reload that forgets them: the bug revoke-held sees)."""
        with self._lock:
            self.revoked = True
            self.revocations.append(f"revoke {self.allowed}")
            if self.on_revoke == "cut":
                for conn in self._open:
                    with contextlib.suppress(OSError):
                        conn.shutdown(socket.SHUT_RDWR)

    def restore(self) -> None:
        with self._lock:
            self.revoked = False
            self.revocations.append("restore")

    def _forward(self, conn: socket.socket, peer: tuple[str, int]) -> None:
        """One connection relayed to the upstream, both ways, until either side ends
        or a revocation cuts it."""
        assert self.upstream is not None
        host, port = self.upstream.rsplit(":", 1)
        with self._lock:
            if self.revoked:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.close()  # refused: reset, nothing forwarded
                return
            self._open.add(conn)
        record = {"src_port": peer[1], "dst": self.allowed, "decision": "allow"}
        self.records.append({**record, "upstream": self.upstream})
        try:
            out = socket.create_connection((host, int(port)), timeout=5)
        except OSError:
            with self._lock:
                self._open.discard(conn)
            conn.close()
            return

        def pump(src: socket.socket, dst: socket.socket) -> None:
            try:
                while data := src.recv(4096):
                    dst.sendall(data)
            except OSError:
                pass
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

        back = threading.Thread(target=pump, args=(out, conn), daemon=True)
        back.start()
        pump(conn, out)
        back.join()
        with self._lock:
            self._open.discard(conn)
        conn.close()
        out.close()

    def _accept(self) -> None:
        # Known since the listener was made: a test that ends closes the listener under
        # this thread, and a getsockname() on it then raises in a thread nobody joins.
        port = int(self.allowed.rsplit(":", 1)[1])
        while True:
            try:
                conn, peer = self.listener.accept()
            except OSError:
                return
            if self.upstream is not None:
                threading.Thread(target=self._forward, args=(conn, peer), daemon=True).start()
                continue
            with conn:
                inode = _socket_inode(peer[1], port)
                exe = _owner_exe(inode) if inode else None
                conn.settimeout(2)
                try:
                    conn.recv(256)
                    conn.sendall(b"NONCE not-the-canary\n")
                except OSError:
                    pass
            record: dict[str, Any] = {"src_port": peer[1], "dst": self.allowed, "decision": "allow"}
            if self.mode == "attribute" and exe:
                record["binary"] = {"path": exe[0], "sha256": hashlib.sha256(exe[1]).hexdigest()}
            elif self.mode == "unavailable":
                record["identity"] = "unavailable"
                record["reason"] = "endpoint-only runtime: no process identity"
            if self.mode != "silent":
                self.records.append(record)
                if self.path:
                    with open(self.path, "a") as fh:
                        fh.write(json.dumps(record) + "\n")

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()
        self.listener.close()
