"""`harness hosts`: reach each host once and say whether a run could use it.

Before a first fleet run (like `ansible -m ping`): is the host reachable, with which
host key; its kernel and architecture; each runtime's version or why it is unusable;
whether the netns canary can be made there. It prepares the host exactly as a run
does (one command, the probe staged by sha256 for its architecture), so a host that
passes here is one a run can use.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

import anyio

from harness.errors import HarnessError, TransportError
from harness.matrix import Host
from harness.matrix.models import RunscRuntimeSpec
from harness.probe import Probes
from harness.runtimes import CellPaths, Runtime
from harness.staging import HostState, claim_place, prepare_host
from harness.transport import Transport, open_transport

# Prints the uid, then whether `ip` exists and can list network namespaces, and
# `flock` exists: the netns canary needs root, `ip netns` and a lease lock. Then
# what the reference supervisor needs besides (python3 for its program, nsenter to
# put a sandbox behind it).
CANARY_SCRIPT = r"""id -u
if ! command -v ip >/dev/null 2>&1; then echo "no-ip"
elif ! command -v flock >/dev/null 2>&1; then echo "no-flock"
elif ip netns list >/dev/null 2>&1; then echo "netns-ok"
else echo "netns-refused"; fi
for tool in python3 nsenter; do
  if command -v "$tool" >/dev/null 2>&1; then echo "has-$tool"; else echo "no-$tool"; fi
done"""


@dataclass(slots=True)
class HostCheck:
    """What one host said; `usable` is False when a run there would be inconclusive."""

    name: str
    address: str
    error: str | None = None
    host_key: str | None = None
    kernel: str | None = None
    machine: str | None = None
    runtimes: dict[str, str] = field(default_factory=dict)  # name -> version or reason
    unusable: list[str] = field(default_factory=list)  # runtime names
    canary: str | None = None
    canary_ok: bool = False
    state: HostState | None = None  # what preparing it learned (None if unreachable)

    @property
    def usable(self) -> bool:
        return self.error is None and not self.unusable and self.canary_ok

    def to_json(self) -> dict[str, object]:
        return {
            "host": self.name,
            "address": self.address,
            "usable": self.usable,
            "error": self.error,
            "host_key": self.host_key,
            "kernel": self.kernel,
            "machine": self.machine,
            "runtimes": self.runtimes,
            "unusable": self.unusable,
            "canary": self.canary,
        }


def _canary(text: str) -> tuple[str, bool]:
    lines = text.split()
    uid, ip = [*lines, "?", "?"][:2]
    if uid != "0":
        return f"cannot be made: not root (uid {uid})", False
    if ip == "no-ip":
        return "cannot be made: `ip` is not installed (iproute2)", False
    if ip == "no-flock":
        return "cannot be made: `flock` is not installed (util-linux), for the subnet lease", False
    if ip != "netns-ok":
        return "cannot be made: `ip netns` is refused", False
    return "can be made (root, ip netns)", True


async def check_host(host: Host, runtimes: list[Runtime], probes: Probes) -> HostCheck:
    """Connect once, prepare as a run would, and probe the canary's needs."""
    from harness.transport.retry import connect_with_retries

    where = host.address if host.transport == "ssh" else "local"
    if host.transport == "ssh":
        where = f"{host.user + '@' if host.user else ''}{host.address}:{host.port}"
    found = HostCheck(name=host.name, address=where)
    transport = open_transport(host)
    try:
        await connect_with_retries(transport, host)
        ssh = transport.describe()
        if ssh:
            found.host_key = " ".join(
                str(ssh[k]) for k in ("host_key", "host_key_fingerprint") if ssh.get(k)
            )
        fixed = [rt for rt in runtimes if not _is_release(rt)]
        state = await prepare_host(transport, probes, workdir=host.workdir, runtimes=fixed)
        found.kernel, found.machine, found.state = state.kernel_release, state.machine, state
        for rt in runtimes:
            status = state.runtimes.get(rt.name)
            if status is None:
                found.runtimes[rt.name] = "release build: fetched and staged by `harness run`"
            elif status.available:
                found.runtimes[rt.name] = " ".join((status.version or "available").split())[:80]
            else:
                found.runtimes[rt.name] = f"unusable: {status.reason}"
                found.unusable.append(rt.name)
        for rt in runtimes:
            if rt.kind == "command" and rt.name not in found.unusable:
                why = await _cannot_start(transport, rt, state)
                if why is not None:
                    found.runtimes[rt.name] = f"unusable: {why}"
                    found.unusable.append(rt.name)
        done = await transport.run(("sh", "-c", CANARY_SCRIPT), timeout=30)
        found.canary, found.canary_ok = _canary(done.stdout)
        missing = [w[3:] for w in done.stdout.split() if w in ("no-python3", "no-nsenter")]
        for rt in runtimes:
            if rt.spec.supervisor and missing and rt.name not in found.unusable:
                found.runtimes[rt.name] = f"unusable: its supervisor needs {' and '.join(missing)}"
                found.unusable.append(rt.name)
    except (TransportError, HarnessError) as exc:
        found.error = exc.reason if isinstance(exc, TransportError) else str(exc)
    finally:
        with anyio.CancelScope(shield=True):
            await transport.aclose()
    return found


async def _cannot_start(transport: Transport, runtime: Runtime, state: HostState) -> str | None:
    """Can the wrapper start the probe at all? A command runtime may run it as another
    user (setpriv, unshare, sudo -u), who must reach the staged probe in the work
    folder: ask the probe `whoami` through it, as a cell would run it."""
    from harness.execution import start_failure

    cell_id = f"hosts-{secrets.token_hex(4)}"
    paths = CellPaths(
        probe=state.probe_path,
        workdir=state.workdir,
        cell_dir=f"{state.workdir}/cells/{cell_id}",
        cell_id=cell_id,
    )
    call = runtime.invocation(paths, ["whoami"])
    try:
        done = await transport.run(call.argv, stdin=call.stdin, timeout=30)
    finally:
        with anyio.CancelScope(shield=True):
            for argv in (*call.cleanup, ("rm", "-rf", "--", paths.cell_dir)):
                await transport.run(argv, timeout=30)
    if '"type":"whoami"' in done.stdout:
        return None
    return start_failure(runtime.name, done, workdir=state.workdir)


def _is_release(runtime: Runtime) -> bool:
    spec = runtime.spec
    return isinstance(spec, RunscRuntimeSpec) and spec.release is not None


async def check_hosts(
    hosts: list[Host], runtimes: list[Runtime], probes: Probes, *, limit: int = 16
) -> list[HostCheck]:
    """Every host at once (up to `limit`), in the inventory's order."""
    results: dict[str, HostCheck] = {}
    gate = anyio.CapacityLimiter(limit)

    async def one(host: Host) -> None:
        async with gate:
            results[host.name] = await check_host(host, runtimes, probes)

    async with anyio.create_task_group() as tg:
        for host in hosts:
            tg.start_soon(one, host)
    found = [results[h.name] for h in hosts]
    places: dict[tuple[str, str], str] = {}
    for item in found:  # in the inventory's order, as a run would refuse the later one
        if item.state is not None and item.error is None:
            try:
                claim_place(places, item.name, item.state)
            except TransportError as exc:
                item.error = exc.reason
    return found
