#!/usr/bin/env python3
"""harness's reference egress supervisor: a readable example for people who build
supervisors, not a security product.

It is the only way out of a sandbox's network namespace. harness makes the namespace
with nothing in it but loopback and two routes that make *every* address local
(`local 0.0.0.0/0` and `local ::/0` in the local table), so a connection to any
destination lands on this process's listeners inside the namespace, and the
accepted socket's own address is the destination the sandbox asked for
(transparent interception without netfilter). A port nobody listens on is refused
by the namespace's own stack: nothing leaves. Listeners are made inside the
namespace; connections to allowed destinations are made from the host's namespace,
where this process runs.

What it serves:
- transparent TCP on the `--tcp-port` ports, to any address;
- HTTP CONNECT on `--connect-port` (127.0.0.1 inside the namespace);
- DNS (UDP and TCP) on `--dns-port`: names in `--allow-name` are forwarded to
  `--upstream-dns`, every other query is answered REFUSED.

Policy: an allow-list of `HOST:PORT` destinations (`--allow`), each for every
binary or, as `HOST:PORT=BINARY,...`, for those binaries alone: a BINARY is a path
(as the process sees its own executable) or `sha256:HEX` (the file's content).
Everything else is denied (accepted, then closed without a byte); so is a
connection to a destination allowed per binary whose binary cannot be named.
`--policy-file` holds more rules, one a line, read at start and again on every
SIGHUP (a policy reload): a rule gone from it is revoked, for new connections and
for the established ones it allowed, which are cut before the reload is
acknowledged in `PATH.applied`. One
decision record per connection or query is appended to `--records` as a JSON line:

    {"time": ..., "proto": "tcp", "src_port": 40112, "src": "10.251.0.2:40112",
     "dst": "10.251.0.2:8081", "decision": "allow", "upstream": "10.251.0.1:51234",
     "binary": {"path": "/probe", "sha256": "...", "pid": 123}}

Attribution: the client socket is found in the namespace's TCP tables (by the
connection's two ends), its owner through `/proc/*/fd`, the binary through
`/proc/PID/exe` (path, and the sha256 of the file itself); a socket held by processes
of more than one program names none of them. Where the runtime hides
the process, the record says so instead of naming the wrong one:
`"identity": "unavailable", "reason": "endpoint-only: ..."`. Under gVisor the socket
belongs to the sentry (`runsc-sandbox`), not to the program inside; with gVisor's own
network stack no host socket exists at all.

`--fault` makes a deliberately broken supervisor for harness's mutants:
`wrong-binary` names the sandbox's launcher (the nearest ancestor running
another program), `no-record` writes nothing,
`allow-all` ignores the policy, `any-binary` ignores its binaries (a destination
allowed to one binary is allowed to all), `fail-open` leaves a helper behind, outside
its own session, that relays straight to the destination once the supervisor is gone,
`keep-established` applies a reload to new connections only, `cache-identity` names the
first binary it identified for every later connection (its policy follows the name),
`record-around` relays through a second upstream, `by-comm`, `by-argv0` and
`by-basename` decide by a program's name (`--known-as`), `first-holder` names the
first process holding the socket, `record-argv0` names the program its argv[0] names.

Killed, this supervisor fails closed: its listeners and every relayed socket die
with its one process, and the namespace's `local` routes still catch every
destination, so new connections are refused and held ones are cut.

Standard library only (Python 3.8+), so harness can stage it to a host as one file.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import hashlib
import ipaddress
import json
import os
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable

CLONE_NEWNET = 0x40000000
IP_PKTINFO = getattr(socket, "IP_PKTINFO", 8)  # Linux; older Pythons lack the name
FAULTS = (
    "none",
    "wrong-binary",
    "no-record",
    "allow-all",
    "any-binary",
    "fail-open",
    "keep-established",
    "cache-identity",
    "record-around",
    # Faults that name a program by less than its file, as a hurried supervisor does:
    # by the process's name (comm, what an eBPF hook reads for free), by its argv[0],
    # or by its file's base name. A program of the workload's passes for an allowed one.
    "by-comm",
    "by-argv0",
    "by-basename",
    # Names the first process that holds the socket: another program started with it
    # inherited, the first one holding it meanwhile, connects under the first's name.
    "first-holder",
    # Names the program its argv[0] names (its path, the sha256 of the file there):
    # what a process calls itself, not the file it runs.
    "record-argv0",
)
NAMED_BY = ("by-comm", "by-argv0", "by-basename")
# Host processes that are a sandbox's kernel: the socket is theirs, not the program's.
SANDBOX_KERNELS = {
    "runsc-sandbox": "gVisor's sentry",
    "qemu-system-x86_64": "a VMM",
    "qemu-system-aarch64": "a VMM",
    "firecracker": "a VMM",
}
IO_TIMEOUT = 10.0
SETTLE_TIMEOUT = 3.0  # the longest a reload waits for connections being decided
READY = "ready"


# -- namespaces ------------------------------------------------------------------


def setns(path: str) -> None:
    """Move the calling thread into the network namespace at `path`."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns {path}: {os.strerror(err)}")
    finally:
        os.close(fd)


class Namespace:
    """The sandbox's namespace, whose TCP tables are read through a thread that
    lives in it (/proc/PID/task/TID/net follows the thread's namespace)."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.tables = "/proc/self/net"
        if path:
            ready = threading.Event()
            tid: list[int] = []

            def live_there() -> None:
                setns(path)
                tid.append(threading.get_native_id())
                ready.set()
                threading.Event().wait()

            threading.Thread(target=live_there, daemon=True).start()
            ready.wait(10)
            if not tid:
                raise SystemExit(f"supervisor: cannot enter {path}")
            self.tables = f"/proc/{os.getpid()}/task/{tid[0]}/net"


def make_socket(path: str | None, family: int, kind: int) -> socket.socket:
    """A socket made inside the namespace at `path` (it stays there once made)."""
    if not path:
        return socket.socket(family, kind)
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        setns(path)
        return socket.socket(family, kind)
    finally:
        ctypes.CDLL(None, use_errno=True).setns(home, CLONE_NEWNET)
        os.close(home)


# -- attribution -----------------------------------------------------------------


def _hex_addr(text: str) -> tuple[str, int]:
    """An address from /proc/net/tcp{,6}: host-order 32-bit words in hex, then the port."""
    addr, port = text.split(":")
    raw = bytes.fromhex(addr)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    ip = ipaddress.ip_address(words)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return str(ip), int(port, 16)


def _norm(ip: str) -> str:
    found = ipaddress.ip_address(ip.split("%")[0])
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped:
        found = found.ipv4_mapped
    return str(found)


def socket_inode(tables: str, client: tuple[str, int], server: tuple[str, int]) -> str | None:
    """The inode of the client's socket: local end `client`, remote end `server`."""
    want = ((_norm(client[0]), client[1]), (_norm(server[0]), server[1]))
    for name in ("tcp", "tcp6"):
        try:
            with open(f"{tables}/{name}") as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            parts = row.split()
            if len(parts) < 10 or parts[3] == "0A":  # 0A: a listener
                continue
            if (_hex_addr(parts[1]), _hex_addr(parts[2])) == want and parts[9] != "0":
                return parts[9]
    return None


def socket_holders(inode: str) -> list[int]:
    """Every process holding the socket, by pid order."""
    target = f"socket:[{inode}]"
    found = []
    for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit()):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    found.append(pid)
                    break
            except OSError:
                continue
    return found


def _program(pid: int) -> tuple[int, int] | None:
    """The file a process runs, as (device, inode)."""
    try:
        st = os.stat(f"/proc/{pid}/exe")
    except OSError:
        return None
    return st.st_dev, st.st_ino


def shared_by(holders: list[int]) -> str | None:
    """Why a socket held by processes of more than one program names none of them: any
    holder may have made the connection (one that started another with the socket
    inherited, and holds it meanwhile, would otherwise lend it its name)."""
    # (a holder gone before its file was read is no second program: the others decide)
    programs = {p for p in map(_program, holders) if p is not None}
    if len(programs) < 2:
        return None
    paths = []
    for pid in holders:
        try:
            paths.append(os.readlink(f"/proc/{pid}/exe"))
        except OSError:
            paths.append(f"pid {pid}")
    shown = ", ".join(sorted(set(paths))[:4])
    return f"the socket is held by processes of {len(programs)} programs ({shown})"


def _argv(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return [a.decode("utf-8", "replace") for a in fh.read().split(b"\0") if a]
    except OSError:
        return []


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _launcher(pid: int) -> int:
    """The nearest ancestor running another program (the fault `wrong-binary`: a
    supervisor that looks up the wrong process names the sandbox's launcher)."""
    try:
        mine = os.stat(f"/proc/{pid}/exe")
    except OSError:
        return pid
    at = pid
    for _ in range(64):
        parent = _ppid(at)
        if not parent:
            return pid
        try:
            theirs = os.stat(f"/proc/{parent}/exe")
        except OSError:
            return parent
        if (theirs.st_dev, theirs.st_ino) != (mine.st_dev, mine.st_ino):
            return parent
        at = parent
    return pid


def binary_of(pid: int) -> dict[str, object] | None:
    """Path and sha256 of the program a process runs. The hash is of the file the
    process executes (opened through /proc/PID/exe), whatever its path outside."""
    try:
        path = os.readlink(f"/proc/{pid}/exe")
        digest = hashlib.sha256()
        with open(f"/proc/{pid}/exe", "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return None
    return {"path": path, "sha256": digest.hexdigest(), "pid": pid}


def argv0_binary(pid: int) -> dict[str, object] | None:
    """The fault record-argv0: the program a process's argv[0] names, as its own root
    and working folder resolve it, in place of the file it runs."""
    argv = _argv(pid)
    if not argv:
        return None
    where = f"/proc/{pid}/root" if argv[0].startswith("/") else f"/proc/{pid}/cwd"
    try:
        with open(f"{where}/{argv[0].lstrip('/')}", "rb") as fh:
            digest = hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None
    return {"path": argv[0], "sha256": digest, "pid": pid}


def name_of(binary: dict[str, object], fault: str) -> str:
    """The name a faulty supervisor knows a program by (the faults by-comm, by-argv0
    and by-basename): never its file, which alone tells one program from another."""
    pid = binary.get("pid")
    if fault == "by-comm":
        try:
            with open(f"/proc/{pid}/comm") as fh:
                return fh.read().strip()
        except OSError:
            return ""
    if fault == "by-argv0":
        argv = _argv(int(str(pid))) if str(pid).isdigit() else []
        return os.path.basename(argv[0]) if argv else ""
    return os.path.basename(str(binary.get("path")))


def hidden_by(pid: int) -> str | None:
    """Why the owner is not the program itself: it is a sandbox's kernel."""
    argv = _argv(pid)
    name = os.path.basename(argv[0]) if argv else ""
    if name in SANDBOX_KERNELS:
        return f"the socket belongs to {SANDBOX_KERNELS[name]} ({name}, pid {pid})"
    if name.startswith("runsc") and "boot" in argv:
        return f"the socket belongs to gVisor's sentry ({name} boot, pid {pid})"
    # A command line that says nothing (unreadable, or read while the process renames
    # itself): a process running runsc's own binary is gVisor's, never a workload's.
    try:
        exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return None
    if exe.startswith("runsc"):
        return f"the socket belongs to a process of gVisor's ({exe}, pid {pid})"
    return None


def identify(
    tables: str, client: tuple[str, int], server: tuple[str, int], fault: str
) -> dict[str, object]:
    """The record's identity fields: `binary`, or `identity: unavailable` with why."""
    inode = socket_inode(tables, client, server)
    if inode is None:
        why = "no host socket for this connection (the runtime has its own network stack)"
        return {"identity": "unavailable", "reason": f"endpoint-only: {why}"}
    holders = socket_holders(inode)
    if not holders:
        return {"identity": "unavailable", "reason": "endpoint-only: no process holds the socket"}
    shared = None if fault == "first-holder" else shared_by(holders)
    if shared:
        return {"identity": "unavailable", "reason": shared}
    pid = holders[0]
    if fault == "wrong-binary":
        pid = _launcher(pid)
    else:
        hidden = hidden_by(pid)
        if hidden:
            return {"identity": "unavailable", "reason": f"endpoint-only: {hidden}"}
    binary = argv0_binary(pid) if fault == "record-argv0" else binary_of(pid)
    if binary is None:
        return {"identity": "unavailable", "reason": f"endpoint-only: /proc/{pid}/exe unreadable"}
    return {"binary": binary}


# -- records and policy ----------------------------------------------------------


def endpoint(ip: str, port: int) -> str:
    ip = _norm(ip)
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def read_rules(path: str) -> list[str]:
    """The policy file's rules: one `HOST:PORT[=BINARY,...]` a line; blank lines
    and `#` comments are skipped; a missing file holds none."""
    try:
        with open(path) as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        return []
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


class Supervisor:
    def __init__(self, args: argparse.Namespace, ns: Namespace) -> None:
        self.fixed = list(args.allow)
        self.policy_file = args.policy_file
        # destination -> the binaries it is allowed to (None: every binary)
        self.allow = self._rules(self.fixed + self._reloadable())
        # Relays open now, with what allowed them: a reload cuts those it revokes.
        self.relays: dict[int, tuple[str, dict[str, object], socket.socket, socket.socket]] = {}
        self.policy_lock = threading.Lock()
        # Connections accepted but not yet decided: a reload waits for them, so that
        # every connection the sandbox opened before it is an established one.
        self.undecided: set[int] = set()
        self.settled = threading.Condition()
        self.allow_names = {n.lower().rstrip(".") for n in args.allow_name}
        self.upstream_dns = args.upstream_dns
        self.fault = args.fault
        self.known_as = args.known_as  # the allowed program's name, to the faults by-*
        self.ns = ns
        self.records = os.open(args.records, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self.lock = threading.Lock()
        self.first: dict[str, object] | None = None  # the fault `cache-identity`'s

    def _reloadable(self) -> list[str]:
        return read_rules(self.policy_file) if self.policy_file else []

    @classmethod
    def _rules(cls, rules: list[str]) -> dict[str, set[str] | None]:
        allow: dict[str, set[str] | None] = {}
        for rule in rules:
            dst, _, binaries = rule.partition("=")
            names = {b for b in binaries.split(",") if b} if binaries else None
            had = allow.get(cls._canon(dst), set())
            allow[cls._canon(dst)] = None if had is None or names is None else had | names
        return allow

    def reload(self) -> str:
        """Read the policy file again; cut every established relay the new policy
        no longer allows (unless the fault `keep-established`); say what was done."""
        rules = self.fixed + self._reloadable()
        cut = 0
        with self.settled:
            self.settled.wait_for(lambda: not self.undecided, timeout=SETTLE_TIMEOUT)
        with self.policy_lock:
            self.allow = self._rules(rules)
            for dst, identity, client, upstream in list(self.relays.values()):
                if self.fault == "keep-established" or self.allowed(dst, identity):
                    continue
                for s in (client, upstream):
                    with contextlib.suppress(OSError):
                        s.shutdown(socket.SHUT_RDWR)
                cut += 1
        return f"policy reloaded: {len(rules)} rules; cut {cut} established connections"

    def admit(self, client: socket.socket) -> None:
        """Called as a connection is accepted: undecided until `settle`."""
        with self.settled:
            self.undecided.add(id(client))

    def settle(self, client: socket.socket) -> None:
        with self.settled:
            self.undecided.discard(id(client))
            self.settled.notify_all()

    @staticmethod
    def _canon(text: str) -> str:
        host, _, port = text.rpartition(":")
        return endpoint(host.strip("[]"), int(port))

    def allowed(self, dst: str, identity: dict[str, object]) -> bool:
        """Is `dst` allowed to the binary `identity` names?"""
        if self.fault == "allow-all":
            return True
        if dst not in self.allow:
            return False
        binaries = self.allow[dst]
        if binaries is None or self.fault == "any-binary":
            return True
        binary = identity.get("binary")
        if not isinstance(binary, dict):
            return False  # a binary that cannot be named is none of those allowed
        if self.fault in NAMED_BY:  # the name alone, the program's first 15 bytes for comm
            name = self.known_as[:15] if self.fault == "by-comm" else self.known_as
            return bool(name) and name_of(binary, self.fault) == name
        return bool({str(binary.get("path")), f"sha256:{binary.get('sha256')}"} & binaries)

    def record(self, rec: dict[str, object]) -> None:
        if self.fault == "no-record":
            return
        line = json.dumps({"time": round(time.time(), 3), **rec}, sort_keys=True) + "\n"
        with self.lock:
            os.write(self.records, line.encode())

    # transparent TCP and HTTP CONNECT share this: decide, record, relay.
    def handle(
        self, client: socket.socket, dst_host: str, dst_port: int, proto: str, head: bytes = b""
    ) -> None:
        try:
            upstream = self._decide(client, dst_host, dst_port, proto)
        finally:
            self.settle(client)
        if upstream is None:
            return
        try:
            if proto == "connect":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if head:
                upstream.sendall(head)
            threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
            _pipe(client, upstream)
        finally:
            with self.policy_lock:
                self.relays.pop(id(client), None)

    def _decide(
        self, client: socket.socket, dst_host: str, dst_port: int, proto: str
    ) -> socket.socket | None:
        """Decide, record, and connect upstream: the upstream socket of a relay now
        registered (a reload can cut it), or None once the client is refused."""
        peer = client.getpeername()[:2]
        server = client.getsockname()[:2]
        dst = endpoint(dst_host, dst_port)
        rec: dict[str, object] = {
            "proto": proto,
            "src": endpoint(peer[0], peer[1]),
            "src_port": peer[1],
            "dst": dst,
        }
        # Identify first: the client may close as soon as it has its answer.
        identity = identify(self.ns.tables, (peer[0], peer[1]), (server[0], server[1]), self.fault)
        if self.fault == "cache-identity" and "binary" in identity:
            with self.lock:
                self.first = self.first or identity
                identity = self.first
        rec.update(identity)
        if not self.allowed(dst, identity):
            rec["decision"] = "deny"
            self.record(rec)
            if proto == "connect":
                client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            client.close()
            return None
        try:
            upstream = socket.create_connection((dst_host, dst_port), timeout=IO_TIMEOUT)
        except OSError as exc:
            rec.update(decision="allow", error=f"upstream: {exc.strerror or exc}")
            self.record(rec)
            client.close()
            return None
        with self.policy_lock:  # a reload since the decision revoked it: never relayed
            still = self.allowed(dst, identity)
            if still:
                self.relays[id(client)] = (dst, identity, client, upstream)
        if not still:
            rec.update(decision="deny", reason="revoked while connecting")
            self.record(rec)
            upstream.close()
            client.close()
            return None
        rec.update(decision="allow", upstream=endpoint(*upstream.getsockname()[:2]))
        self.record(rec)
        if self.fault == "record-around":  # a mutant: the record names one path, bytes take another
            return self._around(client, dst, identity, upstream)
        return upstream

    def _around(
        self, client: socket.socket, dst: str, identity: dict[str, object], named: socket.socket
    ) -> socket.socket | None:
        """The fault `record-around`: relay through a second upstream connection, not
        the one the record names (which closes empty)."""
        try:
            hidden = socket.create_connection(named.getpeername()[:2], timeout=IO_TIMEOUT)
        except OSError:
            client.close()
            return None
        finally:
            named.close()
        with self.policy_lock:
            self.relays[id(client)] = (dst, identity, client, hidden)
        return hidden

    def transparent(self, client: socket.socket) -> None:
        host, port = client.getsockname()[:2]
        self.handle(client, _norm(host), port, "tcp")

    def connect_proxy(self, client: socket.socket) -> None:
        try:
            self._connect_proxy(client)
        finally:
            self.settle(client)  # a request that never named a destination

    def _connect_proxy(self, client: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 8192:
            chunk = client.recv(4096)
            if not chunk:
                client.close()
                return
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        words = head.split(b"\r\n", 1)[0].split()
        if len(words) < 2 or words[0] != b"CONNECT":
            client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            client.close()
            return
        host, _, port = words[1].decode("ascii", "replace").rpartition(":")
        try:
            dst_port = int(port)
            dst_host = _norm(host.strip("[]"))
        except ValueError:  # a name: resolving it would be egress of its own
            client.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            client.close()
            return
        self.handle(client, dst_host, dst_port, "connect", rest)

    # DNS: one answer per query; names not allowed are refused, never forwarded.
    def dns_answer(self, query: bytes, src: str, dst: str, proto: str) -> bytes | None:
        name = _qname(query)
        rec: dict[str, object] = {"proto": f"dns/{proto}", "src": src, "dst": dst, "qname": name}
        rec["src_port"] = int(src.rsplit(":", 1)[1])
        listed = name is not None and name.lower().rstrip(".") in self.allow_names
        ok = name is not None and (self.fault == "allow-all" or listed)
        rec["decision"] = "allow" if ok else "deny"
        self.record(rec)
        if not ok or not self.upstream_dns:
            return _refused(query)
        host, _, port = self.upstream_dns.rpartition(":")
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_DGRAM) as out:
            out.settimeout(3)
            try:
                out.sendto(query, (host.strip("[]"), int(port)))
                return out.recv(65535)
            except OSError:
                return _refused(query)

    def dns_udp(self, sock: socket.socket) -> None:
        while True:
            data, anc, _flags, peer = sock.recvmsg(65535, socket.CMSG_SPACE(12))
            local = None
            for level, kind, value in anc:
                if level == socket.IPPROTO_IP and kind == IP_PKTINFO:
                    local = value[4:8]  # ipi_spec_dst: the address the query was sent to
            dst_ip = socket.inet_ntoa(local) if local else sock.getsockname()[0]
            answer = self.dns_answer(
                data, endpoint(*peer[:2]), endpoint(dst_ip, sock.getsockname()[1]), "udp"
            )
            if answer is not None:
                info = struct.pack("=i4s4s", 0, local or bytes(4), bytes(4))
                sock.sendmsg([answer], [(socket.IPPROTO_IP, IP_PKTINFO, info)], 0, peer)

    def dns_tcp(self, client: socket.socket) -> None:
        size = _recv_exact(client, 2)
        query = _recv_exact(client, struct.unpack("!H", size)[0]) if size else b""
        if query:
            peer, local = client.getpeername(), client.getsockname()
            answer = self.dns_answer(query, endpoint(*peer[:2]), endpoint(*local[:2]), "tcp")
            if answer is not None:
                client.sendall(struct.pack("!H", len(answer)) + answer)
        client.close()


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return b""
        data += chunk
    return data


def _qname(query: bytes) -> str | None:
    labels, at = [], 12
    try:
        while query[at]:
            size = query[at]
            if size > 63:
                return None
            labels.append(query[at + 1 : at + 1 + size].decode("ascii", "replace"))
            at += 1 + size
    except IndexError:
        return None
    return ".".join(labels)


def _refused(query: bytes) -> bytes | None:
    if len(query) < 12:
        return None
    flags = 0x8000 | (query[2] & 0x79) << 8 | 0x0005  # QR, opcode and RD kept, REFUSED
    end = 12
    while end < len(query) and query[end]:
        end += 1 + query[end]
    question = query[12 : end + 5]
    qd = 1 if len(question) >= 5 else 0
    return query[:2] + struct.pack("!HHHHH", flags, qd, 0, 0, 0) + (question if qd else b"")


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


def _serve(
    listener: socket.socket,
    fn: Callable[[socket.socket], None],
    admit: Callable[[socket.socket], None] | None = None,
) -> None:
    def one(client: socket.socket) -> None:
        client.settimeout(IO_TIMEOUT)
        try:
            fn(client)
        except OSError:
            client.close()

    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        if admit is not None:
            admit(client)
        threading.Thread(target=one, args=(client,), daemon=True).start()


def _listener(netns: str | None, family: int, kind: int, address: tuple[str, int]) -> socket.socket:
    sock = make_socket(netns, family, kind)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    if kind == socket.SOCK_DGRAM:
        sock.setsockopt(socket.IPPROTO_IP, IP_PKTINFO, 1)
    sock.bind(address)
    if kind == socket.SOCK_STREAM:
        sock.listen(128)
    return sock


# -- the fault `fail-open` ----------------------------------------------------------


def fall_back_when_gone(made: list[tuple[socket.socket, str]]) -> None:
    """The fault `fail-open`: a helper in a session of its own (so killing the
    supervisor's session misses it) that, once the supervisor is gone, serves its
    transparent listeners itself and relays every connection straight to where it
    was going: no policy, no record. A redirect that falls back to a direct route
    when its controller dies looks like this from inside the sandbox."""
    parent = os.getpid()
    if os.fork():
        return
    os.setsid()
    while os.getppid() == parent:
        time.sleep(0.02)

    def direct(client: socket.socket) -> None:
        host, port = client.getsockname()[:2]
        upstream = socket.create_connection((_norm(host), port), timeout=IO_TIMEOUT)
        threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
        _pipe(client, upstream)

    for sock, kind in made:
        if kind == "tcp":
            threading.Thread(target=_serve, args=(sock, direct), daemon=True).start()
    threading.Event().wait()
    os._exit(0)


def main(argv: list[str] | None = None) -> int:
    summary = (__doc__ or "").split("\n\n")[0]
    p = argparse.ArgumentParser(prog="reference-supervisor", description=summary)
    p.add_argument("--netns", help="the sandbox's network namespace (a path); default: this one")
    p.add_argument("--records", required=True, help="append decision records here (JSON lines)")
    p.add_argument("--allow", action="append", default=[], metavar="HOST:PORT[=BINARY,...]")
    p.add_argument("--allow-name", action="append", default=[], metavar="NAME")
    p.add_argument("--policy-file", metavar="PATH", help="more rules, re-read on SIGHUP")
    p.add_argument("--tcp-port", action="append", type=int, default=[], metavar="PORT")
    p.add_argument("--dns-port", type=int, default=0)
    p.add_argument("--upstream-dns", default="", metavar="HOST:PORT")
    p.add_argument("--connect-port", type=int, default=0)
    p.add_argument("--bind", default="::", help="listen address inside the namespace")
    p.add_argument("--fault", choices=FAULTS, default="none")
    p.add_argument(
        "--known-as", default="", metavar="NAME", help="the faults by-*: the allowed program's name"
    )
    p.add_argument("--daemon", metavar="LOG", help="detach once listening; print pid=N")
    args = p.parse_args(argv)

    # Listeners first, in the namespace: once "pid=" (or "ready") is printed they accept.
    family = socket.AF_INET6 if ":" in args.bind else socket.AF_INET
    made: list[tuple[socket.socket, str]] = []
    try:
        for port in sorted(set(args.tcp_port) - {args.dns_port}):
            made.append(
                (_listener(args.netns, family, socket.SOCK_STREAM, (args.bind, port)), "tcp")
            )
        if args.dns_port:
            udp = _listener(
                args.netns, socket.AF_INET, socket.SOCK_DGRAM, ("0.0.0.0", args.dns_port)
            )
            made.append((udp, "dns-udp"))
            tcp = _listener(args.netns, family, socket.SOCK_STREAM, (args.bind, args.dns_port))
            made.append((tcp, "dns-tcp"))
        if args.connect_port:
            proxy = _listener(
                args.netns, socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", args.connect_port)
            )
            made.append((proxy, "connect"))
    except OSError as exc:
        print(f"supervisor: cannot listen: {exc}", file=sys.stderr)
        return 1
    tell = -1
    if args.daemon:
        r, tell = os.pipe()
        child = os.fork()
        if child:
            os.close(tell)
            pid = os.read(r, 64).decode().strip()
            if not pid:
                print("supervisor: the daemon did not start", file=sys.stderr)
                return 1
            print(f"pid={pid}", flush=True)
            return 0
        os.close(r)
        os.setsid()
        log = os.open(args.daemon, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        for fd, src in ((0, null), (1, log), (2, log)):
            os.dup2(src, fd)
    if args.fault == "fail-open":
        fall_back_when_gone(made)
    # Threads start only now: a fork keeps none. SIGHUP is blocked in every thread
    # (they inherit the mask) and taken by the main thread alone, with sigwait.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP})
    sup = Supervisor(args, Namespace(args.netns))
    for sock, kind in made:
        if kind == "dns-udp":
            threading.Thread(target=sup.dns_udp, args=(sock,), daemon=True).start()
            continue
        fn = {"tcp": sup.transparent, "dns-tcp": sup.dns_tcp, "connect": sup.connect_proxy}[kind]
        admit = sup.admit if kind in ("tcp", "connect") else None
        threading.Thread(target=_serve, args=(sock, fn, admit), daemon=True).start()
    if tell >= 0:
        os.write(tell, f"{os.getpid()}\n".encode())
        os.close(tell)
    else:
        print(READY, flush=True)
    while True:
        signal.sigwait({signal.SIGHUP})
        said = sup.reload()
        if sup.policy_file:  # the acknowledgement a revocation hook waits for
            tmp = f"{sup.policy_file}.applied.tmp"
            with open(tmp, "w") as fh:
                fh.write(said + "\n")
            os.replace(tmp, f"{sup.policy_file}.applied")


if __name__ == "__main__":
    sys.exit(main())
