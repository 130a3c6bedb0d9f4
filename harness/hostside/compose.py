"""Which fixtures a host gets: those its scenarios need, and a supervisor where a
runtime asks for one. The runner calls the composed set and knows nothing else."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from harness.errors import HarnessError
from harness.hostside.base import CellSetup, Fixture, HostSetup
from harness.hostside.canary import CanaryFixture
from harness.hostside.decisions import DecisionsFixture
from harness.hostside.filesystem import SentinelsFixture
from harness.hostside.helpers import HelpersFixture
from harness.hostside.hostfs import HostFsFixture
from harness.hostside.listeners import HostListenersFixture
from harness.hostside.supervisor import RevokeCommandFixture, SupervisorFixture
from harness.scenarios.base import Need, Scenario

if TYPE_CHECKING:
    from harness.hostside.envelope import Report
    from harness.plan import Cell
    from harness.probe.protocol import ProbeOutput
    from harness.results.records import CellRecord, HostEvidence
    from harness.runtimes import Runtime

log = logging.getLogger(__name__)


def needs_of(scenarios: Sequence[Scenario]) -> frozenset[Need]:
    return frozenset(n for s in scenarios for n in s.needs)


def targets_of(scenarios: Sequence[Scenario]) -> frozenset[str]:
    """The probe names whose attempts aim at the canary (late arrivals awaited)."""
    return frozenset(s.name for s in scenarios if Need.TARGETS in s.needs)


def compose(needs: frozenset[Need], runtimes: Sequence[Runtime]) -> list[Fixture]:
    """The fixtures of one host, in start order (teardown runs in reverse)."""
    canary = CanaryFixture() if Need.CANARY in needs else None
    supervised = any(rt.spec.supervisor for rt in runtimes)
    supervisors = SupervisorFixture(canary) if supervised else None
    revocable = any(rt.spec.attribution and rt.spec.attribution.revoke for rt in runtimes)
    helpers = HelpersFixture() if Need.HELPERS in needs else None
    fixtures: list[Fixture | None] = [
        canary,
        helpers,
        HostFsFixture(helpers) if Need.HOST_FS in needs else None,
        HostListenersFixture() if Need.HOST_UNIX in needs else None,
        SentinelsFixture() if Need.SENTINELS in needs else None,
        DecisionsFixture(canary, supervisors, helpers) if Need.DECISIONS in needs else None,
        supervisors,
        RevokeCommandFixture(canary) if revocable and Need.PHASES in needs else None,
    ]
    return [f for f in fixtures if f is not None]


class HostFixtures:
    """The composed fixtures of one host, called hook by hook."""

    def __init__(self, fixtures: list[Fixture]) -> None:
        self.fixtures = fixtures

    def stages(self) -> list[list[Fixture]]:
        """The fixtures grouped by start stage, earliest first."""
        found = sorted({f.stage for f in self.fixtures})
        return [[f for f in self.fixtures if f.stage == s] for s in found]

    def manifest(self) -> dict[str, object]:
        return {k: v for f in self.fixtures for k, v in f.manifest().items()}

    def refuse(self, cell: Cell) -> str | None:
        return next((why for f in self.fixtures if (why := f.refuse(cell)) is not None), None)

    def prepare(self, cell: CellSetup) -> None:
        for f in self.fixtures:
            f.prepare(cell)

    def probe_options(self, cell: CellSetup) -> list[str]:
        """Every fixture's option pairs; an option two fixtures give appears once."""
        options: dict[str, str] = {}
        for f in self.fixtures:
            pairs = list(f.probe_args(cell))
            options.update(zip(pairs[::2], pairs[1::2], strict=True))
        return [x for pair in options.items() for x in pair]

    def wrap(self, cell: CellSetup, argv: tuple[str, ...]) -> tuple[str, ...]:
        for f in self.fixtures:
            argv = f.wrap(cell, argv)
        return argv

    def phase_hooks(self, cell: CellSetup) -> dict[str, str]:
        """Every fixture's hooks; two fixtures acting at one phase is a bug."""
        hooks: dict[str, str] = {}
        for f in self.fixtures:
            for name, hook in f.phase_hooks(cell).items():
                if name in hooks:
                    raise AssertionError(f"two fixtures act at phase {name}")
                hooks[name] = hook
        return hooks

    async def collect(self, cell: CellSetup, report: Report | None, output: ProbeOutput) -> None:
        for f in self.fixtures:
            await f.collect(cell, report, output)

    def window(self) -> float | None:
        """The longest settle window any fixture asks for (None: judge at once)."""
        windows = [w for f in self.fixtures if (w := f.window()) is not None]
        return max(windows) if windows else None

    async def late(self, records: list[CellRecord], *, since: float) -> list[HostEvidence]:
        """Each record's evidence after every fixture's window, counted from `since`
        (the host's last sandbox seen over)."""
        for f in self.fixtures:
            if f.window() is None:
                continue
            evidence = await f.late(records, since=since)
            records = [replace(r, host_side=e) for r, e in zip(records, evidence, strict=True)]
        return [r.host_side for r in records]

    def namespace(self) -> str:
        return next((ns for f in self.fixtures if (ns := f.namespace())), "")

    async def start(
        self, host: HostSetup, *alongside: Callable[[], Coroutine[Any, Any, None]]
    ) -> None:
        """Start every fixture at once, each as soon as the fixtures of earlier stages
        it waits for are up (`Fixture.waits_for`), and the `alongside` steps with them.
        A fixture whose wait ends in a failure never starts: the failure surfaces."""
        up = {id(f): anyio.Event() for f in self.fixtures}

        async def start(fixture: Fixture) -> None:
            earlier = [f for f in self.fixtures if f.stage < fixture.stage]
            for before in fixture.waits_for(earlier):
                await up[id(before)].wait()
            await fixture.start(host)
            up[id(fixture)].set()

        await together(*(partial(start, f) for f in self.fixtures), *alongside)

    async def stop(self) -> None:
        """Tear down in reverse order; a failure is logged, the rest still go."""
        for f in reversed(self.fixtures):
            try:
                await f.stop()
            except HarnessError as exc:
                log.warning("teardown failed: %s", exc)


async def together(*steps: Callable[[], Coroutine[Any, Any, None]]) -> None:
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
