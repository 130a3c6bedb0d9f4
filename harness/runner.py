"""Fan a plan of cells out over hosts, concurrently, and judge each cell as it ends.

One connection per host, one sandbox start per cell, a global and a per-host
limit, a per-cell timeout that kills the sandbox. A host or cell that fails is
recorded with its reason and the rest of the matrix goes on.

Per host: connect; learn its facts and runtimes and stage the probe (one
command); start the fixtures the plan's scenarios need (`hostside/compose.py`).
Per cell: run it once (`execution.py`); then wait for the host's control cell and
for any fixture's settle window, judge, record. It names no scenario or property.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from harness.errors import HarnessError, ResultsError, failure_reason
from harness.execution import HostContext, HostSide, run_cell
from harness.exitcodes import ExitCode
from harness.hostside.base import HostSetup
from harness.hostside.canary import start_order
from harness.hostside.canary_setup import high_port
from harness.hostside.compose import HostFixtures, compose, needs_of, targets_of
from harness.hostside.lease import claim, keep_renewing, release
from harness.judge.cell import judge_cell
from harness.judge.properties import JudgedControl
from harness.judge.verdicts import MISMATCH, exit_code, settle_reruns
from harness.matrix import Host
from harness.observer import Observer, SilentObserver
from harness.plan import Cell, Plan
from harness.probe import BuiltProbe, Probes
from harness.results import CellRecord, CellStatus, ResultsStore, VerdictRecord
from harness.results.store.layout import utc_now
from harness.runtimes import Runtime
from harness.runtimes.release import release_of, stage_release
from harness.scenarios import SCENARIOS
from harness.staging import HostState, claim_place, prepare_host
from harness.text import REASON_LIMIT, shorten
from harness.transport import open_transport
from harness.transport.guard import StallGuard
from harness.transport.retry import connect_with_retries

if TYPE_CHECKING:
    from harness.releases.builds import ReleaseBuilds

__all__ = ["RunOutcome", "Runner"]

log = logging.getLogger(__name__)
HOSTS_PER_SLOT = 4  # hosts under way per cell slot: some prepare or settle, some run cells


def without_checks(verdicts: list[VerdictRecord]) -> list[VerdictRecord]:
    """The verdicts without their check results, as a run's outcome keeps them."""
    return [replace(v, checks=[]) if v.checks else v for v in verdicts]


@dataclass(slots=True)
class RunOutcome:
    run_id: str
    # Cell records are not kept here: they are in cells.jsonl, and a fleet's records
    # (raw probe output, facts, checks) would hold memory for nothing. Nor, unless the
    # runner is asked to keep them, the verdicts' check results (`Runner._kept`).
    verdicts: list[VerdictRecord] = field(default_factory=list)
    hosts: dict[str, dict[str, object]] = field(default_factory=dict)
    interrupted: bool = False
    store_error: str | None = None  # the results folder stopped accepting writes

    @property
    def exit_code(self) -> ExitCode:
        """The contract's code; lost results make a clean run inconclusive (3)."""
        code = exit_code(self.verdicts)
        return ExitCode.INCONCLUSIVE if code == ExitCode.OK and self.store_error else code


class Runner:
    """Executes one plan into one results store."""

    def __init__(
        self,
        plan: Plan,
        *,
        probe: BuiltProbe | Probes,
        store: ResultsStore,
        observer: Observer | None = None,
        selection: dict[str, Any] | None = None,
        resumed_from: dict[str, Any] | None = None,
        prior: Sequence[VerdictRecord] = (),
        reruns: int = 0,
        releases: ReleaseBuilds | None = None,
        keep_checks: bool = False,
    ) -> None:
        self.plan = plan
        self.reruns = reruns
        self.keep_checks = keep_checks
        self.selection = selection or {}
        self.resumed_from = resumed_from
        self.prior = list(prior)
        self.settings = plan.matrix.settings
        self.probes = Probes.of(probe)
        self.probe = self.probes.first  # the controller's own build
        self.store = store
        self.observer = observer or SilentObserver()
        self.outcome = RunOutcome(run_id=secrets.token_hex(4))
        self.nonce = secrets.token_hex(8)
        self.high_port = high_port(plan.matrix.canary)
        self._limit = anyio.CapacityLimiter(self.settings.concurrency)
        self._hosts = anyio.Semaphore(HOSTS_PER_SLOT * self.settings.concurrency)
        self._serial = 0
        self._contexts: dict[str, HostContext] = {}  # hosts not yet over
        self._places: dict[tuple[str, str], str] = {}  # (machine id, workdir) -> host
        scenarios = [SCENARIOS[s] for s in plan.scenarios]
        self._needs, self._targets = needs_of(scenarios), targets_of(scenarios)
        self.releases = releases
        if releases is None and any(release_of(c.runtime) for c in plan.cells):
            from harness.releases.builds import ReleaseBuilds  # httpx: only when needed

            self.releases = ReleaseBuilds(self.settings.index)

    # -- bookkeeping ---------------------------------------------------------------

    def manifest(self, *, started: str, ended: str | None) -> dict[str, Any]:
        from harness.results.store.manifest import run_manifest  # the results folder's owner

        return run_manifest(
            run_id=self.outcome.run_id,
            plan=self.plan,
            started=started,
            ended=ended,
            interrupted=self.outcome.interrupted,
            probe={"sha256": self.probe.sha256, "compiler": self.probe.compiler},
            probes=self.probes.manifest(),
            releases=self.releases.manifest() if self.releases else None,
            hosts=self.outcome.hosts,
            selection=self.selection,
            exit_code=exit_code([*self.prior, *self.outcome.verdicts, *self._held()])
            if ended
            else None,
            resumed_from=self.resumed_from,
        ).to_json()

    def _record(
        self,
        cell: Cell,
        record: CellRecord,
        *,
        control: CellRecord | JudgedControl | None,
        pending: list[tuple[Cell, CellRecord, list[VerdictRecord]]] | None = None,
    ) -> None:
        """Store a cell and its verdicts. With `--reruns`, a mismatched cell's
        verdicts wait in `pending` until its reruns settle them."""
        if record.reason is not None and len(record.reason) > REASON_LIMIT:
            record = replace(record, reason=shorten(record.reason))  # never copied long
        # A cancelled cell has no verdicts yet: `--resume` runs it and judges it then.
        cancelled = record.status is CellStatus.CANCELLED
        verdicts = [] if cancelled else judge_cell(cell, record, control=control)
        held = pending is not None and any(v.verdict in MISMATCH for v in verdicts)
        self._write(record, [] if held else verdicts)
        if held and pending is not None:
            pending.append((cell, record, verdicts))
        else:
            self.outcome.verdicts.extend(self._kept(verdicts))
        self.observer.cell_finished(cell, record, verdicts)

    def _kept(self, verdicts: list[VerdictRecord]) -> list[VerdictRecord]:
        """The verdicts as the outcome keeps them: without each property's check results
        (in verdicts.jsonl already), unless asked. A fleet's check results held to the
        end were most of a run's memory: 576 of 619 MB over 10,000 full cells."""
        return verdicts if self.keep_checks else without_checks(verdicts)

    def _held(self) -> list[VerdictRecord]:
        """Verdicts still waiting for their reruns (an interrupted run keeps them)."""
        return [v for c in self._contexts.values() for _c, _r, held in c.pending for v in held]

    def _write(self, record: CellRecord | None, verdicts: list[VerdictRecord]) -> None:
        if self.outcome.store_error is not None:
            return
        try:
            if record is not None:
                self.store.add_cell(record)
            self.store.add_verdicts(verdicts)
        except ResultsError as exc:
            # The run goes on; verdicts stay in memory and are still reported.
            log.error("%s; the run continues without writing results", exc)
            self.outcome.store_error = str(exc)

    async def _rerun(self, ctx: HostContext, cell: Cell, first: list[VerdictRecord]) -> None:
        """Run a mismatched cell again, `reruns` times, then settle its verdicts."""
        attempts = [first]
        for attempt in range(2, self.reruns + 2):
            async with self._limit:
                record = replace(await self._execute(ctx, cell), attempt=attempt)
            self._write(record, [])
            attempts.append(judge_cell(cell, record, control=ctx.control))
        final = settle_reruns(attempts)
        self._write(None, final)
        self.outcome.verdicts.extend(self._kept(final))
        first.clear()  # settled: no longer held

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
            control=cell.control,
            host_kernel=state.kernel_release if state else None,
            runtime_version=runtime.version if runtime else None,
        )

    # -- the run -----------------------------------------------------------------------

    async def run(self) -> RunOutcome:
        """Run every cell; returns when all are recorded or the run is cancelled."""
        started = utc_now()
        self.store.write_manifest(self.manifest(started=started, ended=None))
        try:
            async with contextlib.AsyncExitStack() as stack:
                if self.releases is not None:
                    await stack.enter_async_context(self.releases)
                await self._run_hosts()
        except anyio.get_cancelled_exc_class():
            self.outcome.interrupted = True
            raise
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    self.store.write_manifest(self.manifest(started=started, ended=utc_now()))
                except ResultsError as exc:
                    self.outcome.store_error = self.outcome.store_error or str(exc)
        return self.outcome

    async def _run_hosts(self) -> None:
        """Start hosts in plan order, not all at once: each holds a connection till its end."""
        cells: dict[str, list[Cell]] = {}
        for host in self.plan.hosts:  # the manifest names every host, started or not
            cells[host.name], self.outcome.hosts[host.name] = [], host.reached_by()
        for cell in self.plan.cells:
            cells[cell.host.name].append(cell)
        async with anyio.create_task_group() as tg:
            for index, host in enumerate(self.plan.hosts):
                await self._hosts.acquire()
                tg.start_soon(self._run_host, host, index, cells.pop(host.name))

    async def _run_host(self, host: Host, index: int, cells: list[Cell]) -> None:
        entry = self.outcome.hosts[host.name]
        transport = StallGuard(open_transport(host))  # one stall costs the host one deadline
        ctx: HostContext | None = None
        runtimes = list({c.runtime.name: c.runtime for c in cells}.values())
        fixtures = HostFixtures(compose(self._needs, runtimes))
        finished = False

        async def finish() -> None:
            """Stop the fixtures and give up the lease, once."""
            nonlocal finished
            if finished:
                return
            finished = True
            with anyio.CancelScope(shield=True):
                await fixtures.stop()
                if ctx is not None and ctx.lease is not None:
                    await _quietly(release(transport, ctx.lease, netns=fixtures.namespace()))

        try:
            try:
                await connect_with_retries(transport, host)
                if ssh := transport.describe():
                    entry["ssh"] = ssh
                state = await prepare_host(
                    transport,
                    self.probes,
                    workdir=host.workdir,
                    runtimes=[rt for rt in runtimes if not release_of(rt)],
                )
                claim_place(self._places, host.name, state)
                ctx = HostContext(host, HostSide(transport, state, fixtures, self.settings))
                self._contexts[host.name] = ctx
                # Own the host first: clean what dead runs left, take this run's lease.
                ctx.lease = await claim(transport, state.workdir, self.outcome.run_id)
                if ctx.lease.cleaned:
                    entry["cleaned_runs"] = ctx.lease.cleaned
                    log.info("%s: cleaned up after dead runs %s", host.name, ctx.lease.cleaned)
                setup = HostSetup(
                    transport=transport,
                    state=state,
                    index=index,
                    run_id=self.outcome.run_id,
                    nonce=self.nonce,
                    high_port=self.high_port,
                    canary=self.plan.matrix.canary,
                    needs=self._needs,
                    targets=self._targets,
                    runtimes=runtimes,
                    lease=ctx.lease.path,
                )
                builds = [partial(self._stage_release, ctx, rt) for rt in runtimes]
                await fixtures.start(setup, *builds)
                state.runtimes = {rt.name: state.runtimes[rt.name] for rt in runtimes}
                entry.update(fixtures.manifest())
                entry.update(state.manifest())
                if fixtures.window() is not None:
                    ctx.deferred = []
            except Exception as exc:  # a dead host, or a bug: either way, record and go on
                if not isinstance(exc, HarnessError):
                    log.exception("internal error preparing %s", host.name)
                reason = failure_reason(exc)
                entry.update(fixtures.manifest(), error=reason)
                self.observer.host_ready(host.name, reason)
                for cell in cells:
                    record = self._blank(cell, CellStatus.UNREACHABLE, reason, state=None)
                    self._record(cell, record, control=None)
                return
            self.observer.host_ready(host.name, None)
            if not any(c.is_host_runtime for c in cells):
                ctx.control_done.set()  # nothing to wait for: blocked checks stay inconclusive
            host_limit = anyio.CapacityLimiter(host.max_cells)
            async with anyio.create_task_group() as renewing:
                if ctx.lease is not None:
                    renewing.start_soon(keep_renewing, transport, ctx.lease)
                try:
                    async with anyio.create_task_group() as tg:
                        for cell in sorted(cells, key=start_order):  # the control first
                            tg.start_soon(self._run_cell, ctx, cell, host_limit)
                    await self._settle_host(ctx)
                    async with anyio.create_task_group() as tg:
                        for cell, _record, verdicts in ctx.pending:
                            tg.start_soon(self._rerun, ctx, cell, verdicts)
                    del self._contexts[host.name]  # settled: nothing of it is held
                finally:
                    # Teardown while the run's lock is still held: a cleaner must not
                    # take a run that is tearing down for a dead one.
                    await finish()
                    renewing.cancel_scope.cancel()
        finally:
            await finish()
            with anyio.CancelScope(shield=True):
                await transport.aclose()
            self._hosts.release()

    async def _stage_release(self, ctx: HostContext, runtime: Runtime) -> None:
        """Run the runtime with its release build on this host (`runtimes/release.py`)."""
        if self.releases is None or not release_of(runtime):
            return
        replaced = await stage_release(self.releases, ctx.side.transport, ctx.state, runtime)
        if replaced is not None:
            ctx.runtimes[runtime.name] = replaced

    async def _run_cell(
        self, ctx: HostContext, cell: Cell, host_limit: anyio.CapacityLimiter
    ) -> None:
        is_control = cell.is_host_runtime
        record: CellRecord | None = None
        try:
            status = ctx.state.runtimes[cell.runtime.name]
            refused = ctx.fixtures.refuse(cell)
            if not status.available:
                reason = f"runtime unavailable on the host: {status.reason}"
                record = self._blank(cell, CellStatus.UNAVAILABLE, reason, state=ctx.state)
            elif refused is not None:
                record = self._blank(cell, CellStatus.ERROR, refused, state=ctx.state)
            else:
                async with self._limit, host_limit:
                    self.observer.cell_started(cell)
                    try:
                        record = await self._execute(ctx, cell)
                    except anyio.get_cancelled_exc_class():
                        # Interrupted mid-cell: the sandbox was torn down; say so.
                        cancelled = self._blank(
                            cell, CellStatus.CANCELLED, "run interrupted", state=ctx.state
                        )
                        self._record(cell, cancelled, control=None)
                        raise
                    except Exception as exc:  # a bug must cost one cell, not the matrix
                        log.exception("internal error in cell %s", cell.key)
                        why = f"internal error: {type(exc).__name__}: {exc}"
                        record = self._blank(cell, CellStatus.ERROR, why, state=ctx.state)
        finally:
            if is_control and not ctx.control_done.is_set():
                ctx.control_record = record  # the first host-runtime cell is the control
                ctx.control_done.set()
        if ctx.deferred is not None and record is not None:
            ctx.deferred.append((cell, record))  # judged after the settle window
            return
        if not is_control:
            await ctx.control_done.wait()
        pending = ctx.pending if self.reruns and not cell.control else None
        self._record(cell, record, control=ctx.control, pending=pending)

    async def _settle_host(self, ctx: HostContext) -> None:
        """Keep the fixtures up for their settle window after the host's last sandbox
        exited (an arrival that carries a cell's tag, however late, turns that attempt into
        an escape), and only then judge the cells. An interrupted window judges
        nothing: the cells are recorded as cancelled, so `--resume` runs them again."""
        deferred, ctx.deferred = ctx.deferred, None
        if not deferred:
            return
        try:
            evidence = await ctx.fixtures.late([r for _c, r in deferred], since=ctx.side.last_exit)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                for cell, record in deferred:
                    why = "run interrupted during the settle window"
                    cancelled = replace(record, status=CellStatus.CANCELLED, reason=why)
                    self._record(cell, cancelled, control=None)
            raise
        settled = [
            (cell, replace(record, host_side=found))
            for (cell, record), found in zip(deferred, evidence, strict=True)
        ]
        for cell, record in settled:
            control = ctx.control_record
            if cell.is_host_runtime and control is not None and record.started == control.started:
                ctx.control_record = record
        settled.sort(key=lambda pair: not pair[0].is_host_runtime)  # the control first, as before
        for cell, record in settled:
            pending = ctx.pending if self.reruns and not cell.control else None
            self._record(cell, record, control=ctx.control, pending=pending)

    async def _execute(self, ctx: HostContext, cell: Cell) -> CellRecord:
        self._serial += 1
        blank = self._blank(cell, CellStatus.UNREACHABLE, None, state=ctx.state)
        cell_id = f"harness-{self.outcome.run_id}-{self._serial:05d}"
        return await run_cell(ctx.side, cell, ctx.runtime(cell), cell_id, blank)


async def _quietly(awaitable: Any) -> None:
    try:
        await awaitable
    except HarnessError as exc:
        log.warning("teardown failed: %s", exc)
