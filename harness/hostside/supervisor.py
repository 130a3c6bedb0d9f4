"""The reference egress supervisor as a fixture: one per (host, supervised runtime).

Like the canary, harness starts it on the host when a runtime asks for it
(`supervisor = "reference"`) and removes it when the host's cells are done. It
makes a network namespace holding only loopback, with every address routed as
local, and starts `harness/supervisor/reference.py` guarding it: the sandbox
joins that namespace (`nsenter --net`), so the supervisor is its only way out,
and the supervisor's decision records are the runtime's attribution source.

The program reaches the host on the command's stdin (`python3 -`): nothing is
staged, and nothing but python3 (and iproute2, as for the canary) is needed there.
"""

from __future__ import annotations

import hashlib
import logging
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

import anyio

from harness.errors import CommandError, HarnessError
from harness.hostside.base import CellSetup, Fixture, HostSetup
from harness.hostside.canary import allowed_destination
from harness.matrix.models import AttributionSource, Canary, SupervisorFault
from harness.policy.models import Policy
from harness.scenarios import SCENARIOS
from harness.scenarios.fence import LOSS_PHASE, RESTORE_PHASE, REVOKE_PHASE
from harness.transport import Transport

if TYPE_CHECKING:
    from harness.hostside.canary import CanaryFixture
    from harness.hostside.envelope import Report
    from harness.plan import Cell
    from harness.probe.protocol import ProbeOutput

log = logging.getLogger(__name__)
TIMEOUT = 30.0
CONNECT_PORT = 3128  # HTTP CONNECT, on 127.0.0.1 inside the namespace
NO_PYTHON = 86

# $1 ns, $2 log, $3 policy file, $4 its rules (one a line); then the supervisor's
# own arguments. The namespace has loopback
# only; `local` routes for every address (IPv6 too, where the kernel has it) make any
# destination land on the supervisor's listeners there, and a port nobody listens
# on is refused by the namespace itself. The program is read from stdin.
UP = r"""set -eu
ns=$1; log=$2; policy=$3; rules=$4; shift 4
if ! command -v python3 >/dev/null 2>&1; then
  echo "the reference supervisor needs python3 on the host" >&2; exit 86
fi
printf '%s' "$rules" >"$policy"
ip netns add "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" route add local 0.0.0.0/0 dev lo table local
ip -n "$ns" route add local ::/0 dev lo table local 2>/dev/null || true
exec python3 - --netns "/run/netns/$ns" --daemon "$log" "$@"
"""

# $1 pid ('' if it never started), $2 ns, $3 log, $4 records, $5 policy file.
DOWN = r"""pid=$1; ns=$2
if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
  i=0  # a moment to go, then for good
  while [ "$i" -lt 20 ] && st=$(cat "/proc/$pid/stat" 2>/dev/null) && st=${st##*) } \
      && [ "${st%% *}" != Z ]; do
    sleep 0.1; i=$((i + 1))
  done
  kill -9 "$pid" 2>/dev/null || true
fi
pkill -KILL -f -- "[-]-netns /run/netns/$ns --daemon" 2>/dev/null || true
ip netns del "$ns" 2>/dev/null || true
rm -f -- "$3" "$4" "$5" "$5.applied"
exit 0
"""

# -- the phase `controller-loss` (scenarios/fence.py) -----------------------------
# $1 ns, $2 log, $3 policy file, $4 its rules; then the supervisor's arguments. The
# namespace stays; whatever is left of the last supervisor (a faulty one's fallback
# helper) goes first, and the policy is the one it started with.
RESTART = r"""ns=$1; log=$2; policy=$3; rules=$4; shift 4
printf '%s' "$rules" >"$policy"
pkill -KILL -f -- "[-]-netns /run/netns/$ns --daemon" 2>/dev/null
exec python3 - --netns "/run/netns/$ns" --daemon "$log" "$@"
"""
# The hook, one line of shell: SIGKILL to the supervisor's whole session (it is the
# session leader: every process it made, unless one left the session), then wait
# until it is gone, so that the probe's attempts after the barrier meet no supervisor.
KILL_HOOK = (
    "pid={pid}; kill -KILL -$pid 2>/dev/null || kill -KILL $pid 2>/dev/null"
    " || {{ echo supervisor $pid was not running; exit 1; }}; i=0;"
    " while [ $i -lt 100 ] && st=$(cat /proc/$pid/stat 2>/dev/null)"
    ' && st=${{st##*) }} && [ "${{st%% *}}" != Z ]; do sleep 0.02; i=$((i + 1)); done;'
    " [ $i -lt 100 ] || {{ echo supervisor $pid survived SIGKILL; exit 1; }};"
    " echo killed the supervisor session $pid"
)


def kill_hook(pid: str) -> str:
    """The controller-loss hook for the supervisor with this pid."""
    return KILL_HOOK.format(pid=int(pid))


# -- the phase `revocation` (scenarios/fence.py) ----------------------------------
# A policy reload: the policy file rewritten (atomically) with RULES, SIGHUP, then
# wait until the supervisor acknowledges it in FILE.applied, which it writes once
# the established connections the new policy revokes are cut. RELOAD_WAIT bounds
# the wait; the hook's own time is in the cell's host_side.phases.
RELOAD_WAIT = 5.0
RELOAD_HOOK = (
    "f={policy}; pid={pid}; {write} >$f.new && mv -f $f.new $f && rm -f $f.applied"
    " && kill -HUP $pid 2>/dev/null || {{ echo supervisor $pid was not running; exit 1; }};"
    " i=0; while [ ! -e $f.applied ] && [ $i -lt {tries} ]; do sleep 0.01; i=$((i + 1)); done;"
    " [ -e $f.applied ] || {{ echo supervisor $pid did not acknowledge the reload; exit 1; }};"
    " cat $f.applied"
)


def reload_hook(running: RunningSupervisor, rules: tuple[str, ...]) -> str:
    """One line of shell (the envelope's phases are lines) that reloads the
    supervisor's policy as `rules`."""
    write = f"printf '%s\\n' {shlex.join(rules)}" if rules else ":"
    return RELOAD_HOOK.format(
        policy=shlex.quote(running.policy_path),
        pid=int(running.pid),
        write=write,
        tries=int(RELOAD_WAIT / 0.01),
    )


def revoke_hook(running: RunningSupervisor) -> str:
    """The revocation hook: every reloadable rule for the allowed destination goes."""
    kept = tuple(r for r in running.rules if r.partition("=")[0] != running.allowed)
    return reload_hook(running, kept)


def program() -> bytes:
    """The supervisor's source, as shipped with harness."""
    return resources.files("harness.supervisor").joinpath("reference.py").read_bytes()


@dataclass(slots=True)
class RunningSupervisor:
    """Where a supervised runtime's sandbox must run, and where its records are."""

    runtime: str
    netns: str
    log_path: str
    records_path: str
    fault: SupervisorFault | None = None
    pid: str = ""
    error: str | None = None
    args: tuple[str, ...] = ()  # the program's own arguments, for a restart
    # The rules of its policy file (the reloadable ones), and the destination the
    # revocation phase takes out of them ('' without a canary).
    rules: tuple[str, ...] = ()
    allowed: str = ""

    @property
    def policy_path(self) -> str:
        return self.records_path.removesuffix(".jsonl") + ".policy"

    @property
    def netns_path(self) -> str:
        return f"/run/netns/{self.netns}"

    def where(self) -> tuple[str, str, str, str]:
        """UP's and RESTART's first arguments: namespace, log, policy file, its rules."""
        text = "".join(f"{r}\n" for r in self.rules)
        return (self.netns, self.log_path, self.policy_path, text)

    def wrap(self, argv: tuple[str, ...]) -> tuple[str, ...]:
        """The sandbox command, run inside the guarded namespace."""
        return ("nsenter", f"--net={self.netns_path}", *argv)

    def source(self) -> AttributionSource:
        return AttributionSource(source="file", path=self.records_path)

    def manifest(self) -> dict[str, Any]:
        return {
            "kind": "reference",
            "sha256": hashlib.sha256(program()).hexdigest(),
            "netns": self.netns,
            "records": self.records_path,
            "fault": self.fault,
            "error": self.error,
        }


def allow_rule(destination: str, policy: Policy | None, probe_sha256: str) -> str:
    """The supervisor's rule for the canary's allowed destination, from the runtime's
    policy as this lab maps it (docs/policy.md): every endpoint of its
    network_policies is that destination, and every binary they name is the probe,
    known by its sha256. A policy that names no binaries (or has no network policy)
    allows the destination to every binary."""
    if policy is None or not policy.names_binaries:
        return destination
    return f"{destination}=sha256:{probe_sha256}"


def policy_rules(
    canary: Canary, address: str | None, policy: Policy | None, probe_sha256: str
) -> tuple[str, ...]:
    """Policy: only the canary's allowed port is allowed (nothing, without a canary),
    to the binaries the runtime's policy names."""
    if not address:
        return ()
    return (allow_rule(f"{address}:{canary.allowed_port}", policy, probe_sha256),)


def supervisor_args(
    canary: Canary, fault: SupervisorFault | None, probe_name: str = ""
) -> list[str]:
    """The canary's TCP ports are listened on, so that their denials are recorded;
    what is allowed is in the policy file (`policy_rules`). A fault that names programs
    by name (`by-comm`, `by-argv0`, `by-basename`) knows the probe by its file's name."""
    ports = sorted({canary.tcp_port, canary.allowed_port, canary.doh_port, canary.alt_dns_port})
    args = [x for port in ports for x in ("--tcp-port", str(port))]
    args += ["--dns-port", str(canary.dns_port), "--connect-port", str(CONNECT_PORT)]
    if fault:
        args += ["--fault", fault]
    if fault and fault.startswith("by-"):
        args += ["--known-as", probe_name]
    return args


async def start_supervisor(
    transport: Transport,
    *,
    runtime: str,
    workdir: str,
    run_id: str,
    host_index: int,
    serial: int,
    canary: Canary,
    canary_address: str | None,
    fault: SupervisorFault | None,
    policy: Policy | None = None,
    probe_sha256: str = "",
    probe_name: str = "",
) -> RunningSupervisor:
    """Start one supervisor; on failure the returned one carries `error`."""
    stem = f"supervisor-{run_id}-{host_index}-{serial}"
    running = RunningSupervisor(
        runtime=runtime,
        netns=f"harness-{run_id}-{host_index}-sup{serial}",
        log_path=f"{workdir}/{stem}.log",
        records_path=f"{workdir}/{stem}.jsonl",
        fault=fault,
    )
    running.rules = policy_rules(canary, canary_address, policy, probe_sha256)
    running.allowed = f"{canary_address}:{canary.allowed_port}" if canary_address else ""
    running.args = (
        "--records", running.records_path, "--policy-file", running.policy_path,
        *supervisor_args(canary, fault, probe_name),
    )  # fmt: skip
    argv = ["sh", "-c", UP, "harness-supervisor", *running.where(), *running.args]
    done = await transport.run(argv, stdin=program(), timeout=TIMEOUT)
    running.pid = next((ln[4:] for ln in done.stdout.splitlines() if ln.startswith("pid=")), "")
    if not done.ok or not running.pid:
        lines = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()
        running.error = f"supervisor did not start: {lines[-1][:300]}"
        await stop_supervisor(transport, running)
    return running


async def restart_supervisor(transport: Transport, running: RunningSupervisor) -> None:
    """Start the supervisor again in its namespace, after a cell killed it; on
    failure `error` says why, and the runtime's later cells do not run."""
    argv = ["sh", "-c", RESTART, "harness-supervisor", *running.where()]
    done = await transport.run([*argv, *running.args], stdin=program(), timeout=TIMEOUT)
    running.pid = next((ln[4:] for ln in done.stdout.splitlines() if ln.startswith("pid=")), "")
    if not done.ok or not running.pid:
        lines = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()
        running.error = f"supervisor did not restart after a cell killed it: {lines[-1][:300]}"


async def restore_policy(transport: Transport, running: RunningSupervisor) -> None:
    """The policy it started with, reloaded after a cell revoked a rule; on failure
    `error` says why, and the runtime's later cells do not run."""
    done = await transport.run(["sh", "-c", reload_hook(running, running.rules)], timeout=TIMEOUT)
    if not done.ok:
        lines = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()
        running.error = f"supervisor policy not restored after a revocation: {lines[-1][:300]}"


async def stop_supervisor(transport: Transport, running: RunningSupervisor) -> None:
    """Stop it and remove its namespace and files; never raises."""
    argv = [
        "sh", "-c", DOWN, "harness-supervisor-down",
        running.pid, running.netns, running.log_path, running.records_path,
        running.policy_path,
    ]  # fmt: skip
    try:
        await transport.run(argv, timeout=TIMEOUT)
    except CommandError as exc:  # pragma: no cover - best effort
        log.warning("supervisor teardown on %s failed: %s", transport.host, exc)


class SupervisorFixture(Fixture):
    """A reference supervisor per supervised runtime on the host, started once the
    canary is up: its policy allows the canary's allowed port (to the binaries the
    runtime's policy names) and nothing else.
    Without a canary (no network scenario) it still stands there, allowing nothing."""

    stage = 1

    def __init__(self, canary: CanaryFixture | None) -> None:
        self.canary = canary
        self.running: dict[str, RunningSupervisor] = {}
        self.host: HostSetup | None = None

    def waits_for(self, earlier: Sequence[Fixture]) -> Sequence[Fixture]:
        """The canary alone (its address is in the policy): not the host's file
        listing, which can take longer than the supervisors' own start."""
        return [f for f in earlier if f is self.canary]

    async def start(self, host: HostSetup) -> None:
        self.host = host
        specs = {rt.name: rt.spec for rt in host.runtimes if rt.spec.supervisor}
        canary = self.canary.running if self.canary is not None else None
        if not specs or (canary is not None and canary.error is not None):
            return  # the canary was needed and is dead: the cells say so (`refuse`)
        address = canary.address if canary is not None else None
        async with anyio.create_task_group() as tg:
            for serial, (name, spec) in enumerate(sorted(specs.items())):

                async def start(name: str = name, serial: int = serial, spec: Any = spec) -> None:
                    self.running[name] = await start_supervisor(
                        host.transport,
                        runtime=name,
                        workdir=host.state.workdir,
                        run_id=host.run_id,
                        host_index=host.index,
                        serial=serial,
                        canary=host.canary,
                        canary_address=address,
                        fault=spec.supervisor_fault,
                        policy=spec.policy,
                        probe_sha256=host.state.probe_sha256,
                        probe_name=PurePosixPath(host.state.probe_path).name,
                    )

                tg.start_soon(start)

    def manifest(self) -> dict[str, object]:
        if not self.running:
            return {}
        return {"supervisors": {n: s.manifest() for n, s in sorted(self.running.items())}}

    def refuse(self, cell: Cell) -> str | None:
        """A supervised runtime without its supervisor would be judged without the
        thing under test: its cells do not run."""
        if not cell.runtime.spec.supervisor:
            return None
        running = self.running.get(cell.runtime.name)
        if running is None:
            canary = self.canary.running if self.canary is not None else None
            why = (canary.error if canary else None) or "no canary to guard the way to"
            return f"supervisor not started: {why}"
        return running.error

    def wrap(self, cell: CellSetup, argv: tuple[str, ...]) -> tuple[str, ...]:
        running = self.running.get(cell.cell.runtime.name)
        return running.wrap(argv) if running is not None else argv

    def phase_hooks(self, cell: CellSetup) -> dict[str, str]:
        running = self.running.get(cell.cell.runtime.name)
        if running is None or not running.pid or running.error:
            return {}
        hooks = {LOSS_PHASE: kill_hook(running.pid)}
        if running.allowed:
            hooks[REVOKE_PHASE] = revoke_hook(running)
            hooks[RESTORE_PHASE] = reload_hook(running, running.rules)
        return hooks

    async def collect(self, cell: CellSetup, report: Report | None, output: ProbeOutput) -> None:
        """A cell that reached the controller-loss barrier (or whose report is lost)
        killed the supervisor: start it again, with its first policy, for the
        runtime's later cells. One that revoked its rule and stopped before the
        restore barrier gets the rule back."""
        running = self.running.get(cell.cell.runtime.name)
        if running is None or self.host is None:
            return
        hooks = self.phase_hooks(cell)
        phases = {p for s in cell.cell.scenarios for p in SCENARIOS[s].phases} & set(hooks)
        acted = phases if report is None else phases & set(report.phases or {})
        if LOSS_PHASE in acted:
            await restart_supervisor(self.host.transport, running)
        elif REVOKE_PHASE in acted and not (report is not None and RESTORE_PHASE in acted):
            await restore_policy(self.host.transport, running)

    async def stop(self) -> None:
        """Every supervisor at once: they are independent of one another."""
        host = self.host
        if host is None:
            return

        async def stop(running: RunningSupervisor) -> None:
            try:
                await stop_supervisor(host.transport, running)
            except HarnessError as exc:  # the others still go
                log.warning("supervisor teardown on %s failed: %s", host.transport.host, exc)

        async with anyio.create_task_group() as tg:
            for running in self.running.values():
                tg.start_soon(stop, running)


class RevokeCommandFixture(Fixture):
    """An external supervisor's own policy reload, for the scenario `revocation`:
    its runtime entry's `attribution.revoke` at the barrier `revocation`,
    `attribution.restore` at `revocation-restore` (or after the cell, if it stopped
    between them) (docs/matrix.md). Both run on the host with HARNESS_ALLOWED set to
    the allowed destination."""

    def __init__(self, canary: CanaryFixture | None) -> None:
        self.canary = canary
        self.host: HostSetup | None = None

    async def start(self, host: HostSetup) -> None:
        self.host = host

    def _command(self, cell: CellSetup, which: str) -> str | None:
        source = cell.runtime.spec.attribution
        command = getattr(source, which, None) if source is not None else None
        allowed = allowed_destination(cell, self.canary)
        if not command or not allowed:
            return None
        return f"HARNESS_ALLOWED={shlex.quote(allowed)} sh -c {shlex.quote(command)}"

    def probe_args(self, cell: CellSetup) -> Sequence[str]:
        """The probe tries the destination the commands revoke (the canary's own
        `--allowed-tcp` otherwise, whenever the attribution scenario is not in the
        matrix to override it)."""
        allowed = allowed_destination(cell, self.canary)
        return ["--allowed-tcp", allowed] if allowed and self.phase_hooks(cell) else ()

    def phase_hooks(self, cell: CellSetup) -> dict[str, str]:
        if cell.runtime.spec.supervisor:
            return {}  # harness's own supervisor is revoked by its own fixture
        revoke, restore = self._command(cell, "revoke"), self._command(cell, "restore")
        return {REVOKE_PHASE: revoke, RESTORE_PHASE: restore} if revoke and restore else {}

    async def collect(self, cell: CellSetup, report: Report | None, output: ProbeOutput) -> None:
        """The revoked rule back for the runtime's later cells, if the cell revoked it
        (or its report is lost) and did not restore it itself."""
        if self.host is None or not self.phase_hooks(cell):
            return
        if REVOKE_PHASE not in {p for s in cell.cell.scenarios for p in SCENARIOS[s].phases}:
            return
        acted = report.phases or {} if report is not None else {}
        if report is not None and (REVOKE_PHASE not in acted or RESTORE_PHASE in acted):
            return
        hook = self._command(cell, "restore")
        if hook is None:
            return
        done = await self.host.transport.run(["sh", "-c", hook], timeout=TIMEOUT)
        if not done.ok:
            log.warning(
                "restore for %s on %s failed: %s",
                cell.cell.runtime.name,
                self.host.transport.host,
                (done.stderr.strip() or done.stdout.strip())[:300],
            )
