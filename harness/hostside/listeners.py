"""The host's own unix listeners (issue 38): listed once per host, in the host's
network namespace, and handed to every cell's probe less those its policy lets the
workload change. From inside, a connect to one of them is an egress route, and a
privilege route where the listener is a container runtime, an init or a bus: the
probe's `unix-host` line names the process that owns it.

With them, the host's TCP listeners, on any of its addresses: a probe that
stands in the host's network namespace (a co-located sandbox) lists them itself (one
started after this listing too) and asks each to relay to the canary (`tcp-proxy`),
less those this listing names as the SSH daemons' (a connection that never
authenticates is penalised by newer OpenSSH, per source address) and a harness
canary's (`--host-tcp-skip`)."""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from harness.errors import HarnessError
from harness.hostside.base import CellSetup, Fixture, HostSetup
from harness.hostside.scripts import script
from harness.policy.models import within
from harness.transport import Transport

log = logging.getLogger(__name__)
TIMEOUT = 30.0
LIST = script("unix-listeners.sh")
# At most this many go to one probe (its option is one line each).
MAX_LISTENERS = 256
# The host's TCP listeners a probe in a namespace of its own asks, at most (more: the
# line "..." tells it, and its tcp-proxy line is no proof unless one escaped); its UDP
# sockets likewise (udp-relay).
MAX_HOST_TCP = 8
# Another harness run's canary (and this run's: `unix-abstract` tries it).
CANARY_PREFIX = "@harness-canary-"
DEVICES = re.compile(r"\d+:\d+(,\d+:\d+)*")
NAMESPACES = re.compile(r"ns \d+ \d+ \d+ [0-9a-f-]+ [!-~]+")


@dataclass(frozen=True, slots=True)
class Listener:
    """One listening unix socket of the host, as the listing script prints it."""

    kind: str  # s: stream, q: seqpacket, d: a datagram socket bound to a path
    file: str  # the socket file's DEV:INO ("0:0": abstract, or unknown)
    pid: int
    comm: str
    fspath: str  # the file's path within its filesystem ("-": unknown, abstract)
    name: str  # a path, or "@" and the abstract name

    @property
    def line(self) -> str:
        return f"{self.kind} {self.file} {self.pid} {self.comm} {self.fspath} {self.name}"


# Never asked to relay: newer OpenSSH penalises a source whose connections never
# authenticate (PerSourcePenalties), and loopback is every local user's source.
SSH_DAEMONS = frozenset({"sshd", "sshd-session", "sshd-auth"})


@dataclass(frozen=True, slots=True)
class TcpListener:
    """One listening TCP socket of the host's network namespace."""

    address: str  # as the probe names it: "127.0.0.1:631", "[::1]:631", "[::]:22"
    pid: int
    comm: str
    parent: str = "-"  # the holder's parent's command
    arg1: str = "-"  # the holder's first argument


def _tcp_address(hex_addr: str, hex_port: str) -> str | None:
    """/proc/net/tcp's "0100007F:0277" as "127.0.0.1:631" (each 32-bit word in the
    kernel's byte order; a v4-mapped address as its IPv4 one, as the probe names it)."""
    try:
        words = range(0, len(hex_addr), 8)
        raw = b"".join(int(hex_addr[i : i + 8], 16).to_bytes(4, "little") for i in words)
        ip = ipaddress.ip_address(raw) if len(raw) in (4, 16) else None
        port = int(hex_port, 16)
    except ValueError:
        return None
    if ip is None or not 0 < port < 65536:
        return None
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return f"[{ip}]:{port}" if ip.version == 6 else f"{ip}:{port}"


@dataclass(frozen=True, slots=True)
class HostListeners:
    """What the listing found: the host's namespace inodes (net, pid, mnt), boot id
    and kernel release, its filesystems and its listeners, or why it could not be
    read."""

    namespaces: str = ""
    devices: str = ""  # MAJ:MIN,... of the host's own filesystems
    listeners: tuple[Listener, ...] = ()
    tcp: tuple[TcpListener, ...] = ()
    udp: tuple[TcpListener, ...] = ()  # bound, not connected: the same fields
    error: str | None = None


def parse_listing(text: str) -> HostListeners:
    """The listing script's output; a line it cannot read is left out."""
    namespaces, devices, found = "", "", []
    ports: dict[str, list[TcpListener]] = {"t": [], "u": []}
    for line in text.splitlines():
        parts = line.split(" ", 5)
        if parts[0] in ports and len(parts) == 6 and parts[2].isdigit() and ":" in parts[1]:
            address, seen = _tcp_address(*parts[1].split(":", 1)), ports[parts[0]]
            if address and address not in (t.address for t in seen):
                seen.append(TcpListener(address, int(parts[2]), *parts[3:]))
        elif NAMESPACES.fullmatch(line):
            namespaces = line[3:]
        elif parts[0] == "devs" and len(parts) == 2 and DEVICES.fullmatch(parts[1]):
            devices = parts[1]
        elif (
            len(parts) == 6
            and parts[0] in ("s", "q", "d")
            and parts[2].isdigit()
            and parts[5][:1] in ("/", "@")
            and " " not in parts[5]
        ):
            found.append(Listener(parts[0], parts[1], int(parts[2]), *parts[3:]))
    return HostListeners(namespaces, devices, tuple(found), tuple(ports["t"]), tuple(ports["u"]))


async def list_listeners(transport: Transport) -> HostListeners:
    """The host's listeners, or an empty listing that says why."""
    try:
        done = await transport.run(["sh", "-c", LIST, "harness-unix"], timeout=TIMEOUT)
    except HarnessError as exc:
        return HostListeners(error=f"unix listeners not listed: {exc}")
    if not done.ok:
        why = done.stderr.strip().splitlines()[-1:] or [f"exit {done.exit_status}"]
        return HostListeners(error=f"unix listeners not listed: {why[0][:200]}")
    return parse_listing(done.stdout)


def offered(listing: HostListeners, cell: CellSetup) -> list[Listener]:
    """The listeners a cell's probe tries: not another run's canary, nor one in a
    folder the cell may change (its allowed folder, its policy's read-write grants:
    a connect is a write to the socket file)."""
    policy = cell.runtime.spec.policy
    writable = [*(policy.writable if policy else ()), *filter(None, [cell.paths.allowed])]
    return [
        lst
        for lst in listing.listeners
        if not lst.name.startswith(CANARY_PREFIX)
        and not any(within(lst.name, w) for w in writable if lst.name.startswith("/"))
    ][:MAX_LISTENERS]


def skipped_tcp(listing: HostListeners, canary_comm: str) -> list[TcpListener]:
    """The TCP listeners a probe in the host's network namespace never asks to relay:
    an SSH daemon's own (held by the daemon, not by a session under it: a port a
    session forwards, `ssh -R` or `-D`, is a relay like any other), and a harness
    canary's (this build's, started as `canary`: its listeners log what they are
    sent)."""
    return [
        t
        for t in listing.tcp
        if (t.comm in SSH_DAEMONS and t.parent not in SSH_DAEMONS)
        or (t.comm == canary_comm and t.arg1 == "canary")
    ]


def offered_tcp(listing: HostListeners, canary_comm: str) -> list[TcpListener]:
    """The host's TCP listeners a probe in a network namespace of its own asks to relay
    (at the host's addresses it can reach, probe's proxies.c): those bound beyond
    loopback, held by a process the host can name (a holder out of its view is no
    service of the host's to judge), less those it never asks (skipped_tcp) and any
    harness canary's, of whatever build (bisect's runs start other builds': their
    listeners log what they are sent, an arrival no attempt explains)."""
    skip = {t.address for t in skipped_tcp(listing, canary_comm)}
    return [
        t
        for t in listing.tcp
        if t.pid > 0
        and t.arg1 != "canary"
        and t.address not in skip
        and not t.address.startswith(("127.", "[::1]:"))
    ]


def offered_udp(listing: HostListeners) -> list[TcpListener]:
    """The host's UDP sockets a probe in a network namespace of its own sends the
    marked datagram to (a shipper on the host aimed anywhere relays it; probe's
    hostudp.c): bound beyond loopback, held by a process the host can name, none a
    harness canary's (of any build: what they log would be an unexplained arrival)."""
    return [
        u
        for u in listing.udp
        if u.pid > 0 and u.arg1 != "canary" and not u.address.startswith(("127.", "[::1]:"))
    ]


class HostListenersFixture(Fixture):
    """The host's unix, TCP and UDP listeners, listed once per host."""

    def __init__(self) -> None:
        self.listing = HostListeners()
        self.canary_comm = ""

    async def start(self, host: HostSetup) -> None:
        self.canary_comm = PurePosixPath(host.state.probe_path).name[:15]
        self.listing = await list_listeners(host.transport)
        if self.listing.error:
            log.warning("%s: %s", host.transport.host, self.listing.error)

    def manifest(self) -> dict[str, object]:
        found = self.listing
        return {
            "unix_listeners": {"count": len(found.listeners), "error": found.error},
            "tcp_listeners": {"count": len(found.tcp)},
            "udp_listeners": {"count": len(found.udp)},
        }

    def probe_args(self, cell: CellSetup) -> Sequence[str]:
        """The listeners, the host's namespaces, and where the sandbox may write (a
        socket there is the workload's to use)."""
        policy = cell.runtime.spec.policy
        granted = [*(policy.writable if policy else ())]
        if cell.paths.allowed:
            inside = cell.runtime.inside(cell.paths.allowed, role="allowed", cell_id=cell.cell_id)
            granted.append(inside)
        args = ["--host-unix", "\n".join(lst.line for lst in offered(self.listing, cell))]
        if not self.listing.error:  # without a listing, the probe asks none of the host's
            skip = skipped_tcp(self.listing, self.canary_comm)
            args += ["--host-tcp-skip", "\n".join(t.address for t in skip)]
            reach = [t.address for t in offered_tcp(self.listing, self.canary_comm)]
            more = ["..."] if len(reach) > MAX_HOST_TCP else []  # the probe: no proof
            args += ["--host-tcp", "\n".join([*reach[:MAX_HOST_TCP], *more])]
            shippers = [u.address for u in offered_udp(self.listing)]
            more = ["..."] if len(shippers) > MAX_HOST_TCP else []
            args += ["--host-udp", "\n".join([*shippers[:MAX_HOST_TCP], *more])]
        if self.listing.namespaces:
            args += ["--host-ns", self.listing.namespaces]
        if self.listing.devices:
            args += ["--host-devs", self.listing.devices]
        return [*args, "--unix-granted", "\n".join(granted)]
