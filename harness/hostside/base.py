"""The fixture interface: all the runner knows about a host-side fixture.

A fixture is started once per host (`start`), takes part in every cell on it
(`prepare`, `probe_args`, `wrap`, `collect`) and is stopped with the host (`stop`).
The runner composes the fixtures a plan needs (`compose.py`) and calls each hook
in turn, without knowing which scenario needed which fixture. Every hook is
optional: the base class does nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from harness.transport import Transport

if TYPE_CHECKING:
    from harness.hostside.canary_setup import RunningCanary
    from harness.hostside.envelope import Report
    from harness.hostside.filesystem import Sentinels
    from harness.matrix.models import Canary
    from harness.plan import Cell
    from harness.probe.protocol import ProbeOutput
    from harness.results.records import CellRecord, HostEvidence
    from harness.runtimes import CellPaths, Runtime
    from harness.scenarios.base import Need
    from harness.staging import HostState


@dataclass(slots=True)
class HostSetup:
    """What every fixture of one host shares."""

    transport: Transport
    state: HostState
    index: int  # the host's place in the matrix: names its namespaces
    run_id: str
    nonce: str  # the run's secret: an arrival that carries it is proof
    high_port: int  # the sweep's per-run port
    canary: Canary  # the matrix's [canary] settings
    needs: frozenset[Need]
    targets: frozenset[str]  # probe names of the scenarios whose attempts aim at the canary
    runtimes: Sequence[Runtime] = ()  # every runtime with a cell on this host
    lease: str | None = None  # the run's lease file on the host


@dataclass(slots=True)
class CellSetup:
    """One cell as its fixtures see it; `prepare` fills it in before the sandbox starts."""

    cell: Cell
    cell_id: str
    runtime: Runtime  # as this host runs it (a release build may replace the plan's)
    paths: CellPaths
    # The envelope's parts (`envelope.py`): made before, inspected right after the sandbox.
    sentinels: Sentinels | None = None
    canary: RunningCanary | None = None
    # Host evidence gathered so far, by `HostEvidence` field name.
    evidence: dict[str, Any] = field(default_factory=dict)


class Fixture:
    """One host-side fixture; subclasses override the hooks they take part in."""

    stage: ClassVar[int] = 0  # a later stage starts once what it waits for is up

    def waits_for(self, earlier: Sequence[Fixture]) -> Sequence[Fixture]:
        """Which fixtures of earlier stages must be up before this one starts: all of
        them, unless a fixture knows the few it uses (a slow one it does not use
        then no longer holds it back)."""
        return earlier

    async def start(self, host: HostSetup) -> None:
        """Set up on the host, once; raising makes the whole host unusable."""

    def manifest(self) -> dict[str, object]:
        """What the manifest's host entry records about this fixture."""
        return {}

    def refuse(self, cell: Cell) -> str | None:
        """Why a cell must not run on this host at all (its verdicts would mislead)."""
        return None

    def prepare(self, cell: CellSetup) -> None:
        """Per cell, before the sandbox command is built."""

    def probe_args(self, cell: CellSetup) -> Sequence[str]:
        """Option pairs for the probe's command line."""
        return ()

    def wrap(self, cell: CellSetup, argv: tuple[str, ...]) -> tuple[str, ...]:
        """The sandbox command, wrapped if this fixture must stand around it."""
        return argv

    def phase_hooks(self, cell: CellSetup) -> dict[str, str]:
        """What this fixture does on the host at a phase's barrier, by phase name: one
        line of shell, whose exit status says whether it did it."""
        return {}

    async def collect(self, cell: CellSetup, report: Report | None, output: ProbeOutput) -> None:
        """Host-side evidence after the sandbox ended, into `cell.evidence`. The
        envelope's `report` is None when it was cut short: ask the host directly."""

    def window(self) -> float | None:
        """Seconds to wait after the host's last sandbox exited before any cell is judged."""
        return None

    async def late(self, records: Sequence[CellRecord], *, since: float) -> list[HostEvidence]:
        """Each record's evidence once the window has passed since `since` (the
        time.monotonic when the host's last sandbox was seen over; only with a window)."""
        return [r.host_side for r in records]

    def namespace(self) -> str:
        """A network namespace the run's lease release removes if it was left behind."""
        return ""

    async def stop(self) -> None:
        """Tear down; best effort."""
