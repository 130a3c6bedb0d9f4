"""The plan: which cells a run starts, and which cell is each host's control."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.runtimes import Runtime, make_runtime
from harness.scenarios import SCENARIOS
from harness.spec import Host, Matrix
from harness.spec.models import HostRuntimeSpec

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
        return self.cells[0].scenarios if self.cells else ()


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
        cells.extend(Cell(host=host, runtime=rt, scenarios=chosen) for rt in selected.values())
    return Plan(matrix=matrix, cells=tuple(cells))
