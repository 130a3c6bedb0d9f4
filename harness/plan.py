"""The plan: which cells a run starts, and which cell is each host's control."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.matrix import Host, Matrix
from harness.matrix.models import HostRuntimeSpec
from harness.runtimes import Runtime, make_runtime
from harness.scenarios import SCENARIOS

CONTROL_RUNTIME = "host"


@dataclass(frozen=True, slots=True)
class Cell:
    """One (host, runtime) pair: one sandbox start runs all its scenarios.

    A `control` cell is the host runtime run only so that other cells' blocked
    attempts can be checked against it; it yields no verdicts of its own.
    """

    host: Host
    runtime: Runtime
    scenarios: tuple[str, ...]
    control: bool = False

    @property
    def key(self) -> str:
        return f"{self.host.name}/{self.runtime.name}"

    @property
    def is_host_runtime(self) -> bool:
        return self.runtime.kind == "host"


@dataclass(frozen=True, slots=True)
class Plan:
    matrix: Matrix
    cells: tuple[Cell, ...]

    @property
    def hosts(self) -> tuple[Host, ...]:
        return tuple(dict.fromkeys(c.host for c in self.cells))

    @property
    def scenarios(self) -> tuple[str, ...]:
        """Every scenario some cell runs, in the matrix's order."""
        ran = {s for c in self.cells for s in c.scenarios}
        return tuple(s for s in self.matrix.scenarios if s in ran)


def needs_control(scenarios: Sequence[str]) -> bool:
    """Property scenarios judge blocked attempts against the host runtime."""
    return any(SCENARIOS[s].property for s in scenarios)


def make_plan(
    matrix: Matrix,
    *,
    hosts: Sequence[str] = (),
    runtimes: Sequence[str] = (),
    scenarios: Sequence[str] = (),
) -> Plan:
    """Cells for the matrix, narrowed by the CLI filters (already validated).

    When property scenarios run and the selection has no host runtime, each host
    gets a control cell anyway (the matrix's host runtime, or a plain one).
    """
    chosen = tuple(s for s in matrix.scenarios if not scenarios or s in scenarios)
    bound = {name: make_runtime(name, spec) for name, spec in matrix.runtimes.items()}
    selected = {n: rt for n, rt in bound.items() if not runtimes or n in runtimes}
    control: Runtime | None = None
    if needs_control(chosen) and not any(rt.kind == "host" for rt in selected.values()):
        control = next((rt for rt in bound.values() if rt.kind == "host"), None) or make_runtime(
            CONTROL_RUNTIME, HostRuntimeSpec(kind="host")
        )
    cells: list[Cell] = []
    for host in matrix.hosts:
        if hosts and host.name not in hosts:
            continue
        if control is not None:
            cells.append(Cell(host=host, runtime=control, scenarios=chosen, control=True))
        for rt in selected.values():
            own = _own_scenarios(rt, chosen)
            if own:  # none of its scenarios asked for: the runtime is not run
                cells.append(Cell(host=host, runtime=rt, scenarios=own))
    return Plan(matrix=matrix, cells=tuple(cells))


def _own_scenarios(runtime: Runtime, chosen: tuple[str, ...]) -> tuple[str, ...]:
    """The chosen scenarios this runtime runs: its own `scenarios`, if it has them."""
    own = runtime.spec.scenarios
    return chosen if own is None or runtime.kind == "host" else tuple(s for s in chosen if s in own)


def shard(plan: Plan, index: int, total: int) -> Plan:
    """Shard `index` of `total` (1-based): cells split round-robin over their
    (host, runtime) order, so shards are deterministic and differ by at most one
    cell. A shard also runs the host runtime of every host it touches, as a
    control that yields no verdicts, unless it owns that cell itself."""
    workers = sorted(
        (c for c in plan.cells if not c.control), key=lambda c: (c.host.name, c.runtime.name)
    )
    mine = {id(c) for i, c in enumerate(workers) if i % total == index - 1}
    chosen: list[Cell] = []
    hosts = {c.host.name for c in plan.cells if id(c) in mine}
    for cell in plan.cells:
        if id(cell) in mine:
            chosen.append(cell)
        elif cell.host.name in hosts and cell.is_host_runtime and needs_control(cell.scenarios):
            owned = any(
                id(c) in mine and c.is_host_runtime and c.host is cell.host for c in plan.cells
            )
            if not owned:
                chosen.append(
                    Cell(
                        host=cell.host, runtime=cell.runtime, scenarios=cell.scenarios, control=True
                    )
                )
    return Plan(matrix=plan.matrix, cells=tuple(chosen))


def without(plan: Plan, done: set[tuple[str, str]]) -> Plan:
    """The plan minus cells already recorded (for --resume). A remaining cell's
    host keeps its host runtime, as a control, when the properties need one."""
    hosts = {
        c.host.name
        for c in plan.cells
        if not c.control and (c.host.name, c.runtime.name) not in done
    }
    cells: list[Cell] = []
    for cell in plan.cells:
        key = (cell.host.name, cell.runtime.name)
        if key not in done and not cell.control:
            cells.append(cell)
        elif cell.host.name in hosts and cell.is_host_runtime and needs_control(cell.scenarios):
            cells.append(
                Cell(host=cell.host, runtime=cell.runtime, scenarios=cell.scenarios, control=True)
            )
    return Plan(matrix=plan.matrix, cells=tuple(cells))
