"""Fan a plan of cells out over hosts, concurrently, and judge each cell as it ends.

One connection per host, one sandbox start per cell, a global and a per-host
limit, a per-cell timeout that kills the sandbox. A host or cell that fails is
recorded with its reason and the rest of the matrix goes on.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import anyio

from harness._version import __version__
from harness.errors import HarnessError, TransportError
from harness.probe import BuiltProbe
from harness.probe.protocol import ProbeOutput, parse_output, probe_args
from harness.results import (
    CellRecord,
    CellStatus,
    ResultsStore,
    VerdictRecord,
    exit_code,
    judge_facts,
)
from harness.results.store import utc_now
from harness.runtimes import CellPaths, Runtime, make_runtime
from harness.scenarios import SCENARIOS
from harness.spec import Host, Matrix
from harness.staging import HostState, RuntimeStatus, check_runtimes, stage_probe
from harness.transport import Completed, Transport, open_transport

log = logging.getLogger(__name__)

# The remote `timeout` sends TERM at the deadline and KILL this much later.
KILL_GRACE = 5.0
# How long the harness waits past the remote deadline before abandoning the channel.
LOCAL_GRACE = 10.0
CLEANUP_TIMEOUT = 30.0
TIMEOUT_EXITS = (124, 137)


@dataclass(frozen=True, slots=True)
class Cell:
    """One (host, runtime) pair: one sandbox start runs all its scenarios."""

    host: Host
    runtime: Runtime
    scenarios: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.host.name}/{self.runtime.name}"


@dataclass(frozen=True, slots=True)
class Plan:
    matrix: Matrix
    cells: tuple[Cell, ...]

    @property
    def hosts(self) -> tuple[Host, ...]:
        return tuple(dict.fromkeys(c.host for c in self.cells))


def make_plan(
    matrix: Matrix,
    *,
    hosts: Sequence[str] = (),
    runtimes: Sequence[str] = (),
    scenarios: Sequence[str] = (),
) -> Plan:
    """Cells for the matrix, narrowed by the CLI filters (already validated)."""
    chosen_scenarios = tuple(s for s in matrix.scenarios if not scenarios or s in scenarios)
    bound = {name: make_runtime(name, spec) for name, spec in matrix.runtimes.items()}
    cells = tuple(
        Cell(host=h, runtime=rt, scenarios=chosen_scenarios)
        for h in matrix.hosts
        if not hosts or h.name in hosts
        for name, rt in bound.items()
        if not runtimes or name in runtimes
    )
    return Plan(matrix=matrix, cells=cells)


class Observer(Protocol):
    """Told about progress; the console implements it, tests may too."""

    def host_ready(self, host: str, error: str | None) -> None: ...

    def cell_started(self, cell: Cell) -> None: ...

    def cell_finished(
        self, cell: Cell, record: CellRecord, verdicts: list[VerdictRecord]
    ) -> None: ...


class SilentObserver:
    def host_ready(self, host: str, error: str | None) -> None:
        pass

    def cell_started(self, cell: Cell) -> None:
        pass

    def cell_finished(self, cell: Cell, record: CellRecord, verdicts: list[VerdictRecord]) -> None:
        pass


@dataclass(slots=True)
class RunOutcome:
    run_id: str
    verdicts: list[VerdictRecord] = field(default_factory=list)
    cells: list[CellRecord] = field(default_factory=list)
    hosts: dict[str, dict[str, object]] = field(default_factory=dict)
    interrupted: bool = False

    @property
    def exit_code(self) -> int:
        return exit_code(self.verdicts)


def cell_status(
    done: Completed, output: ProbeOutput, *, elapsed: float, timeout: float
) -> tuple[CellStatus, str | None]:
    """How a finished sandbox command ended, judged strictly: only a clean exit
    with complete probe output is `complete`."""
    if done.timed_out or (done.exit_status in TIMEOUT_EXITS and elapsed >= timeout - 0.5):
        return CellStatus.TIMEOUT, f"exceeded the {timeout:g}s cell timeout; sandbox killed"
    if not output.complete:
        why = output.failure()
        if done.exit_status not in (0, None) or done.signal:
            tail = (done.stderr.strip().splitlines() or [""])[-1][:200]
            exit_text = f"signal {done.signal}" if done.signal else f"exit {done.exit_status}"
            why = f"{why} ({exit_text}{': ' + tail if tail else ''})"
        return CellStatus.ERROR, why
    if not done.ok:
        shown = f"signal {done.signal}" if done.signal else f"exit {done.exit_status}"
        return CellStatus.ERROR, f"probe completed but the runtime ended with {shown}"
    return CellStatus.COMPLETE, None


def kill_tagged(cell_id: str) -> tuple[str, ...]:
    """A command killing every process whose command line names the cell.

    The bracket keeps the pattern from matching the shell that runs pkill itself;
    ids have a fixed width, so one never matches a prefix of another.
    """
    return ("pkill", "-KILL", "-f", "--", f"[{cell_id[0]}]{cell_id[1:]}")


class Runner:
    """Executes one plan into one results store."""

    def __init__(
        self,
        plan: Plan,
        *,
        probe: BuiltProbe,
        store: ResultsStore,
        observer: Observer | None = None,
    ) -> None:
        self.plan = plan
        self.settings = plan.matrix.settings
        self.probe = probe
        self.store = store
        self.observer = observer or SilentObserver()
        self.outcome = RunOutcome(run_id=secrets.token_hex(4))
        self._limit = anyio.CapacityLimiter(self.settings.concurrency)
        self._serial = 0

    # -- bookkeeping ---------------------------------------------------------------

    def manifest(self, *, started: str, ended: str | None) -> dict[str, object]:
        m = self.plan.matrix
        return {
            "harness_version": __version__,
            "run_id": self.outcome.run_id,
            "matrix": {"name": m.name, "path": str(m.path), "sha256": m.sha256},
            "started": started,
            "ended": ended,
            "interrupted": self.outcome.interrupted,
            "settings": self.settings.model_dump(),
            "probe": {"sha256": self.probe.sha256, "compiler": self.probe.compiler},
            "scenarios": list(self.plan.cells[0].scenarios) if self.plan.cells else [],
            "cells_planned": len(self.plan.cells),
            "hosts": self.outcome.hosts,
            "exit_code": self.outcome.exit_code if ended else None,
        }

    def _record(self, cell: Cell, record: CellRecord) -> list[VerdictRecord]:
        fact_ids = [f for s in cell.scenarios for f in SCENARIOS[s].facts]
        verdicts = judge_facts(
            record,
            fact_ids=fact_ids,
            expectations=cell.runtime.spec.facts,
            own_kernel=cell.runtime.promises_own_kernel,
        )
        self.store.add_cell(record)
        self.store.add_verdicts(verdicts)
        self.outcome.cells.append(record)
        self.outcome.verdicts.extend(verdicts)
        self.observer.cell_finished(cell, record, verdicts)
        return verdicts

    def _blank(
        self, cell: Cell, status: CellStatus, reason: str | None, *, state: HostState | None
    ) -> CellRecord:
        """A cell record with no probe output yet; `replace` fills in the rest."""
        now = utc_now()
        runtime = state.runtimes.get(cell.runtime.name) if state else None
        return CellRecord(
            run_id=self.outcome.run_id,
            host=cell.host.name,
            runtime=cell.runtime.name,
            kind=cell.runtime.kind,
            scenarios=list(cell.scenarios),
            status=status,
            reason=reason,
            started=now,
            ended=now,
            elapsed=0.0,
            host_kernel=state.kernel_release if state else None,
            runtime_version=runtime.version if runtime else None,
        )

    def _failed(
        self, cell: Cell, status: CellStatus, reason: str, *, state: HostState | None = None
    ) -> None:
        self._record(cell, self._blank(cell, status, reason, state=state))

    # -- the run -----------------------------------------------------------------------

    async def run(self) -> RunOutcome:
        """Run every cell; returns when all are recorded or the run is cancelled."""
        started = utc_now()
        self.store.write_manifest(self.manifest(started=started, ended=None))
        try:
            async with anyio.create_task_group() as tg:
                for host in self.plan.hosts:
                    cells = [c for c in self.plan.cells if c.host is host]
                    tg.start_soon(self._run_host, host, cells)
        except anyio.get_cancelled_exc_class():
            self.outcome.interrupted = True
            raise
        finally:
            with anyio.CancelScope(shield=True):
                self.store.write_manifest(self.manifest(started=started, ended=utc_now()))
        return self.outcome

    async def _run_host(self, host: Host, cells: list[Cell]) -> None:
        entry: dict[str, object] = {
            "transport": host.transport,
            "address": host.address,
            "port": host.port if host.transport == "ssh" else None,
            "user": host.user,
        }
        self.outcome.hosts[host.name] = entry
        transport = open_transport(host)
        try:
            try:
                await transport.connect()
                state = await stage_probe(transport, self.probe, workdir=host.workdir)
                state.runtimes = await check_runtimes(transport, [c.runtime for c in cells])
            except HarnessError as exc:
                reason = str(exc.reason) if isinstance(exc, TransportError) else str(exc)
                entry["error"] = reason
                self.observer.host_ready(host.name, reason)
                for cell in cells:
                    self._failed(cell, CellStatus.UNREACHABLE, reason)
                return
            entry.update(state.manifest())
            self.observer.host_ready(host.name, None)
            host_limit = anyio.CapacityLimiter(host.max_cells)
            async with anyio.create_task_group() as tg:
                for cell in cells:
                    tg.start_soon(self._run_cell, transport, state, cell, host_limit)
        finally:
            with anyio.CancelScope(shield=True):
                await transport.aclose()

    async def _run_cell(
        self, transport: Transport, state: HostState, cell: Cell, host_limit: anyio.CapacityLimiter
    ) -> None:
        status: RuntimeStatus = state.runtimes[cell.runtime.name]
        if not status.available:
            reason = f"runtime unavailable on the host: {status.reason}"
            self._failed(cell, CellStatus.UNAVAILABLE, reason, state=state)
            return
        async with self._limit, host_limit:
            self.observer.cell_started(cell)
            try:
                record = await self._execute(transport, state, cell)
            except anyio.get_cancelled_exc_class():
                # Interrupted mid-cell: its sandbox was torn down by _execute; say so.
                self._failed(cell, CellStatus.CANCELLED, "run interrupted", state=state)
                raise
            except Exception as exc:  # a bug must cost one cell, not the matrix
                log.exception("internal error in cell %s", cell.key)
                why = f"internal error: {type(exc).__name__}: {exc}"
                self._failed(cell, CellStatus.ERROR, why, state=state)
                return
        self._record(cell, record)

    async def _execute(self, transport: Transport, state: HostState, cell: Cell) -> CellRecord:
        self._serial += 1
        cell_id = f"harness-{self.outcome.run_id}-{self._serial:05d}"
        paths = CellPaths(
            probe=state.probe_path,
            workdir=state.workdir,
            cell_dir=f"{state.workdir}/cells/{cell_id}",
            cell_id=cell_id,
        )
        timeout = self.settings.timeout
        args = probe_args(
            [SCENARIOS[s].probe_name for s in cell.scenarios],
            check_timeout=self.settings.check_timeout,
            deadline=timeout,
            tag=cell_id,
        )
        invocation = cell.runtime.invocation(paths, args)
        argv = ("timeout", "-k", f"{KILL_GRACE:g}", f"{timeout:g}", *invocation.argv)
        started, t0 = utc_now(), time.monotonic()
        done: Completed | None = None
        reason: str | None = None
        try:
            done = await transport.run(argv, stdin=invocation.stdin, timeout=timeout + LOCAL_GRACE)
        except TransportError as exc:
            reason = f"transport failed during the cell: {exc.reason}"
        finally:
            if done is None or not done.ok:
                with anyio.CancelScope(shield=True):
                    await self._cleanup(transport, (kill_tagged(cell_id), *invocation.cleanup))
        elapsed = time.monotonic() - t0
        blank = replace(
            self._blank(cell, CellStatus.UNREACHABLE, reason, state=state),
            started=started,
            ended=utc_now(),
            elapsed=round(elapsed, 3),
        )
        if done is None:
            return blank
        output = parse_output(done.stdout)
        cell_state, why = cell_status(done, output, elapsed=elapsed, timeout=timeout)
        return replace(
            blank,
            status=cell_state,
            reason=why,
            exit_status=done.exit_status,
            signal=done.signal,
            stdout=done.stdout,
            stderr=done.stderr[-4000:],
            probe_start=output.start,
            facts=output.facts,
        )

    async def _cleanup(self, transport: Transport, commands: tuple[tuple[str, ...], ...]) -> None:
        """Best effort teardown; a cleanup that fails is not worth failing the run."""
        for argv in commands:
            try:
                with anyio.move_on_after(CLEANUP_TIMEOUT):
                    await transport.run(argv, timeout=CLEANUP_TIMEOUT)
            except TransportError:
                return


async def execute(
    plan: Plan, *, probe: BuiltProbe, store: ResultsStore, observer: Observer | None = None
) -> RunOutcome:
    """Run a plan into a store; see `Runner`."""
    return await Runner(plan, probe=probe, store=store, observer=observer).run()
