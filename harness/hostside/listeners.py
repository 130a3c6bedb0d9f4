"""The host's own unix listeners (issue 38): listed once per host, in the host's
network namespace, and handed to every cell's probe less those its policy lets the
workload change. From inside, a connect to one of them is an egress route, and a
privilege route where the listener is a container runtime, an init or a bus: the
probe's `unix-host` line names the process that owns it."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class HostListeners:
    """What the listing found: the host's namespace inodes (net, pid, mnt), boot id
    and kernel release, its filesystems and its listeners, or why it could not be
    read."""

    namespaces: str = ""
    devices: str = ""  # MAJ:MIN,... of the host's own filesystems
    listeners: tuple[Listener, ...] = ()
    error: str | None = None


def parse_listing(text: str) -> HostListeners:
    """The listing script's output; a line it cannot read is left out."""
    namespaces, devices, found = "", "", []
    for line in text.splitlines():
        parts = line.split(" ", 5)
        if NAMESPACES.fullmatch(line):
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
    return HostListeners(namespaces, devices, tuple(found))


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


class HostListenersFixture(Fixture):
    """The host's unix listeners, listed once per host."""

    def __init__(self) -> None:
        self.listing = HostListeners()

    async def start(self, host: HostSetup) -> None:
        self.listing = await list_listeners(host.transport)
        if self.listing.error:
            log.warning("%s: %s", host.transport.host, self.listing.error)

    def manifest(self) -> dict[str, object]:
        found = self.listing
        return {"unix_listeners": {"count": len(found.listeners), "error": found.error}}

    def probe_args(self, cell: CellSetup) -> Sequence[str]:
        """The listeners, the host's namespaces, and where the sandbox may write (a
        socket there is the workload's to use)."""
        policy = cell.runtime.spec.policy
        granted = [*(policy.writable if policy else ())]
        if cell.paths.allowed:
            inside = cell.runtime.inside(cell.paths.allowed, role="allowed", cell_id=cell.cell_id)
            granted.append(inside)
        args = ["--host-unix", "\n".join(lst.line for lst in offered(self.listing, cell))]
        if self.listing.namespaces:
            args += ["--host-ns", self.listing.namespaces]
        if self.listing.devices:
            args += ["--host-devs", self.listing.devices]
        return [*args, "--unix-granted", "\n".join(granted)]
