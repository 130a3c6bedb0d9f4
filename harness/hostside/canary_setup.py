"""The egress canary's setup on a host: where it answers (`RunningCanary`), the names
and subnets it takes, its command line, starting it and stopping it.

It must sit where real egress would arrive. In `netns` mode harness builds an
"outside" network namespace on the host, joined by a veth pair, and runs the
probe's canary mode in it (`scripts/canary-up.sh`). The namespace, the veth and the
canary are removed at the end of the run, after every cell on the host has
finished (`scripts/canary-down.sh`).
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import logging
import secrets
from dataclasses import dataclass, field
from typing import Any

import anyio

from harness.errors import CommandError, HarnessError
from harness.hostside.elsewhere import stand_ins
from harness.hostside.lease import MQ_RM
from harness.hostside.scripts import script
from harness.matrix.models import Canary
from harness.transport import Transport

log = logging.getLogger(__name__)
TIMEOUT = 30.0

# The probe's canary exits 86 when its daemon did not report ready (its log then
# on stderr); otherwise it prints "pid=N" once the daemon listens, and a line
# "capture=on" if its listen-mode capture runs (`--capture-to`). No polling.
NOT_READY = 86

# Sweep ports (the probe's egress sweep): TCP and UDP, besides the configured ones.
SWEEP_TCP = (22, 25, 53, 80, 443, 853, 8080, 8443)
SWEEP_UDP = (53, 123, 443)
LEASES = "/run/harness-canary"
# The canary's datagram socket is at its abstract name with this suffix (the probe
# derives it from --canary-unix the same way).
DGRAM_SUFFIX = "-d"
SEQPACKET_SUFFIX = "-q"  # and its seqpacket listener's
# The cloud metadata addresses (EC2's, also GCE's and Azure's IPv4 one): the netns
# canary answers there on the run's high port (NETNS_UP's $18).
METADATA = ("169.254.169.254", "fd00:ec2::254")
# How many candidate subnets one start tries before it gives up (each costs an `ip`
# call under the lock; a range that full has bigger problems).
TRIES = 1024
# Make the namespace and the veth, lease the subnets, start the canary in them.
HOST_STAND_INS = script("host-stand-ins.sh")
NETNS_UP = HOST_STAND_INS + script("canary-up.sh")


def walk(count: int) -> tuple[int, int]:
    """Where a walk over `count` subnets (a power of two) starts, and its step: both
    random, so a run's subnet is any of the range's, and odd, so it visits them all."""
    return secrets.randbelow(count), secrets.randbelow(count) | 1


def subnet_walk(canary: Canary) -> list[str]:
    """NETNS_UP's $6-$16: the addresses asked for, and the walk over each range."""
    want, net4 = "", canary.range4
    if canary.address:
        host = canary.address - 1
        want, net4 = f"{canary.address},{host}", ipaddress.IPv4Network(f"{host}/30", strict=False)
    n4 = net4.num_addresses // 4
    n6 = 1 << (64 - canary.range6.prefixlen)
    top = int(canary.range6.network_address) >> 64
    return [
        want, str(int(net4.network_address)), str(n4), *map(str, walk(n4)),
        str(top >> 32), str(top & 0xFFFFFFFF), str(n6), *map(str, walk(n6)), str(TRIES),
    ]  # fmt: skip


# alive PID: the process runs, and is no zombie (a dead canary taken for a live
# one would make a leaky sandbox look blocked).
ALIVE = script("alive.sh")
# Stop everything `start_canary` started, whatever it got to.
DOWN = MQ_RM + ALIVE + script("stand-in-rules.sh") + script("canary-down.sh")


@dataclass(slots=True)
class RunningCanary:
    """Where the canary answers, and how to read and stop it."""

    address: str
    config: Canary
    nonce: str
    log_path: str
    address6: str = ""
    high_port: int = 0
    pid: str = ""
    netns: str = ""
    host_veth: str = ""
    leases: tuple[str, ...] = ()  # its subnets' lease files (netns mode)
    unix_name: str = ""  # its listener in the host's abstract unix namespace
    sysv_key: str = ""  # its SysV message queue and shared memory in the host's IPC namespace
    mq_name: str = ""  # its POSIX message queue there
    subnet: dict[str, str] = field(default_factory=dict)
    capture: bool = False  # its listen-mode capture runs (netns mode always captures)
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def endpoint(self, port: int) -> str:
        return f"{self.address}:{port}"

    def probe_args(self) -> list[str]:
        c = self.config
        args = [
            "--canary-tcp", self.endpoint(c.tcp_port),
            "--resolver", self.endpoint(c.dns_port),
            "--alt-dns", self.endpoint(c.alt_dns_port),
            "--doh", self.endpoint(c.doh_port),
            "--denied-name", c.denied_name,
            "--nonce", self.nonce,
            "--allowed-tcp", self.endpoint(c.allowed_port),
            "--canary4", self.address,
            "--high-port", str(self.high_port),
            "--resolver-ranges", ",".join(str(r) for r in c.resolver_ranges),
        ]  # fmt: skip
        if self.address6:
            args += ["--canary6", self.address6]
        if self.unix_name:
            args += ["--canary-unix", self.unix_name]
        if self.sysv_key:
            args += ["--canary-sysv", self.sysv_key, "--canary-mq", self.mq_name]
        for option, key in (
            ("--host4", "host4"),
            ("--host6", "host6"),
            ("--meta4", "meta4"),
            ("--meta6", "meta6"),
            ("--elsewhere4", "else4"),
            ("--elsewhere6", "else6"),
            ("--elsewhere4-high", "own4"),
            ("--elsewhere6-high", "own6"),
        ):
            if self.subnet.get(key):
                args += [option, self.subnet[key]]
        return args

    def abilities(self) -> list[str]:
        """What the canary can prove: arrivals on IPv4, on IPv6, on any port and
        protocol, seen by its packet capture (netns mode; listen mode once it said its
        capture runs), at the host's own end of its veth (`hostaddr`; `veth`: behind a link
        of its own, which a frame reaches), at the metadata
        addresses (`metadata`), at stand-ins elsewhere (`elsewhere`; `elsewhere6`, IPv6
        ones; `web`, `web6`: those at 443 and 80 too), and in the host's IPC namespace (`ipc`)."""
        found = ["ipv4", *(["ipv6"] if self.address6 else [])]
        found += ["capture"] if self.config.mode == "netns" or self.capture else []
        found += ["hostaddr", "veth"] if self.subnet.get("host4") else []
        found += ["metadata"] if self.subnet.get("meta4") else []
        found += ["elsewhere"] if self.subnet.get("else4") or self.subnet.get("own4") else []
        found += ["elsewhere6"] if self.subnet.get("else6") or self.subnet.get("own6") else []
        found += ["web"] if self.subnet.get("else4") else []  # stand-ins at 443 and 80 too
        found += ["web6"] if self.subnet.get("else6") else []
        return [*found, *(["ipc"] if self.sysv_key else [])]

    def addresses(self) -> list[str]:
        """Every address an arrival the canary logs may have been sent to."""
        found = [self.address, self.address6]
        found += [self.subnet.get(k, "") for k in ("host4", "host6", "meta4", "meta6")]
        return [a for a in [*found, *self.stand_ins()] if a]

    def stand_ins(self) -> list[str]:
        """The addresses elsewhere the canary took (`[canary] elsewhere`): those picked
        from ranges (`else4`, `else6`: the high port, 443 and 80), then the host's own
        gateways and resolvers (`own4`, `own6`: the high port alone)."""
        keys = ("else4", "else6", "own4", "own6")
        return [a for k in keys for a in self.subnet.get(k, "").split(",") if a]

    def manifest(self) -> dict[str, Any]:
        return {
            "mode": self.config.mode,
            "address": self.address,
            "address6": self.address6 or None,
            "high_port": self.high_port,
            "netns": self.netns or None,
            "unix": f"@{self.unix_name}" if self.unix_name else None,
            "ipc": {"sysv": self.sysv_key, "mqueue": self.mq_name} if self.sysv_key else None,
            "subnet": self.subnet or None,
            "capture": self.config.mode == "netns" or self.capture,
            "error": self.error,
        }


def high_port(canary: Canary) -> int:
    """The sweep's high port, picked per run: no fixed port list can allow it."""
    taken = {canary.tcp_port, canary.allowed_port, canary.dns_port, canary.alt_dns_port}
    return next(p for p in iter(lambda: 30000 + secrets.randbelow(30000), 0) if p not in taken)


def canary_netns(run_id: str, host_index: int) -> str:
    """The canary's namespace on a host: named after the run, unique per host entry."""
    return f"harness-{run_id}-{host_index}"


def canary_unix_name(run_id: str, host_index: int) -> str:
    """The canary's abstract unix name on a host: in the host's own namespace, where
    a sandbox that shares it can reach it (unique per run and host entry)."""
    return f"harness-canary-{run_id}-{host_index}"


def canary_ipc(run_id: str, host_index: int) -> tuple[str, str]:
    """The canary's SysV key (for its message queue and shared memory) and POSIX
    message queue name on a host, in the host's IPC namespace: a sandbox that shares
    it can hand them bytes. Derived from the run, so no fixed key can be singled out."""
    digest = hashlib.sha256(f"harness-ipc-{run_id}-{host_index}".encode()).digest()
    key = int.from_bytes(digest[:4], "big") or 1  # 0 is IPC_PRIVATE
    return f"0x{key:08x}", f"/harness-{run_id}-{host_index}"


def _canary_argv(
    probe: str,
    canary: Canary,
    *,
    v4: str,
    v6: str,
    nonce: str,
    high_port: int,
    unix: str,
    ipc: tuple[str, str],
    hosts: tuple[str, str] = ("", ""),
    metadata: tuple[str, ...] = (),
    capture_to: bool = False,
) -> list[str]:
    """The canary's command line: the configured listeners (which must bind), the
    sweep's ports (which may be taken in listen mode), on each address, its abstract
    unix sockets (stream, datagram, seqpacket), its IPC objects `ipc` (SysV key,
    POSIX queue name), (netns mode) a TCP and a UDP listener on the high port at the
    host's own addresses `hosts`, and (listen mode, `capture_to`) a packet capture of
    what is sent to its addresses (netns mode's capture is NETNS_UP's `--capture`),
    and a TCP and a UDP listener on the high port at each of `metadata`."""
    argv = [
        probe,
        "canary",
        "--unix-abstract",
        unix,
        "--unix-abstract-dgram",
        f"{unix}{DGRAM_SUFFIX}",
        "--unix-abstract-seqpacket",
        f"{unix}{SEQPACKET_SUFFIX}",
    ]
    argv += ["--sysv", ipc[0], "--mqueue", ipc[1]]
    h4, h6 = hosts
    for address in [*([h4] if h4 else []), *([f"[{h6}]"] if h6 else [])]:
        argv += ["--host-tcp", f"{address}:{high_port}", "--host-udp", f"{address}:{high_port}"]
    for address in (f"[{a}]" if ":" in a else a for a in metadata):
        argv += ["--sweep-tcp", f"{address}:{high_port}", "--sweep-udp", f"{address}:{high_port}"]
    fixed_tcp = sorted({canary.tcp_port, canary.allowed_port, canary.doh_port})
    fixed_dns = sorted({canary.dns_port, canary.alt_dns_port})
    for address, host in ((v4, v4), (v6, f"[{v6}]")):
        if not address:
            continue
        argv += [x for port in fixed_tcp for x in ("--tcp", f"{host}:{port}")]
        argv += [x for port in fixed_dns for x in ("--dns", f"{host}:{port}")]
        for port in sorted({*SWEEP_TCP, high_port} - {*fixed_tcp, *fixed_dns, 53}):
            argv += ["--sweep-tcp", f"{host}:{port}"]
        if 53 not in fixed_dns:
            argv += ["--sweep-dns", f"{host}:53"]
        for port in sorted({*SWEEP_UDP, high_port} - {*fixed_dns, 53}):
            argv += ["--sweep-udp", f"{host}:{port}"]
        argv += ["--capture-to", address] if capture_to else []
    return [*argv, "--nonce", nonce, "--answer", v4]


async def start_canary(
    transport: Transport,
    *,
    probe: str,
    workdir: str,
    canary: Canary,
    run_id: str,
    host_index: int,
    nonce: str,
    high_port: int,
    run_lease: str | None = None,
) -> RunningCanary:
    """Start the canary on a host; on failure the returned canary carries `error`.
    With `run_lease` (the run's lease file, `hostside/lease.py`) the canary exits
    once the run's lease ends.
    Cancelled while starting, it is torn down before the cancellation goes on."""
    extra = ["--lease", run_lease] if run_lease else []
    log_path = f"{workdir}/canary-{run_id}-{host_index}.log"
    unix = canary_unix_name(run_id, host_index)
    ipc = canary_ipc(run_id, host_index)
    if canary.mode == "netns":
        else4, else6, words = stand_ins(canary)
        running = RunningCanary("", canary, nonce, log_path, high_port=high_port)
        running.netns = canary_netns(run_id, host_index)
        running.host_veth = f"hv{run_id[:8]}{host_index:02x}"[:15]
        outside_veth = f"hc{run_id[:8]}{host_index:02x}"[:15]
        argv = [
            "sh", "-c", NETNS_UP, "harness-canary",
            running.netns, running.host_veth, outside_veth, log_path, LEASES,
            *subnet_walk(canary), str(high_port), ",".join(METADATA) if canary.metadata else "",
            ",".join(else4), ",".join(else6), " ".join(words),
            *_canary_argv(
                probe,
                canary,
                v4="@A4@",
                v6="@A6@",
                nonce=nonce,
                high_port=high_port,
                unix=unix,
                ipc=ipc,
                hosts=("@H4@", "@H6@"),
                metadata=METADATA if canary.metadata else (),
            ),
            "@E@",  # a listener at each stand-in the script took
            *extra,
        ]  # fmt: skip
    else:
        address = str(canary.address)
        if canary.address is not None and canary.address.is_loopback:
            log.warning(
                "%s: the canary listens on loopback (%s): a namespaced sandbox with a way"
                " out would still look enforced",
                transport.host,
                address,
            )
        address6 = str(canary.address6) if canary.address6 else ""
        running = RunningCanary(address, canary, nonce, log_path, address6, high_port)
        argv = [
            *_canary_argv(
                probe,
                canary,
                v4=address,
                v6=address6,
                nonce=nonce,
                high_port=high_port,
                unix=unix,
                ipc=ipc,
                capture_to=True,
            ),
            *extra, "--daemon", log_path,
        ]  # fmt: skip
    running.sysv_key, running.mq_name = ipc  # for the teardown, whether or not it started
    try:
        done = await transport.run(argv, timeout=TIMEOUT)
    except BaseException:  # cancelled (SIGTERM) or a dropped connection mid-start
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(HarnessError):
                await stop_canary(transport, running)
        raise
    running.unix_name = unix
    for line in done.stdout.splitlines():
        if line.startswith("pid="):
            running.pid = line[4:]
        elif line == "capture=on":
            running.capture = True
        elif line.startswith("subnet="):
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            running.leases = tuple(  # named as the shell spelled the subnets
                f"{LEASES}/{fields[key].rsplit('/', 1)[0]}" for key in ("subnet", "subnet6")
            )
            for key in ("addr6", "host6", "meta6"):  # as the canary's log will spell them
                if key in fields:
                    fields[key] = str(ipaddress.IPv6Address(fields[key]))
            for key in ("else6", "own6"):
                if key in fields:
                    fields[key] = ",".join(
                        str(ipaddress.IPv6Address(a)) for a in fields[key].split(",")
                    )
            fields["subnet6"] = str(ipaddress.IPv6Network(fields["subnet6"]))
            running.subnet = fields
            running.address, running.address6 = fields["addr4"], fields["addr6"]
    if not done.ok:
        # A refused argument is a fatal line on stdout; everything else is on stderr.
        lines = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()
        if done.exit_status == NOT_READY:
            running.error = f"canary did not start: {lines[-1][:300]}"
        else:
            running.error = f"canary setup failed: {lines[-1][:300]}"
        await stop_canary(transport, running)
    return running


async def stop_canary(transport: Transport, canary: RunningCanary) -> None:
    """Kill the canary and remove its namespace and veth; never raises."""
    argv = [
        "sh",
        "-c",
        DOWN,
        "harness-canary-down",
        canary.pid,  # may be empty: the canary never started
        canary.netns,
        canary.host_veth,
        canary.log_path,
        " ".join(canary.leases),
        canary.sysv_key,
        canary.mq_name,
        str(canary.high_port or ""),
        ",".join(METADATA) if canary.netns and canary.config.metadata else "",
    ]
    try:
        await transport.run(argv, timeout=TIMEOUT)
    except CommandError as exc:  # pragma: no cover - best effort
        log.warning("canary teardown on %s failed: %s", transport.host, exc)
