"""Reading a results folder back: the loader every report and diff stands on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.errors import ResultsError
from harness.report.runs import failing_checks
from harness.results.records import CellStatus, Verdict
from harness.results.store.read import load_run, load_runs
from tests.report.conftest import Runs, harness


def test_loads_a_real_run(runs: Runs) -> None:
    """Every verdict line becomes a typed record; cells, versions and kernels come along."""
    run = load_run(runs.mixed)
    lines = (runs.mixed / "verdicts.jsonl").read_text().splitlines()
    assert len(run.verdicts) == len(lines)
    assert {v.verdict for v in run.verdicts} == {
        Verdict.PASS,
        Verdict.REGRESSION,
        Verdict.UNEXPECTED,
        Verdict.INCONCLUSIVE,
        Verdict.SKIPPED,
    }
    assert run.matrix_name == "mixed"
    assert run.exit_code == 1
    assert run.runtimes("localhost") == ["host", "runsc", "bare", "ghost"]
    cell = run.cell("localhost", "runsc")
    assert cell is not None and cell.status is CellStatus.COMPLETE
    assert '"type":"done"' in cell.stdout
    assert "runsc" in (run.runtime_version("localhost", "runsc") or "")
    assert run.kernel("localhost")
    ghost = run.cell("localhost", "ghost")
    assert ghost is not None and ghost.status is CellStatus.UNAVAILABLE


def test_a_torn_last_line_is_skipped(runs: Runs, tmp_path: Path) -> None:
    """An interrupted write leaves half a line; the loader keeps everything before it.

    Uses a doctored copy of a real folder: half of its last verdict line is cut off.
    """
    copy = tmp_path / "torn"
    shutil.copytree(runs.clean, copy)
    path = copy / "verdicts.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    assert len(load_run(copy).verdicts) == len(lines) - 1


def test_newer_keys_are_ignored(runs: Runs, tmp_path: Path) -> None:
    """A record from a newer harness (an extra key) still loads.

    Uses a doctored copy of a real folder with one key added to every verdict.
    """
    copy = tmp_path / "newer"
    shutil.copytree(runs.clean, copy)
    path = copy / "verdicts.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**r, "future": 1}) + "\n" for r in rows))
    assert len(load_run(copy).verdicts) == len(rows)


@pytest.mark.parametrize("make", ["missing", "empty", "bad-manifest"])
def test_not_a_results_folder(tmp_path: Path, make: str) -> None:
    """A folder that does not hold a run is bad input (ResultsError), not a crash."""
    folder = tmp_path / "x"
    if make != "missing":
        folder.mkdir()
    if make == "bad-manifest":
        (folder / "manifest.json").write_text("{not json")
        (folder / "verdicts.jsonl").write_text("")
    with pytest.raises(ResultsError, match="x: not a results folder"):
        load_run(folder)


def test_not_a_results_folder_exits_2(tmp_path: Path) -> None:
    """`harness report` on a folder that holds no run: exit 2 and a one-line error."""
    done = harness("report", tmp_path, "--format", "junit")
    assert done.code == 2
    assert done.stderr.strip().count("\n") == 0
    assert "not a results folder" in done.stderr


def test_runs_are_ordered_by_start_time(runs: Runs) -> None:
    """Given in any order, several runs come back oldest first."""
    loaded = load_runs([runs.mixed_again, runs.clean, runs.mixed])
    assert [r.folder for r in loaded] == [runs.clean, runs.mixed, runs.mixed_again]


def test_failing_checks_name_what_went_wrong(runs: Runs) -> None:
    """A regression's failing checks are the attempts that escaped, not the blocked ones."""
    run = load_run(runs.mixed)
    regression = next(v for v in run.verdicts if v.verdict is Verdict.REGRESSION)
    failing = failing_checks(regression)
    assert failing
    assert all(c.outcome not in ("blocked", "ok") for c in failing)
    assert any(c.outcome == "escaped" for c in failing)
