"""Fan a plan of cells out over hosts, concurrently, and judge each cell as it ends.

One connection per host, one sandbox start per cell, a global and a per-host
limit, a per-cell timeout that kills the sandbox. A host or cell that fails is
recorded with its reason and the rest of the matrix goes on.

Per host: connect; learn its facts and runtimes and stage the probe (one
command); start the canary and the privilege helpers if a scenario needs them.
Per cell, one command (`fixtures/envelope.py`): make the sentinels, run the
sandbox once, report the host-side evidence; then wait for the host's control
cell, judge, record.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit, urlunsplit

import anyio

from harness._version import __version__
from harness.errors import ArtifactError, CommandError, HarnessError, ResultsError, TransportError
from harness.exitcodes import ExitCode
from harness.fixtures.canary import (
    RunningCanary,
    canary_events,
    canary_netns,
    start_canary,
    stop_canary,
)
from harness.fixtures.decisions import fetch_records
from harness.fixtures.envelope import Envelope, Report
from harness.fixtures.filesystem import Sentinels, inspect_sentinels
from harness.fixtures.helpers import Helpers, stage_helpers
from harness.fixtures.hostfs import read_host_fs
from harness.fixtures.lease import RunLease, claim, keep_renewing, release
from harness.fixtures.supervisor import RunningSupervisor, start_supervisor, stop_supervisor
from harness.judge import judge_cell
from harness.plan import Cell, Plan, make_plan
from harness.probe import BuiltProbe, Probes
from harness.probe.protocol import ProbeOutput, parse_output, probe_args
from harness.results import CellRecord, CellStatus, ResultsStore, VerdictRecord, exit_code
from harness.results.arrivals import of_cell
from harness.results.attribution import find_records
from harness.results.store import utc_now
from harness.results.verdicts import MISMATCH, settle_reruns
from harness.runtimes import CellPaths, Runtime, make_runtime
from harness.scenarios import SCENARIOS
from harness.scenarios.attribution import ALLOWED_CONNECT
from harness.spec import Host, RuntimeSpec
from harness.spec.models import RunscRuntimeSpec
from harness.staging import HostState, RuntimeStatus, prepare_host
from harness.text import REASON_LIMIT, shorten
from harness.transport import Completed, Transport, open_transport

if TYPE_CHECKING:
    from harness.bisect.releases import ReleaseBuilds

__all__ = ["Cell", "Plan", "RunOutcome", "Runner", "execute", "make_plan"]

log = logging.getLogger(__name__)

# The remote `timeout` sends TERM at the deadline and KILL this much later.
KILL_GRACE = 5.0
# How long the harness waits past the remote deadline before abandoning the channel.
LOCAL_GRACE = 10.0
CLEANUP_TIMEOUT = 30.0
TIMEOUT_EXITS = (124, 137)
PROBE_DEADLINE_EXIT = 3  # the probe's own exit when its --deadline-ms passes
# How long after a cell an intercepted-looking attempt waits for late arrivals.
SETTLE = 0.5


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
    store_error: str | None = None  # the results folder stopped accepting writes

    @property
    def exit_code(self) -> ExitCode:
        """The contract's code; lost results make a clean run inconclusive (3)."""
        code = exit_code(self.verdicts)
        return ExitCode.INCONCLUSIVE if code == ExitCode.OK and self.store_error else code


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
                ended = f"signal {done.signal}" if done.signal else f"exited {done.exit_status}"
                why = f"{runtime} {ended} before the probe ran: {tail or '(no stderr)'}"
                return CellStatus.ERROR, why
            exit_text = f"signal {done.signal}" if done.signal else f"exit {done.exit_status}"
            why = f"{why} ({exit_text}{': ' + tail if tail else ''})"
        return CellStatus.ERROR, why
    if not done.ok:
        shown = f"signal {done.signal}" if done.signal else f"exit {done.exit_status}"
        return CellStatus.ERROR, f"probe completed but the runtime ended with {shown}"
    return CellStatus.COMPLETE, None


def _transient(exc: Exception) -> bool:
    return isinstance(exc, TransportError) and exc.transient


def _log_retry(details: Any) -> None:
    """One readable line per scheduled connection retry (stamina's RetryDetails)."""
    cause = " ".join(str(details.caused_by).split())[:200]
    log.warning(
        "%s; retry %d in %.1f s",
        cause or type(details.caused_by).__name__,
        details.retry_num,
        details.wait_for,
    )


async def connect_with_retries(transport: Transport, host: Host) -> None:
    """Connect, retrying refused/reset/timed-out attempts with jittered backoff.
    A refused host key or login is final at once. This machine needs no retries."""
    if host.transport == "local":
        await transport.connect()
        return
    import stamina  # only for networked hosts: a local run starts sooner without it
    from stamina.instrumentation import set_on_retry_hooks

    set_on_retry_hooks([_log_retry])  # ours, not stamina's bare "stamina.retry_scheduled"
    async for attempt in stamina.retry_context(
        on=_transient,
        attempts=host.connect_retries + 1,
        timeout=(host.connect_retries + 1) * (host.connect_timeout + 5.0),
        wait_initial=0.5,
        wait_max=5.0,
    ):
        with attempt:
            await transport.connect()


def runtime_manifest(spec: RuntimeSpec) -> dict[str, Any]:
    """A runtime entry as recorded in the manifest: what it promised and declared.
    A URL's user:password part is dropped; token values are never in the spec."""
    data = spec.model_dump(mode="json")
    source = data.get("attribution")
    if source and source.get("url"):
        parts = urlsplit(source["url"])
        if parts.username or parts.password:
            netloc = parts.hostname or ""
            if parts.port:
                netloc += f":{parts.port}"
            source["url"] = urlunsplit(parts._replace(netloc=netloc))
    return data


def _release_of(runtime: Runtime) -> RunscRuntimeSpec | None:
    """The runsc entry if it names a release build for harness to fetch."""
    spec = runtime.spec
    return spec if isinstance(spec, RunscRuntimeSpec) and spec.release is not None else None


def kill_tagged(cell_id: str) -> tuple[str, ...]:
    """A command killing every process whose command line names the cell.

    The bracket keeps the pattern from matching the shell that runs pkill itself;
    ids have a fixed width, so one never matches a prefix of another.
    """
    return ("pkill", "-KILL", "-f", "--", f"[{cell_id[0]}]{cell_id[1:]}")


@dataclass(slots=True)
class HostContext:
    """Everything the cells of one host share during a run."""

    host: Host
    index: int
    transport: Transport
    state: HostState
    canary: RunningCanary | None = None
    helpers: Helpers | None = None
    host_fs: dict[str, object] | None = None  # the host's boot id and mount table
    supervisors: dict[str, RunningSupervisor] = field(default_factory=dict)
    lease: RunLease | None = None
    control_done: anyio.Event = field(default_factory=anyio.Event)
    control_record: CellRecord | None = None
    # Cells judged only after the canary's settle window (None: judged at once).
    deferred: list[tuple[Cell, CellRecord]] | None = None
    pending: list[tuple[Cell, CellRecord, list[VerdictRecord]]] = field(default_factory=list)
    # Runtimes this host runs differently from the plan: a release build installed here.
    runtimes: dict[str, Runtime] = field(default_factory=dict)

    def runtime(self, cell: Cell) -> Runtime:
        return self.runtimes.get(cell.runtime.name, cell.runtime)


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
    ) -> None:
        self.plan = plan
        self.reruns = reruns
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
        # The sweep's high port, per run: no fixed port list can be allowlisted for it.
        canary = plan.matrix.canary
        taken = {canary.tcp_port, canary.allowed_port, canary.dns_port, canary.alt_dns_port}
        self.high_port = next(
            p for p in iter(lambda: 30000 + secrets.randbelow(30000), 0) if p not in taken
        )
        self._limit = anyio.CapacityLimiter(self.settings.concurrency)
        self._serial = 0
        self._contexts: list[HostContext] = []
        scenarios = [SCENARIOS[s] for s in plan.scenarios]
        self._needs = {s.probe_name for s in scenarios}
        self.releases = releases
        if releases is None and any(_release_of(c.runtime) for c in plan.cells):
            from harness.bisect.releases import ReleaseBuilds  # httpx: only when needed

            self.releases = ReleaseBuilds(self.settings.index)

    # -- bookkeeping ---------------------------------------------------------------

    def manifest(self, *, started: str, ended: str | None) -> dict[str, Any]:
        m = self.plan.matrix
        manifest: dict[str, Any] = {
            "harness_version": __version__,
            "run_id": self.outcome.run_id,
            "matrix": {"name": m.name, "path": str(m.path), "sha256": m.sha256},
            "started": started,
            "ended": ended,
            "interrupted": self.outcome.interrupted,
            "settings": self.settings.model_dump(),
            "canary": m.canary.model_dump(mode="json"),
            "probe": {"sha256": self.probe.sha256, "compiler": self.probe.compiler},
            "probes": self.probes.manifest(),
            **({"releases": self.releases.manifest()} if self.releases else {}),
            "runtimes": {c.runtime.name: runtime_manifest(c.runtime.spec) for c in self.plan.cells},
            "scenarios": list(self.plan.scenarios),
            "cells_planned": len(self.plan.cells),
            "hosts": self.outcome.hosts,
            "selection": self.selection,
            "exit_code": exit_code([*self.prior, *self.outcome.verdicts, *self._held()])
            if ended
            else None,
        }
        if self.resumed_from is not None:
            # A resumed run: the first segment's identity and hosts stay, each later
            # segment is listed, and the exit code covers every verdict in the folder.
            first = self.resumed_from
            hosts = {**first.get("hosts", {}), **self.outcome.hosts}
            segments = [
                *first.get("segments", []),
                {"run_id": self.outcome.run_id, "started": started, "ended": ended},
            ]
            manifest.update(
                run_id=first.get("run_id", self.outcome.run_id),
                started=first.get("started", started),
                hosts=hosts,
                segments=segments,
            )
        return manifest

    def _record(
        self,
        cell: Cell,
        record: CellRecord,
        *,
        control: CellRecord | None,
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
        self.outcome.cells.append(record)
        if held and pending is not None:
            pending.append((cell, record, verdicts))
        else:
            self.outcome.verdicts.extend(verdicts)
        self.observer.cell_finished(cell, record, verdicts)

    def _held(self) -> list[VerdictRecord]:
        """Verdicts still waiting for their reruns (an interrupted run keeps them)."""
        return [v for ctx in self._contexts for _c, _r, held in ctx.pending for v in held]

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
            self.outcome.cells.append(record)
            attempts.append(judge_cell(cell, record, control=ctx.control_record))
        final = settle_reruns(attempts)
        self._write(None, final)
        self.outcome.verdicts.extend(final)
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
        async with anyio.create_task_group() as tg:
            for index, host in enumerate(self.plan.hosts):
                cells = [c for c in self.plan.cells if c.host is host]
                tg.start_soon(self._run_host, host, index, cells)

    async def _run_host(self, host: Host, index: int, cells: list[Cell]) -> None:
        entry: dict[str, object] = {
            "transport": host.transport,
            "address": host.address,
            "port": host.port if host.transport == "ssh" else None,
            "user": host.user,
        }
        self.outcome.hosts[host.name] = entry
        transport = open_transport(host)
        ctx: HostContext | None = None
        try:
            try:
                await connect_with_retries(transport, host)
                if ssh := transport.describe():
                    entry["ssh"] = ssh
                runtimes = list({c.runtime.name: c.runtime for c in cells}.values())
                state = await prepare_host(
                    transport,
                    self.probes,
                    workdir=host.workdir,
                    runtimes=[rt for rt in runtimes if not _release_of(rt)],
                )
                ctx = HostContext(host=host, index=index, transport=transport, state=state)
                self._contexts.append(ctx)
                # Own the host first: clean what dead runs left, take this run's lease.
                ctx.lease = await claim(transport, state.workdir, self.outcome.run_id)
                if ctx.lease.cleaned:
                    entry["cleaned_runs"] = ctx.lease.cleaned
                    log.info("%s: cleaned up after dead runs %s", host.name, ctx.lease.cleaned)
                await self._start_fixtures(ctx, entry, [rt for rt in runtimes if _release_of(rt)])
                state.runtimes = {rt.name: state.runtimes[rt.name] for rt in runtimes}
                await self._start_supervisors(ctx, cells, entry)
                entry.update(state.manifest())
            except Exception as exc:  # a dead host, or a bug: either way, record and go on
                if isinstance(exc, TransportError):
                    reason = exc.reason
                elif isinstance(exc, HarnessError):
                    reason = str(exc)
                else:
                    log.exception("internal error preparing %s", host.name)
                    reason = f"internal error: {type(exc).__name__}: {exc}"
                entry["error"] = reason
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
                async with anyio.create_task_group() as tg:
                    for cell in sorted(cells, key=lambda c: not c.is_host_runtime):
                        tg.start_soon(self._run_cell, ctx, cell, host_limit)
                await self._settle_host(ctx)
                async with anyio.create_task_group() as tg:
                    for cell, _record, verdicts in ctx.pending:
                        tg.start_soon(self._rerun, ctx, cell, verdicts)
                renewing.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                if ctx is not None:
                    for sup in ctx.supervisors.values():
                        await _quietly(stop_supervisor(transport, sup))
                if ctx is not None and ctx.canary is not None:
                    await _quietly(stop_canary(transport, ctx.canary))
                if ctx is not None and ctx.lease is not None:
                    canary = self._needs & {"egress", "attribution"}
                    netns_mode = self.plan.matrix.canary.mode == "netns"
                    netns = (
                        canary_netns(self.outcome.run_id, ctx.index)
                        if canary and netns_mode
                        else ""
                    )
                    await _quietly(release(transport, ctx.lease, netns=netns))
                await transport.aclose()

    async def _start_fixtures(
        self, ctx: HostContext, entry: dict[str, object], releases: list[Runtime]
    ) -> None:
        """The canary and privilege helpers, once per host, if a scenario needs them;
        and the release builds the host's runtimes name."""
        await _together(
            lambda: self._start_canary(ctx, entry),
            lambda: self._stage_helpers(ctx, entry),
            lambda: self._read_host_fs(ctx),
            *(partial(self._stage_release, ctx, rt) for rt in releases),
        )

    async def _stage_release(self, ctx: HostContext, runtime: Runtime) -> None:
        """Install the runtime's release build for this host's architecture, and run
        the runtime with it here. A build that cannot be had, verified or started
        makes the runtime unavailable on this host: its verdicts are inconclusive."""
        from harness.bisect.releases import Request, build_record

        spec = _release_of(runtime)
        assert spec is not None and self.releases is not None
        request = Request.of(spec)
        try:
            candidate, installed = await self.releases.install(
                ctx.transport, request, workdir=ctx.state.workdir, machine=ctx.state.machine
            )
        except (ArtifactError, CommandError) as exc:
            why = f"release {request.channel}/{request.release}: {exc}"
            ctx.state.runtimes[runtime.name] = RuntimeStatus(available=False, reason=why)
            return
        replaced = make_runtime(runtime.name, spec.model_copy(update={"binary": installed.path}))
        seen = replaced.identify(installed.version)
        ctx.runtimes[runtime.name] = replaced
        ctx.state.runtimes[runtime.name] = RuntimeStatus(
            available=seen.unavailable is None,
            version=seen.version,
            reason=seen.unavailable,
            fingerprint=seen.fingerprint,
            build=build_record(candidate, installed, request),
        )

    async def _read_host_fs(self, ctx: HostContext) -> None:
        if self._needs & {"filesystem", "privilege"}:
            ctx.host_fs = await read_host_fs(ctx.transport)

    async def _start_canary(self, ctx: HostContext, entry: dict[str, object]) -> None:
        if self._needs & {"egress", "attribution"}:
            ctx.canary = await start_canary(
                ctx.transport,
                probe=ctx.state.probe_path,
                workdir=ctx.state.workdir,
                canary=self.plan.matrix.canary,
                run_id=self.outcome.run_id,
                host_index=ctx.index,
                nonce=self.nonce,
                high_port=self.high_port,
                run_lease=ctx.lease.path if ctx.lease else None,
            )
            entry["canary"] = ctx.canary.manifest()
            if "egress" in self._needs and ctx.canary.error is None:
                ctx.deferred = []

    async def _start_supervisors(
        self, ctx: HostContext, cells: list[Cell], entry: dict[str, object]
    ) -> None:
        """A reference supervisor per supervised runtime, once the canary is up: its
        policy allows the canary's allowed port and nothing else."""
        runtimes = {c.runtime.name: c.runtime.spec for c in cells if c.runtime.spec.supervisor}
        canary = ctx.canary
        if not runtimes or (canary is not None and canary.error is not None):
            return  # the canary was needed and is dead: the cells say so (_unguarded)
        # No canary (no network scenario): still behind the supervisor, allowing nothing.
        address = canary.address if canary is not None else None
        async with anyio.create_task_group() as tg:
            for serial, (name, spec) in enumerate(sorted(runtimes.items())):

                async def start(name: str = name, serial: int = serial, spec: Any = spec) -> None:
                    ctx.supervisors[name] = await start_supervisor(
                        ctx.transport,
                        runtime=name,
                        workdir=ctx.state.workdir,
                        run_id=self.outcome.run_id,
                        host_index=ctx.index,
                        serial=serial,
                        canary=self.plan.matrix.canary,
                        canary_address=address,
                        fault=spec.supervisor_fault,
                    )

                tg.start_soon(start)
        entry["supervisors"] = {n: s.manifest() for n, s in sorted(ctx.supervisors.items())}

    async def _stage_helpers(self, ctx: HostContext, entry: dict[str, object]) -> None:
        if "privilege" in self._needs:
            ctx.helpers = await stage_helpers(
                ctx.transport,
                probe=ctx.state.probe_path,
                probe_sha=ctx.state.probe_sha256,
            )
            entry["helpers"] = {
                "folder": ctx.helpers.folder,
                "setuid": ctx.helpers.setuid_ok,
                "fcap": ctx.helpers.fcap_ok,
            }

    async def _run_cell(
        self, ctx: HostContext, cell: Cell, host_limit: anyio.CapacityLimiter
    ) -> None:
        is_control = cell.is_host_runtime
        record: CellRecord | None = None
        try:
            status = ctx.state.runtimes[cell.runtime.name]
            unguarded = self._unguarded(ctx, cell)
            if not status.available:
                reason = f"runtime unavailable on the host: {status.reason}"
                record = self._blank(cell, CellStatus.UNAVAILABLE, reason, state=ctx.state)
            elif unguarded is not None:
                record = self._blank(cell, CellStatus.ERROR, unguarded, state=ctx.state)
            else:
                async with self._limit, host_limit:
                    self.observer.cell_started(cell)
                    try:
                        record = await self._execute(ctx, cell)
                    except anyio.get_cancelled_exc_class():
                        # Interrupted mid-cell: _execute tore the sandbox down; say so.
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
        self._record(cell, record, control=ctx.control_record, pending=pending)

    async def _settle_host(self, ctx: HostContext) -> None:
        """Keep the canary up for its settle window after the host's last cell, read
        its log once more, and only then judge the cells: an arrival that carries a
        cell's tag, however late, turns that cell's egress to violated. An
        interrupted window judges nothing (the cells are recorded as cancelled, so
        `--resume` runs them again)."""
        deferred, ctx.deferred = ctx.deferred, None
        if not deferred or ctx.canary is None:
            return
        settle = self.plan.matrix.canary.settle
        late: dict[str, Any] = {}
        try:
            await anyio.sleep(settle)
            with anyio.CancelScope(shield=True):
                await read_canary(ctx.transport, ctx.canary, late)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                for cell, record in deferred:
                    why = "run interrupted during the canary's settle window"
                    cancelled = replace(record, status=CellStatus.CANCELLED, reason=why)
                    self._record(cell, cancelled, control=None)
            raise
        settled = []
        for cell, record in deferred:
            host_side = dict(record.host_side)
            if "canary_events" in host_side:
                if "canary_events" in late:
                    tag = str(host_side.get("tag", ""))
                    host_side["canary_events"] = of_cell(late["canary_events"], tag, record.checks)
                    host_side["settled"] = settle
                else:
                    host_side.pop("canary_events")
                    host_side["canary_error"] = f"after the settle window: {late['canary_error']}"
            settled.append((cell, replace(record, host_side=host_side)))
        for cell, record in settled:
            control = ctx.control_record
            if cell.is_host_runtime and control is not None and record.started == control.started:
                ctx.control_record = record
        settled.sort(key=lambda pair: not pair[0].is_host_runtime)  # the control first, as before
        for cell, record in settled:
            pending = ctx.pending if self.reruns and not cell.control else None
            self._record(cell, record, control=ctx.control_record, pending=pending)

    def _unguarded(self, ctx: HostContext, cell: Cell) -> str | None:
        """Why a supervised runtime cannot run on this host (no supervisor), if so:
        run unguarded, its sandbox would be judged without the thing under test."""
        if not cell.runtime.spec.supervisor:
            return None
        sup = ctx.supervisors.get(cell.runtime.name)
        if sup is None:
            why = (ctx.canary.error if ctx.canary else None) or "no canary to guard the way to"
            return f"supervisor not started: {why}"
        return sup.error

    def _probe_args(
        self,
        ctx: HostContext,
        cell: Cell,
        cell_id: str,
        sentinels: Sentinels | None,
        *,
        cell_nonce: str,
    ) -> list[str]:
        """The probe's command line: limits, tag, each scenario's options, scenarios."""
        options: dict[str, str] = {}

        def add(pairs: Sequence[str]) -> None:
            options.update(zip(pairs[::2], pairs[1::2], strict=True))

        canary = ctx.canary if ctx.canary is not None and ctx.canary.error is None else None
        if canary and "egress" in self._needs:
            add(canary.probe_args())
        if "attribution" in self._needs:
            source = ctx.runtime(cell).spec.attribution
            allowed = source.allowed if source and source.allowed else None
            if allowed is None and canary:
                allowed = canary.endpoint(canary.config.allowed_port)
            if allowed:
                add(["--allowed-tcp", allowed, "--nonce", self.nonce])
        if sentinels is not None:
            inside = ctx.runtime(cell).inside(sentinels.allowed, role="allowed")
            add(sentinels.probe_args(allowed_inside=inside))
        if ctx.helpers is not None:
            add(
                ctx.helpers.probe_args(
                    inside=ctx.runtime(cell).inside(ctx.helpers.folder, role="helpers")
                )
            )
        return probe_args(
            [SCENARIOS[s].probe_name for s in cell.scenarios],
            check_timeout=self.settings.check_timeout,
            deadline=self.settings.timeout,
            tag=cell_id,
            cell_nonce=cell_nonce,
            options=[x for pair in options.items() for x in pair],
        )

    async def _execute(self, ctx: HostContext, cell: Cell) -> CellRecord:
        self._serial += 1
        cell_id = f"harness-{self.outcome.run_id}-{self._serial:05d}"
        transport, state = ctx.transport, ctx.state
        host_side: dict[str, Any] = {"tag": cell_id}
        sentinels = None
        if "filesystem" in self._needs:
            sentinels = Sentinels.new(workdir=state.workdir, cell_id=cell_id)
        envelope = Envelope.new(cell_id, sentinels=sentinels, canary=ctx.canary)
        paths = CellPaths(
            probe=state.probe_path,
            workdir=state.workdir,
            cell_dir=f"{state.workdir}/cells/{cell_id}",
            cell_id=cell_id,
            allowed=sentinels.allowed if sentinels else None,
            helpers=ctx.helpers.folder if ctx.helpers else None,
        )
        if ctx.host_fs is not None:
            host_side["host_fs"] = ctx.host_fs
            host_side["grants"] = _grants(ctx.runtime(cell), paths)
        timeout = self.settings.timeout
        # A secret for this one sandbox start: output that does not echo it (with a
        # digest over its lines) was not printed by this cell's probe.
        cell_nonce = secrets.token_hex(16)
        args = self._probe_args(ctx, cell, cell_id, sentinels, cell_nonce=cell_nonce)
        invocation = ctx.runtime(cell).invocation(paths, args)
        sandbox = invocation.argv
        if (sup := ctx.supervisors.get(cell.runtime.name)) is not None:
            sandbox = sup.wrap(sandbox)
        argv = ("timeout", "-k", f"{KILL_GRACE:g}", f"{timeout:g}", *sandbox)
        started, t0 = utc_now(), time.monotonic()
        done: Completed | None = None
        report: Report | None = None
        reason: str | None = None
        try:
            done = await transport.run(
                envelope.wrap(argv), stdin=invocation.stdin, timeout=timeout + LOCAL_GRACE
            )
            done, report = envelope.open(done)
        except TransportError as exc:
            reason = f"transport failed during the cell: {exc.reason}"
        finally:
            if done is None or not done.ok:
                with anyio.CancelScope(shield=True):
                    await self._cleanup(transport, (kill_tagged(cell_id), *invocation.cleanup))
        elapsed = time.monotonic() - t0
        output = (
            parse_output(ctx.runtime(cell).filter_output(done.stdout), cell_nonce=cell_nonce)
            if done
            else ProbeOutput()
        )
        if report is not None:
            host_side.update(report.host_side(sentinels))
        else:  # the envelope was cut short: ask the host in commands of their own
            await self._gather(ctx, sentinels, host_side)
        if host_side.get("fs"):
            # A runtime that shares the allowed folder must show the host the inside
            # control's file; if not, the sandbox saw another tree (properties.py).
            host_side["fs"]["allowed_shared"] = ctx.runtime(cell).shares_allowed
        if ctx.canary is not None and "canary_events" in host_side:
            host_side["canary_has"] = ctx.canary.abilities()
            # Cells judged after the host's settle window need no wait of their own.
            if ctx.deferred is None and unsettled(output):
                await settle_canary(ctx.transport, ctx.canary, host_side)
            host_side["canary_events"] = of_cell(host_side["canary_events"], cell_id, output.checks)
        await self._decisions(ctx, cell, output, host_side)
        blank = replace(
            self._blank(cell, CellStatus.UNREACHABLE, reason, state=state),
            started=started,
            ended=utc_now(),
            elapsed=round(elapsed, 3),
            host_side=host_side,
        )
        if done is None:
            return blank
        if report is not None and report.setup_error is not None:
            return replace(blank, status=CellStatus.ERROR, reason=host_side["fs_error"])
        cell_state, why = cell_status(
            done, output, elapsed=elapsed, timeout=timeout, runtime=cell.runtime.binary
        )
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
            checks=output.checks,
            info=output.info,
        )

    async def _gather(
        self, ctx: HostContext, sentinels: Sentinels | None, host_side: dict[str, Any]
    ) -> None:
        """Host-side evidence in separate commands, for a cell whose envelope did not
        report (cut short). Whatever cannot be read leaves a gap that makes the
        affected checks inconclusive."""
        with anyio.CancelScope(shield=True):
            try:
                if ctx.canary is not None and ctx.canary.error is None:
                    await read_canary(ctx.transport, ctx.canary, host_side)
                if sentinels is not None:
                    host_side["fs"] = await inspect_sentinels(
                        ctx.transport, sentinels, tag=str(host_side["tag"])
                    )
            except TransportError as exc:
                host_side["evidence_error"] = exc.reason

    async def _decisions(
        self, ctx: HostContext, cell: Cell, output: ProbeOutput, host_side: dict[str, Any]
    ) -> None:
        """The supervisor's decision records for the cell's allowed connection."""
        source = ctx.runtime(cell).spec.attribution
        if (sup := ctx.supervisors.get(cell.runtime.name)) is not None:
            source = sup.source()
        if source is None or "attribution" not in self._needs:
            return
        # The binary a record must name: the probe made the connection.
        host_side["probe_sha256"] = ctx.state.probe_sha256
        with anyio.CancelScope(shield=True):
            try:
                records, error = await fetch_records(source, ctx.transport)
            except TransportError as exc:
                host_side["evidence_error"] = exc.reason
                return
        probe = next((c for c in output.checks if c.id == ALLOWED_CONNECT), None)
        port = probe.evidence.get("src_port") if probe else None
        if records is None:
            host_side["decisions_error"] = error
        else:
            dst = probe.evidence.get("dst") if probe else None
            host_side["decisions"] = (
                find_records(records, int(port), str(dst) if dst else None)
                if port is not None
                else []
            )

    async def _cleanup(self, transport: Transport, commands: tuple[tuple[str, ...], ...]) -> None:
        """Best effort teardown; a cleanup that fails is not worth failing the run."""
        for argv in commands:
            try:
                with anyio.move_on_after(CLEANUP_TIMEOUT):
                    await transport.run(argv, timeout=CLEANUP_TIMEOUT)
            except TransportError:
                return


# Refusals made before a packet could leave: nothing of the attempt is in flight.
REFUSED_AT_ONCE = frozenset(
    {"ENETUNREACH", "EHOSTUNREACH", "ECONNREFUSED", "EPERM", "EACCES", "EAFNOSUPPORT"}
)


def unsettled(output: ProbeOutput) -> bool:
    """Could an egress attempt still be on its way to the canary? Yes unless every
    attempt escaped (proof already) or was refused outright: one that connected
    without the nonce, timed out waiting, or got an answer from something else may
    have gone through a proxy that delivers it late."""
    return any(
        c.scenario == "egress"
        and c.kind == "attempt"
        and c.outcome != "escaped"
        and not (c.outcome == "blocked" and c.errno in REFUSED_AT_ONCE)
        for c in output.checks
    )


async def read_canary(
    transport: Transport, canary: RunningCanary, host_side: dict[str, Any]
) -> None:
    """Every arrival the canary logged so far into `host_side`, or why there are none
    to trust (dead canary, unreadable log): a gap the judge makes inconclusive."""
    try:
        events = await canary_events(transport, canary)
    except TransportError as exc:
        events, why = None, f"canary log unreadable: {exc.reason}"
    else:
        why = "canary dead or its log unreadable"
    if events is None:
        host_side.pop("canary_events", None)
        host_side["canary_error"] = why
    else:
        host_side["canary_events"] = events


async def settle_canary(
    transport: Transport, canary: RunningCanary, host_side: dict[str, Any]
) -> None:
    """Read the canary's log again, a moment later, before an attempt that may be in
    flight (see `unsettled`) can count as blocked or intercepted: a proxy in the
    sandbox may still be carrying it to the canary. Sandboxes without a network
    refuse at once and never wait."""
    with anyio.CancelScope(shield=True):
        await anyio.sleep(SETTLE)
        await read_canary(transport, canary, host_side)


def _grants(runtime: Runtime, paths: CellPaths) -> dict[str, list[str]]:
    """What the cell grants the sandbox, for `results/reach.py`: host paths (the
    probe, the allowed folder, the helpers, a bundle's rootfs) and, for a sandbox
    with its own kernel, the mount points inside where they appear."""
    host = [paths.probe, f"{paths.cell_dir}/rootfs", f"{paths.workdir}/empty"]
    inside = ["/"] if runtime.own_root else []
    for role, path in (("allowed", paths.allowed), ("helpers", paths.helpers)):
        if path is not None:
            host.append(path)
            inside.append(runtime.inside(path, role=role))
    return {"host": host, "inside": inside}


async def _together(*steps: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run independent steps at once. A failure surfaces as itself, not wrapped
    in an exception group, so callers can still tell a dead host from a bug."""
    try:
        async with anyio.create_task_group() as tg:
            for step in steps:
                tg.start_soon(step)
    except ExceptionGroup as group:
        first: BaseException = group
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from None


async def _quietly(awaitable: Any) -> None:
    try:
        await awaitable
    except HarnessError as exc:
        log.warning("teardown failed: %s", exc)


async def execute(
    plan: Plan, *, probe: BuiltProbe | Probes, store: ResultsStore, observer: Observer | None = None
) -> RunOutcome:
    """Run a plan into a store; see `Runner`."""
    return await Runner(plan, probe=probe, store=store, observer=observer).run()
