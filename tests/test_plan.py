"""The plan: a runtime's own `scenarios` narrow its cells, never the host's control."""

from __future__ import annotations

from pathlib import Path

from harness.matrix import Matrix, load_matrix
from harness.plan import make_plan, shard

MATRIX = """
name = "m"
inventory = "hosts.toml"
scenarios = ["egress-confinement", "filesystem-confinement", "privilege-floor", "mechanisms"]
[runtimes.host]
kind = "host"
[runtimes.full]
kind = "command"
argv = ["bwrap", "--", "{probe}", "{args}"]
[runtimes.fs-only]
kind = "command"
argv = ["bwrap", "--", "{probe}", "{args}"]
scenarios = ["privilege-floor", "filesystem-confinement"]
"""


def _matrix(tmp_path: Path, text: str = MATRIX) -> Matrix:
    (tmp_path / "hosts.toml").write_text('[hosts.a]\ntransport = "local"\n')
    (tmp_path / "m.toml").write_text(text)
    return load_matrix(tmp_path / "m.toml")


def test_a_runtime_runs_only_its_own_scenarios_in_the_matrix_order(tmp_path: Path) -> None:
    plan = make_plan(_matrix(tmp_path))
    cells = {c.runtime.name: c.scenarios for c in plan.cells}
    every = ("egress-confinement", "filesystem-confinement", "privilege-floor", "mechanisms")
    assert cells == {
        "host": every,
        "full": every,
        "fs-only": ("filesystem-confinement", "privilege-floor"),
    }
    assert plan.scenarios == every


def test_the_control_runs_every_scenario_a_narrowed_runtime_needs(tmp_path: Path) -> None:
    """Without the host runtime selected, the control it adds runs the asked scenarios."""
    plan = make_plan(_matrix(tmp_path), runtimes=["fs-only"])
    (control, cell) = plan.cells
    assert control.control and control.runtime.kind == "host"
    assert control.scenarios == ("egress-confinement", "filesystem-confinement",
                                 "privilege-floor", "mechanisms")  # fmt: skip
    assert cell.scenarios == ("filesystem-confinement", "privilege-floor")
    assert plan.scenarios == control.scenarios


def test_a_runtime_none_of_whose_scenarios_is_asked_is_not_run(tmp_path: Path) -> None:
    plan = make_plan(_matrix(tmp_path), scenarios=["egress-confinement"])
    assert [c.runtime.name for c in plan.cells] == ["host", "full"]
    assert plan.scenarios == ("egress-confinement",)
    narrowed = make_plan(_matrix(tmp_path), scenarios=["privilege-floor", "mechanisms"])
    assert {c.runtime.name: c.scenarios for c in narrowed.cells}["fs-only"] == ("privilege-floor",)


def test_a_shard_keeps_each_cells_own_scenarios(tmp_path: Path) -> None:
    plan = make_plan(_matrix(tmp_path))
    shards = [shard(plan, i, 3) for i in (1, 2, 3)]
    owned = {c.runtime.name: c.scenarios for s in shards for c in s.cells if not c.control}
    assert owned == {c.runtime.name: c.scenarios for c in plan.cells}
