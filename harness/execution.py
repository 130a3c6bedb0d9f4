"""One cell, run once: the sandbox command in its envelope, the probe's output
read strictly, and the host evidence each fixture collects around it.

One command per cell (`hostside/envelope.py`): make the sentinels, run the
sandbox under a remote `timeout`, report what the host saw. A cell that did not
end cleanly is torn down by its tag.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field, replace

import anyio

from harness.errors import TransportError
from harness.hostside.base import CellSetup
from harness.hostside.compose import HostFixtures
from harness.hostside.envelope import Envelope, Report
from harness.hostside.lease import RunLease
from harness.judge.properties import JudgedControl
from harness.matrix.models import Host, Settings
from harness.plan import Cell
from harness.probe.protocol import ProbeOutput, parse_output, probe_args
from harness.results.records import CellRecord, CellStatus, HostEvidence, VerdictRecord
from harness.results.store.layout import utc_now
from harness.runtimes import CellPaths, Runtime
from harness.runtimes.base import tagged
from harness.scenarios import SCENARIOS, Scenario
from harness.scenarios.fence import PHASE_ORDER
from harness.staging import HostState
from harness.transport import Completed, Transport

# The remote `timeout` sends TERM at the deadline and KILL this much later.
KILL_GRACE = 5.0
# How long the harness waits past the remote deadline before abandoning the channel.
LOCAL_GRACE = 10.0
CLEANUP_TIMEOUT = 30.0
TIMEOUT_EXITS = (124, 137)
PROBE_DEADLINE_EXIT = 3  # the probe's own exit when its --deadline-ms passes
CANNOT_EXECUTE = 126  # what unshare, setpriv, env and sh exit when execve fails


def start_failure(runtime: str, done: Completed, *, workdir: str | None = None) -> str:
    """Why a sandbox ended before the probe printed anything. An execve refused
    (126, permission denied) is nearly always the probe out of the sandbox user's
    reach, not the wrapper: say so, and what to change. `harness hosts` knows the
    work folder and names it; a run points at `harness hosts`."""
    tail = (done.stderr.strip().splitlines() or [""])[-1][:300]
    if done.exit_status == CANNOT_EXECUTE and "permission denied" in tail.lower():
        folder = f" {workdir}" if workdir else ""
        return (
            f"{runtime} could not execute the probe (exit 126: {tail}): the sandbox's user"
            f" must be able to traverse every folder above the work folder{folder}; set"
            " `workdir` in the inventory to one it can (e.g. /var/tmp/harness)"
            + ("" if workdir else ", as `harness hosts` checks")
        )
    ended = f"signal {done.signal}" if done.signal else f"exited {done.exit_status}"
    said = f"{runtime} {ended} before the probe ran: {tail or '(no stderr)'}"
    if not done.signal and (not tail or "permission denied" in tail.lower()):
        # A wrapper that says nothing (or another exit for a refused execve): the
        # probe out of a non-root sandbox user's reach is still the likeliest cause.
        folder = f" {workdir}" if workdir else ""
        said += (
            f"; if the sandbox runs the probe as a user other than root, that user must be"
            f" able to traverse every folder above the work folder{folder} (`workdir` in"
            " the inventory, e.g. /var/tmp/harness)"
        )
    return said


def cell_status(
    done: Completed,
    output: ProbeOutput,
    *,
    elapsed: float,
    timeout: float,
    runtime: str = "the sandbox",
) -> tuple[CellStatus, str | None]:
    """How a finished sandbox command ended, judged strictly: only a clean exit
    with complete probe output is `complete`. A runtime that failed before the probe
    printed anything is one line naming the runtime, never the probe's confusion."""
    # The probe's deadline is this same timeout, passed down: on a busy machine it
    # can fire before the remote `timeout` does (exit 3 and a fatal "deadline").
    probe_deadline = output.fatal == "deadline" and done.exit_status == PROBE_DEADLINE_EXIT
    if (
        done.timed_out
        or probe_deadline
        or (done.exit_status in TIMEOUT_EXITS and elapsed >= timeout - 0.5)
    ):
        return CellStatus.TIMEOUT, f"exceeded the {timeout:g}s cell timeout; sandbox killed"
    if not output.complete:
        why = output.failure()
        if done.exit_status not in (0, None) or done.signal:
            tail = (done.stderr.strip().splitlines() or [""])[-1][:300]
            if output.start is None and not output.fatal:
                return CellStatus.ERROR, start_failure(runtime, done)
            exit_text = f"signal {done.signal}" if done.signal else f"exit {done.exit_status}"
            why = f"{why} ({exit_text}{': ' + tail if tail else ''})"
        return CellStatus.ERROR, why
    if not done.ok:
        shown = f"signal {done.signal}" if done.signal else f"exit {done.exit_status}"
        return CellStatus.ERROR, f"probe completed but the runtime ended with {shown}"
    return CellStatus.COMPLETE, None


# How long the probe's lingerer (`--linger`) outlives it, and how long after the
# sandbox's exit the host lets the runtime finish tearing down before it counts what
# is left of the cell as surviving it.
# Short: a runtime that waits for every process of its workload (a session, a cgroup)
# holds its cell that long, and a 20 s cell timeout must still hold; the host looks
# right after the command ends, well within it.
LINGER_S = 10.0
TEARDOWN_S = 2.0


def measures_exit(runtime: Runtime) -> bool:
    """Whether the host can see what the runtime leaves behind: a sandbox on the host's
    kernel (its processes are the host's), or a runtime whose own processes (the
    sentry, the VMM) carry the cell's id. A command runtime promising a kernel of its
    own hides both. A sandbox started elsewhere (exec) outlives its cells by design."""
    if runtime.kind == "exec":
        return False
    return runtime.kind in ("runsc", "microvm", "oci") or not runtime.promises_own_kernel


# $1 the cell's pattern (`tagged`), $2 its id but the first character, $3 that
# character, $4 "1" to kill whatever is found. Prints pgrep's lines for the cell, then
# KILLED if it killed them: when they are all the workload's own or when $4 says so.
# The workload's own is the probe's lingerer, which no waiting ends: a command line
# whose program is followed by `run --tag ID`. A launcher's helper that carries the
# probe's arguments further along its own (a relay forked by a shell script) is not:
# it is the runtime's, given TEARDOWN_S like a gofer, so that what it still sends in
# that time reaches the canary. The id travels in two parts, so that neither this
# shell's command line nor its login shell's names the cell.
SURVIVORS = r"""found=$(pgrep -af -- "$1"); s=$?
[ "$s" -le 1 ] || exit "$s"
[ -n "$found" ] || exit 0
printf '%s\n' "$found"
own="^[0-9]+ [^ ]+ run --tag $3$2 "
if [ "$4" = 1 ] || ! printf '%s\n' "$found" | sed 's/$/ /' | grep -qvE -- "$own"
then
  pkill -KILL -f -- "$1"
  echo harness-killed
fi
exit 0
"""
KILLED = "harness-killed"


async def survivors(transport: Transport, cell_id: str) -> list[str] | None:
    """What of the cell still runs on the host after its sandbox command ended: every
    process whose command line names the cell (the probe's lingerer, the runtime's
    own), given the runtime TEARDOWN_S to finish; those left are killed. None where
    the host could not be asked.

    One command per look, which also kills what it found once that is final: the
    workload's own at once, anything after TEARDOWN_S. A host a WAN away pays one
    round trip for this, not two."""
    deadline = time.monotonic() + TEARDOWN_S
    while True:
        final = "1" if time.monotonic() >= deadline else "0"
        argv = ("sh", "-c", SURVIVORS, "harness-survivors", tagged(cell_id), cell_id[1:],
                cell_id[:1], final)  # fmt: skip
        try:
            done = await transport.run(argv, timeout=CLEANUP_TIMEOUT)
        except TransportError:
            return None
        if done.exit_status != 0:  # no pgrep, or it failed
            return None
        lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
        killed = lines[-1:] == [KILLED]
        found = [line[:200] for line in lines if line != KILLED]
        # Only a runtime's processes still tearing down (a gofer, a VMM) are given
        # the time; the workload's own were killed at the first look.
        if not found or killed:
            return found[:5]
        await anyio.sleep(0.2)


def kill_tagged(cell_id: str) -> tuple[str, ...]:
    """A command killing every process whose command line names the cell (`tagged`)."""
    return ("pkill", "-KILL", "-f", "--", tagged(cell_id))


@dataclass(slots=True)
class HostSide:
    """What a cell runs with on its host."""

    transport: Transport
    state: HostState
    fixtures: HostFixtures
    settings: Settings
    # When (time.monotonic) the latest sandbox command of the host was seen over:
    # its sandbox had exited by then. A settle window counts from here, not from
    # the end of what the controller did with the cell afterwards.
    last_exit: float = 0.0


@dataclass(slots=True)
class HostContext:
    """Everything the cells of one host share during a run."""

    host: Host
    side: HostSide
    lease: RunLease | None = None
    control_done: anyio.Event = field(default_factory=anyio.Event)
    control_record: CellRecord | None = None
    _control: JudgedControl | None = None  # control_record's, for `control`
    # Cells judged only after the fixtures' settle window (None: judged at once).
    deferred: list[tuple[Cell, CellRecord]] | None = None
    pending: list[tuple[Cell, CellRecord, list[VerdictRecord]]] = field(default_factory=list)
    # Runtimes this host runs differently from the plan: a release build installed here.
    runtimes: dict[str, Runtime] = field(default_factory=dict)

    @property
    def state(self) -> HostState:
        return self.side.state

    @property
    def fixtures(self) -> HostFixtures:
        return self.side.fixtures

    def runtime(self, cell: Cell) -> Runtime:
        return self.runtimes.get(cell.runtime.name, cell.runtime)

    @property
    def control(self) -> JudgedControl | None:
        """The control record as the host's cells are judged against it: its outcomes
        worked out once, not again for each cell (a new record gets its own)."""
        record = self.control_record
        if record is None:
            return None
        if self._control is None or self._control.record is not record:
            self._control = JudgedControl(record)
        return self._control


def run_as(runtime: Runtime) -> str:
    """Whom the runtime's policy runs the workload as (its run_as_user, "" for no one),
    for the envelope's second witness: a host process of the workload's own uid."""
    policy = runtime.spec.policy
    user = policy.process.run_as_user if policy is not None else None
    return "" if user is None else str(user)  # a number or a portable name (Principal)


async def run_cell(
    host: HostSide, cell: Cell, runtime: Runtime, cell_id: str, blank: CellRecord
) -> CellRecord:
    """Run the cell's sandbox once and fill in `blank` with what it and the host showed."""
    state, timeout = host.state, host.settings.timeout
    setup = CellSetup(
        cell=cell,
        cell_id=cell_id,
        runtime=runtime,
        paths=CellPaths(
            probe=state.probe_path,
            workdir=state.workdir,
            cell_dir=f"{state.workdir}/cells/{cell_id}",
            cell_id=cell_id,
        ),
    )
    host.fixtures.prepare(setup)
    scenarios = phased_last([SCENARIOS[s] for s in cell.scenarios])
    phases = cell_phases(scenarios, setup, host.fixtures.phase_hooks(setup))
    envelope = Envelope.new(
        cell_id,
        sentinels=setup.sentinels,
        canary=setup.canary,
        phases=phases,
        check_timeout=host.settings.check_timeout,
        user=run_as(runtime),
        watch=any(s.name == "privilege-floor" for s in scenarios),
    )
    # A secret for this one sandbox start: output that does not echo it (with a
    # digest over its lines) was not printed by this cell's probe.
    cell_nonce = secrets.token_hex(16)
    options = host.fixtures.probe_options(setup)
    if measures_exit(runtime):
        options += ["--linger", f"{LINGER_S:g}"]
    if envelope.phases and setup.sentinels is not None:
        barrier = runtime.inside(setup.sentinels.allowed, role="allowed", cell_id=cell_id)
        options += ["--barrier", barrier]
    args = probe_args(
        [s.name for s in scenarios],
        check_timeout=host.settings.check_timeout,
        deadline=timeout,
        tag=cell_id,
        cell_nonce=cell_nonce,
        options=options,
    )
    invocation = runtime.invocation(setup.paths, args)
    sandbox = host.fixtures.wrap(setup, invocation.argv)
    argv = ("timeout", "-k", f"{KILL_GRACE:g}", f"{timeout:g}", *sandbox)
    started, t0 = utc_now(), time.monotonic()
    done: Completed | None = None
    report: Report | None = None
    reason: str | None = None
    try:
        done = await host.transport.run(
            envelope.wrap(argv), stdin=invocation.stdin, timeout=timeout + LOCAL_GRACE
        )
        done, report = envelope.open(done)
        if report is not None and report.phases is not None:
            setup.evidence["phases"] = dict(report.phases)
    except TransportError as exc:
        reason = f"transport failed during the cell: {exc.reason}"
    finally:
        if done is None or not done.ok:
            with anyio.CancelScope(shield=True):
                await cleanup(host.transport, (kill_tagged(cell_id), *invocation.cleanup))
    elapsed = time.monotonic() - t0
    host.last_exit = max(host.last_exit, t0 + elapsed)
    output = (
        parse_output(runtime.filter_output(done.stdout), cell_nonce=cell_nonce)
        if done
        else ProbeOutput()
    )
    if done is not None and done.ok and measures_exit(runtime):
        with anyio.CancelScope(shield=True):
            setup.evidence["survivors"] = await survivors(host.transport, cell_id)
    await host.fixtures.collect(setup, report, output)
    record = replace(
        blank,
        reason=reason,
        started=started,
        ended=utc_now(),
        elapsed=round(elapsed, 3),
        host_side=HostEvidence(tag=cell_id, **setup.evidence),
    )
    if done is None:
        return record
    if report is not None and report.setup_error is not None:
        return replace(record, status=CellStatus.ERROR, reason=report.setup_reason)
    status, why = cell_status(
        done, output, elapsed=elapsed, timeout=timeout, runtime=cell.runtime.binary
    )
    return replace(
        record,
        status=status,
        reason=why,
        exit_status=done.exit_status,
        signal=done.signal,
        stdout=done.stdout,
        stderr=done.stderr[-4000:],
        probe_start=output.start,
        facts=output.facts,
        checks=output.checks,
        info=output.info,
    )


# A phase no fixture acts at still has its barrier released: the control cell's and
# an unsupervised sandbox's attempts run as the supervised ones do. No hook: the
# envelope reports it as NO_ACTION and tells the probe not to wait for an effect.
NO_ACTION_HOOK = ""


def phased_last(scenarios: list[Scenario]) -> list[Scenario]:
    """Scenarios in phases run after the others: what their host hooks do (kill the
    supervisor) must not change the other scenarios' attempts. Among them, the
    order is PHASE_ORDER's: a supervisor that was killed can no longer revoke."""
    return sorted(scenarios, key=lambda s: PHASE_ORDER.index(s.phases[0]) if s.phases else -1)


def cell_phases(
    scenarios: list[Scenario], setup: CellSetup, hooks: dict[str, str]
) -> list[tuple[str, str]]:
    """(phase, host hook) for each barrier the cell's probe will stop at. None when
    the sandbox does not share the allowed folder with the host (a VM's copy): the
    probe gets no barrier folder and its phased checks say so."""
    if setup.sentinels is None or not setup.runtime.shares_allowed:
        return []
    return [(name, hooks.get(name, NO_ACTION_HOOK)) for s in scenarios for name in s.phases]


async def cleanup(transport: Transport, commands: tuple[tuple[str, ...], ...]) -> None:
    """Best effort teardown; a cleanup that fails is not worth failing the run."""
    for argv in commands:
        try:
            with anyio.move_on_after(CLEANUP_TIMEOUT):
                await transport.run(argv, timeout=CLEANUP_TIMEOUT)
        except TransportError:
            return
