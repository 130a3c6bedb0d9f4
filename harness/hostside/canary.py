"""The egress canary: a TCP listener and DNS responder answering with the run's nonce.

It must sit where real egress would arrive. In `netns` mode harness builds an
"outside" network namespace on the host, joined by a veth pair, and runs the
probe's canary mode in it. The namespace, the veth and the canary are removed at
the end of the run, after every cell on the host has finished.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import json
import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import anyio

from harness.errors import CommandError, HarnessError, TransportError
from harness.hostside.base import CellSetup, Fixture, HostSetup
from harness.hostside.lease import MQ_RM
from harness.judge.arrivals import Log, of_cell, unexplained
from harness.matrix.models import Canary
from harness.results.records import CellRecord, HostEvidence
from harness.transport import Transport

if TYPE_CHECKING:
    from harness.hostside.envelope import Report
    from harness.plan import Cell
    from harness.probe.protocol import ProbeOutput
    from harness.results.records import ProbeCheck

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
# How many candidate subnets one start tries before it gives up (each costs an `ip`
# call under the lock; a range that full has bigger problems).
TRIES = 1024

# $1 ns, $2 host veth, $3 outside veth, $4 log, $5 leases folder, $6 the IPv4
# addresses asked for, "CANARY,HOST" ('' for the lease's); $7-$10 the IPv4 walk:
# the range's network (an integer), its /30s, the first one tried, the step; $11-$15
# the IPv6 walk: the range's top 64 bits (two 32-bit halves), its /64s, the first,
# the step; $16 how many to try; then the canary's argv, where @A4@ and @A6@ stand
# for the canary's addresses, @H4@ and @H6@ for the host's end of the veth (its
# listeners there are bound before it moves). Subnets are leased per host, under a
# lock, each family on its own: a walk from a random subnet of the range by a random
# odd step (the count is a power of two, so it visits every one), taking the first
# whose lease (named after the subnet) names no namespace with a process in it (the
# canary) and whose addresses no interface holds (an older harness, anything else
# in the range). A dead run's lease is thus free again, and its leftover veth, if
# any, still keeps its addresses from being handed out twice; the lease is written
# and the addresses are on the host's end before the lock is let go.
# One `ip` process makes the namespace; one batch makes the veth pair and sets up
# the host's end (in the batch, `netns add` would move the later commands into the
# new namespace with an iproute2 older than 5.2). The canary enters the namespace
# and sets up the other end itself (lo, addresses, default routes for replies to
# sandboxes whose own namespaces are routed through the host). The outside end is
# made inside the namespace: moving a device there afterwards waits out an RCU
# grace period under the kernel's network lock (slow, and serial). Names come from
# harness (hex run ids); addresses are computed here from the walk.
NETNS_UP = r"""set -eu
ns=$1; hv=$2; cv=$3; log=$4; leases=$5; want4=$6; base4=$7; n4=$8; i4=$9; step4=${10}
hi6=${11}; lo6=${12}; n6=${13}; i6=${14}; step6=${15}; tries=${16}; shift 16
taken() {
  [ -e "$leases/$1" ] && [ -n "$(ip netns pids "$(cat "$leases/$1")" 2>/dev/null)" ]
}
mkdir -p "$leases"
exec 9>"$leases/lock"
flock -w 20 9
k=0
while :; do
  if [ "$k" -ge "$tries" ] || [ "$k" -ge "$n4" ]; then
    echo "no free canary subnet in the IPv4 range (tried $k)" >&2; exit 1
  fi
  a=$((base4 + i4 * 4)); i4=$(((i4 + step4) % n4)); k=$((k + 1))
  p4=$((a >> 24 & 255)).$((a >> 16 & 255)).$((a >> 8 & 255)); o=$((a & 255))
  net4=$p4.$o; h4=$p4.$((o + 1)); c4=$p4.$((o + 2))
  if [ -n "$want4" ]; then c4=${want4%,*}; h4=${want4#*,}; fi
  if taken "$net4" || [ -n "$(ip -o addr show to "$h4/30")" ]; then continue; fi
  break
done
k=0
while :; do
  if [ "$k" -ge "$tries" ] || [ "$k" -ge "$n6" ]; then
    echo "no free canary subnet in the IPv6 range (tried $k)" >&2; exit 1
  fi
  hi=$((hi6 | i6 >> 32)); lo=$((lo6 | (i6 & 4294967295))); i6=$(((i6 + step6) % n6))
  k=$((k + 1))
  net6=$(printf %x:%x:%x:%x $((hi >> 16)) $((hi & 65535)) $((lo >> 16)) $((lo & 65535)))::
  h6=${net6}1; c6=${net6}2
  if taken "$net6" || [ -n "$(ip -o addr show to "$net6/64")" ]; then continue; fi
  break
done
printf '%s\n' "$ns" > "$leases/$net4"
printf '%s\n' "$ns" > "$leases/$net6"
ip netns add "$ns"
printf '%s\n' "link add $hv type veth peer name $cv netns $ns" "addr add $h4/30 dev $hv" \
  "addr add $h6/64 dev $hv nodad" "link set $hv up" | ip -batch -
exec 9>&-
echo "subnet=$net4/30 subnet6=$net6/64 addr4=$c4 addr6=$c6 host4=$h4 host6=$h6"
for arg; do
  shift
  case $arg in
    *@A4@*) arg=${arg%%@A4@*}$c4${arg#*@A4@} ;;
    *@A6@*) arg=${arg%%@A6@*}$c6${arg#*@A6@} ;;
    *@H4@*) arg=${arg%%@H4@*}$h4${arg#*@H4@} ;;
    *@H6@*) arg=${arg%%@H6@*}$h6${arg#*@H6@} ;;
  esac
  set -- "$@" "$arg"
done
exec "$@" --netns "/run/netns/$ns" --iface "$cv" --iface-addr "$c4/30" --gateway "$h4" \
  --iface-addr6 "$c6/64" --gateway6 "$h6" --capture --daemon "$log"
"""


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


# alive PID: the process runs. `kill -0` alone also answers for a zombie, which a
# host whose PID 1 reaps late (or never, in a container whose first process is a
# shell) keeps for a while after the canary died: a dead canary taken for a live
# one would make a leaky sandbox look blocked, and its teardown wait its full second.
ALIVE = r"""alive() {
  kill -0 "$1" 2>/dev/null || return 1
  _alive_st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null)
  case ${_alive_st%% *} in Z|X) return 1;; esac
  return 0
}
"""


# $1 pid, $2 ns ('' in listen mode), $3 host veth, $4 log, $5 lease files (space-
# separated, '' for none), $6 the SysV key ('' for none), $7 the POSIX queue's name
# ('' for none): stop everything we started. The canary removes its IPC objects on
# SIGTERM (and at its lease's end); it is given a second to, and only if it outlives
# that are its SysV ones removed here (a key it found taken is someone else's, and
# left alone). Whatever is left in its namespace (a start cut short: no pid yet) is
# asked to stop too before it is killed. Its POSIX queue, named after the run, is
# ours whoever made it: removed last, however the canary ended.
DOWN = (
    MQ_RM
    + ALIVE
    + r"""pid=$1; ns=$2; hv=$3; log=$4; leases=$5; sysv=$6; mq=$7
if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
  i=0; while [ "$i" -lt 50 ] && alive "$pid"; do sleep 0.02; i=$((i + 1)); done
  if alive "$pid" && [ -n "$sysv" ]; then
    kill -9 "$pid" 2>/dev/null
    if command -v ipcrm >/dev/null 2>&1; then
      ipcrm -Q "$sysv" 2>/dev/null; ipcrm -M "$sysv" 2>/dev/null
    fi
  fi
fi
if [ -n "$ns" ]; then
  left=$(ip netns pids "$ns" 2>/dev/null)
  if [ -n "$left" ]; then
    for p in $left; do kill "$p" 2>/dev/null || true; done
    sleep 0.2
  fi
  for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
  ip netns del "$ns" 2>/dev/null || true
  # Gone with the namespace, unless that never held its peer.
  if [ -e "/sys/class/net/$hv" ]; then ip link del "$hv" 2>/dev/null || true; fi
fi
for lease in $leases; do
  if [ "$(cat "$lease" 2>/dev/null)" = "$ns" ]; then rm -f -- "$lease"; fi
done
if [ -n "$mq" ]; then mq_rm "${mq#/}"; fi
rm -f -- "$log"
exit 0
"""
)


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
        for option, key in (("--host4", "host4"), ("--host6", "host6")):
            if self.subnet.get(key):
                args += [option, self.subnet[key]]
        return args

    def abilities(self) -> list[str]:
        """What the canary can prove: arrivals on IPv4, on IPv6, on any port and
        protocol, seen by its packet capture (netns mode; listen mode once it said its
        capture runs), at the host's own end of its veth (`hostaddr`), and in the
        host's IPC namespace (`ipc`)."""
        found = ["ipv4", *(["ipv6"] if self.address6 else [])]
        found += ["capture"] if self.config.mode == "netns" or self.capture else []
        found += ["hostaddr"] if self.subnet.get("host4") else []
        return [*found, *(["ipc"] if self.sysv_key else [])]

    def addresses(self) -> list[str]:
        """Every address an arrival the canary logs may have been sent to."""
        found = [self.address, self.address6, *(self.subnet.get(k, "") for k in ("host4", "host6"))]
        return [a for a in found if a]

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


def start_order(cell: Cell) -> tuple[bool, bool]:
    """The host's control first (every verdict waits for it), then the runtimes that
    boot a kernel of their own, the slowest to start: the host's settle window counts
    from its last sandbox's end, so the slowest cell should not also start last."""
    return (not cell.is_host_runtime, not cell.runtime.promises_own_kernel)


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
    capture_to: bool = False,
) -> list[str]:
    """The canary's command line: the configured listeners (which must bind), the
    sweep's ports (which may be taken in listen mode), on each address, its abstract
    unix listener, its IPC objects `ipc` (SysV key, POSIX queue name), (netns
    mode) a TCP and a UDP listener on the high port at the host's own addresses
    `hosts`, and (listen mode, `capture_to`) a packet capture of what is sent to its
    addresses (netns mode's capture is NETNS_UP's `--capture`)."""
    argv = [probe, "canary", "--unix-abstract", unix, "--sysv", ipc[0], "--mqueue", ipc[1]]
    h4, h6 = hosts
    for address in [*([h4] if h4 else []), *([f"[{h6}]"] if h6 else [])]:
        argv += ["--host-tcp", f"{address}:{high_port}", "--host-udp", f"{address}:{high_port}"]
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
        running = RunningCanary("", canary, nonce, log_path, high_port=high_port)
        running.netns = canary_netns(run_id, host_index)
        running.host_veth = f"hv{run_id[:8]}{host_index:02x}"[:15]
        outside_veth = f"hc{run_id[:8]}{host_index:02x}"[:15]
        argv = [
            "sh", "-c", NETNS_UP, "harness-canary",
            running.netns, running.host_veth, outside_veth, log_path, LEASES,
            *subnet_walk(canary),
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
            ),
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
            for key in ("addr6", "host6"):  # as the canary's log will spell them
                fields[key] = str(ipaddress.IPv6Address(fields[key]))
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


# canary_log PID LOG: the log, but only from a canary that is still alive. A dead
# canary would make a leaky sandbox look blocked (connection refused). Shared with
# the cell's envelope (`hostside/envelope.py`).
LOG_FUNCTION = (
    ALIVE
    + r"""canary_log() {
  if ! alive "$1"; then
    echo "the canary (pid $1) is no longer running" >&2; return 3
  fi
  cat -- "$2"
}
"""
)
READ_LOG = LOG_FUNCTION + 'canary_log "$1" "$2"\n'


ARRIVALS = ("tcp", "dns", "udp", "packet", "unix", "ipc")


def unbound_ipc(text: str) -> dict[str, str]:
    """The IPC objects the canary logged it could not make, by the sweep check that
    aims at each, with the error: why that check's control cannot escape."""
    found = {}
    for line in text.splitlines():
        if '"unbound"' not in line:
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        proto = obj.get("proto") if isinstance(obj, dict) else None
        if obj.get("event") == "unbound" and proto in ("sysv-msg", "sysv-shm", "posix-mq"):
            found[f"ipc-{proto}"] = str(obj.get("error") or "")[:200]
    return found


def parse_events(text: str) -> list[dict[str, Any]]:
    """The arrivals (tcp, dns, udp, unix, ipc and captured packet events) in the
    canary's log."""
    events = []
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and obj.get("event") in ARRIVALS:
            events.append(obj)
    return events


async def canary_events(transport: Transport, canary: RunningCanary) -> list[dict[str, Any]] | None:
    """Everything the canary logged so far, asked in a command of its own; None if
    it died or its log cannot be read."""
    argv = ["sh", "-c", READ_LOG, "harness-canary-log", canary.pid or "none", canary.log_path]
    done = await transport.run(argv, timeout=TIMEOUT)
    if not done.ok:
        return None
    return parse_events(done.stdout)


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
    ]
    try:
        await transport.run(argv, timeout=TIMEOUT)
    except CommandError as exc:  # pragma: no cover - best effort
        log.warning("canary teardown on %s failed: %s", transport.host, exc)


# How many unexplained arrivals a cell's record keeps.
UNEXPLAINED_KEPT = 5

# Refusals made before a packet could leave: nothing of the attempt is in flight.
REFUSED_AT_ONCE = frozenset(
    {"ENETUNREACH", "EHOSTUNREACH", "ECONNREFUSED", "EPERM", "EACCES", "EAFNOSUPPORT"}
)


def unsettled(output: ProbeOutput, targets: frozenset[str]) -> bool:
    """Could an attempt at the canary (one of the `targets` scenarios') still be on
    its way? Yes unless every attempt escaped (proof already) or was refused
    outright: one that connected without the nonce, timed out waiting, or got an
    answer from something else may have gone through a proxy that delivers it late."""
    return any(
        c.scenario in targets
        and c.kind == "attempt"
        and c.outcome != "escaped"
        and not (c.outcome == "blocked" and c.errno in REFUSED_AT_ONCE)
        for c in output.checks
    )


async def read_canary(transport: Transport, canary: RunningCanary) -> dict[str, Any]:
    """Every arrival the canary logged so far (`canary_events`), or why there are
    none to trust (`canary_error`: dead canary, unreadable log): a gap the judge
    makes inconclusive."""
    try:
        events = await canary_events(transport, canary)
    except TransportError as exc:
        return {"canary_events": None, "canary_error": f"canary log unreadable: {exc.reason}"}
    if events is None:
        return {"canary_events": None, "canary_error": "canary dead or its log unreadable"}
    return {"canary_events": events}


async def settle_canary(
    transport: Transport, canary: RunningCanary, *, wait: float
) -> dict[str, Any]:
    """Read the canary's log again, `wait` seconds later, before an attempt that may
    be in flight (see `unsettled`) can count as blocked or intercepted: a proxy in
    the sandbox may still be carrying it to the canary."""
    with anyio.CancelScope(shield=True):
        await anyio.sleep(wait)
        found = await read_canary(transport, canary)
    return found


def allowed_destination(cell: CellSetup, canary: CanaryFixture | None) -> str | None:
    """Where the cell's allowed connections go (IP:PORT): the runtime's
    `attribution.allowed`, else the canary's allowed port. One answer for every
    fixture that names it, so that what a `revoke` command takes out is what the
    probe tries."""
    source = cell.runtime.spec.attribution
    if source is not None and source.allowed:
        return source.allowed
    running = canary.usable if canary is not None else None
    return running.endpoint(running.config.allowed_port) if running is not None else None


class CanaryFixture(Fixture):
    """The canary on one host: started once, its log read after every cell and
    once more after the host's settle window, where the cells are judged."""

    def __init__(self) -> None:
        self.host: HostSetup | None = None
        self.running: RunningCanary | None = None
        self.waiting = False  # cells wait for the host's settle window to be judged
        self.judged: list[tuple[str, list[ProbeCheck]]] = []  # (tag, checks) settled so far

    @property
    def usable(self) -> RunningCanary | None:
        return self.running if self.running is not None and self.running.error is None else None

    async def start(self, host: HostSetup) -> None:
        self.host = host
        self.running = await start_canary(
            host.transport,
            probe=host.state.probe_path,
            workdir=host.state.workdir,
            canary=host.canary,
            run_id=host.run_id,
            host_index=host.index,
            nonce=host.nonce,
            high_port=host.high_port,
            run_lease=host.lease,
        )
        self.waiting = bool(host.targets) and self.running.error is None

    def manifest(self) -> dict[str, object]:
        return {"canary": self.running.manifest()} if self.running else {}

    def prepare(self, cell: CellSetup) -> None:
        cell.canary = self.usable

    def probe_args(self, cell: CellSetup) -> Sequence[str]:
        running = self.usable
        return (
            running.probe_args() if running is not None and self.host and self.host.targets else ()
        )

    async def collect(self, cell: CellSetup, report: Report | None, output: ProbeOutput) -> None:
        host, running = self.host, self.usable
        if host is None or running is None:
            return
        if report is None:  # the envelope was cut short: ask in a command of its own
            with anyio.CancelScope(shield=True):
                found = await read_canary(host.transport, running)
        elif report.canary_alive is None:
            return  # the sandbox never started (no sentinels): nothing to read
        elif report.canary_alive:
            found = {"canary_events": parse_events(report.canary_log)}
        else:
            found = {"canary_events": None, "canary_error": "canary dead or its log unreadable"}
        if found["canary_events"] is not None:
            found["canary_has"] = running.abilities()
            found["canary_unbound"] = (report and unbound_ipc(report.canary_log)) or None
            # A cell run after the host's window (`--reruns`) is judged at once: it
            # waits a window of its own if an attempt may still be in flight.
            if not self.waiting and unsettled(output, host.targets):
                wait = host.canary.settle
                found.update(await settle_canary(host.transport, running, wait=wait))
        if found["canary_events"] is not None:
            events = found["canary_events"]
            found["canary_events"] = of_cell(events, cell.cell_id, output.checks)
            if not self.waiting:  # a rerun: the host's other cells are all known
                cells = [*self.judged, (cell.cell_id, output.checks)]
                found["canary_unexplained"] = self._unexplained(events, cells)
        cell.evidence.update({k: v for k, v in found.items() if v is not None})

    def _unexplained(
        self, events: list[dict[str, Any]], cells: list[tuple[str, list[ProbeCheck]]]
    ) -> list[dict[str, Any]]:
        """The first arrivals no cell's attempts explain (bounded: a reason shows one)."""
        addresses = self.running.addresses() if self.running is not None else []
        allowed = [self.host.canary.allowed_port] if self.host is not None else []
        return unexplained(events, cells, addresses, allowed)[:UNEXPLAINED_KEPT]

    def window(self) -> float | None:
        return self.host.canary.settle if self.waiting and self.host else None

    async def late(self, records: Sequence[CellRecord], *, since: float) -> list[HostEvidence]:
        """Read the log once more, the window after the host's last sandbox was seen
        over (`since`, time.monotonic): an arrival carrying a cell's tag, however
        late, makes that attempt an escape. The window counts from the sandbox's
        end, not from an attempt: a relay in the sandbox's way may hold what it
        caught until the sandbox is gone. Cells rerun after this wait a window of
        their own (`collect`)."""
        assert self.host is not None and self.running is not None
        settle = self.host.canary.settle
        await anyio.sleep(max(0.0, since + settle - time.monotonic()))
        self.waiting = False
        with anyio.CancelScope(shield=True):
            found = await read_canary(self.host.transport, self.running)
        settled = []
        self.judged = [(r.host_side.tag, r.checks) for r in records]
        stray = []
        if found["canary_events"] is not None:
            stray = self._unexplained(found["canary_events"], self.judged)
        log = Log(found["canary_events"] or [])  # read once for the host's cells
        for record in records:
            evidence = record.host_side
            if evidence.canary_events is not None:
                if found["canary_events"] is not None:
                    events = log.of_cell(evidence.tag, record.checks)
                    evidence = replace(
                        evidence, canary_events=events, settled=settle, canary_unexplained=stray
                    )
                else:
                    why = f"after the settle window: {found['canary_error']}"
                    evidence = replace(evidence, canary_events=None, canary_error=why)
            settled.append(evidence)
        return settled

    def namespace(self) -> str:
        host = self.host
        return canary_netns(host.run_id, host.index) if host and host.canary.mode == "netns" else ""

    async def stop(self) -> None:
        if self.host is not None and self.running is not None:
            await stop_canary(self.host.transport, self.running)
