"""`harness report` and `harness run --report` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.report.conftest import Runs, harness


def test_run_report_writes_every_format_into_the_results_folder(runs: Runs) -> None:
    """`harness run --report ...` leaves report.xml, .md, .html and .json next to the results."""
    for name in ("report.xml", "report.md", "report.html", "report.json"):
        assert (runs.mixed / name).stat().st_size > 0, name
    data = json.loads((runs.mixed / "report.json").read_text())
    assert data["matrix"] == "mixed" and data["exit_code"] == 1
    assert data["counts"]["regression"] == 1 and data["counts"]["unexpected"] == 1
    assert len(data["verdicts"]) == len((runs.mixed / "verdicts.jsonl").read_text().splitlines())
    assert "results:" in runs.mixed_stdout  # the terminal report is still printed


def test_report_json_to_stdout(runs: Runs) -> None:
    """`harness report DIR --format json` prints the same object on stdout and exits 0."""
    done = harness("report", runs.mixed, "--format", "json")
    assert done.code == 0, done.stderr
    assert done.stdout == (runs.mixed / "report.json").read_text()


def test_one_run_formats_refuse_several_folders(runs: Runs) -> None:
    """Only HTML has a history; JUnit on two folders is bad input with a one-line error."""
    done = harness("report", runs.clean, runs.mixed, "--format", "junit")
    assert done.code == 2
    assert "use --format html" in done.stderr
    assert done.stderr.strip().count("\n") == 0


def test_unknown_format_is_bad_input(runs: Runs, tmp_path: Path) -> None:
    """An unknown --format, for `report` and for `run --report`, exits 2."""
    done = harness("report", runs.clean, "--format", "pdf")
    assert done.code == 2 and "pdf" in done.stderr
    done = harness("run", "matrices/local.toml", "--report", "pdf", "--out", tmp_path / "x")
    assert done.code == 2 and "pdf" in done.stderr
    assert not (tmp_path / "x").exists()


def test_a_bisection_among_the_folders_is_skipped_with_a_note(runs: Runs, tmp_path: Path) -> None:
    """`harness report results/*` with a bisect folder among them: a note, not exit 2."""
    bisection = tmp_path / "20260903T000000Z-bisect-runsc"
    (bisection / "step-01-2026-09-01").mkdir(parents=True)
    (bisection / "bisect.json").write_text('{"status": "found"}\n')
    done = harness("report", runs.mixed, runs.mixed_again, bisection, "--format", "html", "-o",
                   tmp_path / "r.html")  # fmt: skip
    assert done.code == 0, done.stderr
    assert f"{bisection} is a bisection (bisect.json), not a run; skipped" in done.stderr
    assert (tmp_path / "r.html").stat().st_size > 0


def test_runs_of_different_matrices_are_refused_unless_mixed(runs: Runs, tmp_path: Path) -> None:
    """Two matrices' runs in one history would mislead: refused, unless --mixed."""
    other = tmp_path / "other"
    import shutil

    shutil.copytree(runs.clean, other)
    manifest = json.loads((other / "manifest.json").read_text())
    manifest["matrix"]["name"] = "another-matrix"
    (other / "manifest.json").write_text(json.dumps(manifest))
    refused = harness("report", runs.clean, other, "--format", "html", "-o", tmp_path / "a.html")
    assert refused.code == 2
    assert "2 matrices" in refused.stderr and "--mixed" in refused.stderr
    allowed = harness("report", runs.clean, other, "--format", "html", "--mixed",
                      "-o", tmp_path / "b.html")  # fmt: skip
    assert allowed.code == 0, allowed.stderr
