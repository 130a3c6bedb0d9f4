"""Markdown for CI step summaries: mismatches first, then the matrix, appended to CI."""

from __future__ import annotations

from pathlib import Path

from harness.report.markdown import render_markdown
from harness.results.records import Verdict, VerdictRecord
from harness.results.store.manifest import Manifest
from harness.results.store.read import Run, load_run
from tests.report.conftest import Runs, harness


def test_mismatches_come_before_the_matrix(runs: Runs) -> None:
    """The mismatch rows appear first, then one table per host with every runtime."""
    text = render_markdown(load_run(runs.mixed))
    mismatches = text.index("### Mismatches")
    matrix = text.index("### host: localhost")
    assert mismatches < matrix
    head = text[mismatches:matrix]
    assert "| ! unexpected | localhost | runsc | landlock_abi | 7 | unavailable (ENOSYS) |" in head
    assert "| ✗ regression | localhost | bare | privilege_floor | enforced | violated |" in head
    assert "### Inconclusive" in head and "| ? inconclusive | localhost | ghost |" in head
    assert "| fact / property | host | runsc | bare | ghost |" in text[matrix:]
    assert "| landlock_abi | · 7 | ! unavailable (ENOSYS) |" in text[matrix:]


def test_a_clean_run_says_so_and_stays_short(runs: Runs) -> None:
    """No mismatch: a pass headline, no attention section, and a summary-sized report."""
    text = render_markdown(load_run(runs.clean))
    assert "all verdicts pass" in text.splitlines()[0]
    assert "### Mismatches" not in text and "### Inconclusive" not in text
    assert len(text.encode()) < 16 * 1024


def test_table_cells_cannot_break_the_table(tmp_path: Path) -> None:
    """Pipes and newlines in a reason are escaped and flattened, long ones cut."""
    reason = "a | b\nc " + "x" * 400
    verdict = VerdictRecord(
        host="h",
        runtime="r",
        expected="enforced",
        observed="violated",
        verdict=Verdict.REGRESSION,
        reason=reason,
        property="egress_confinement",
        display="violated",
    )
    text = render_markdown(Run(folder=tmp_path, manifest=Manifest(), verdicts=[verdict]))
    row = next(line for line in text.splitlines() if line.startswith("| ✗ regression"))
    assert "a \\| b c xxx" in row
    assert row.count(" | ") == 6  # seven columns, the escaped pipe is not a separator
    assert len(row) < 300


def test_step_summary_is_appended(runs: Runs, tmp_path: Path) -> None:
    """With $GITHUB_STEP_SUMMARY set, both `run --report markdown` and `report` append to it."""
    after_run = runs.summary.read_text()
    assert after_run.startswith("# earlier step\n")
    assert after_run.endswith((runs.mixed / "report.md").read_text())
    summary = tmp_path / "summary.md"
    summary.write_text("before\n")
    for _ in range(2):
        done = harness(
            "report",
            runs.mixed,
            "--format",
            "markdown",
            env={"GITHUB_STEP_SUMMARY": str(summary)},
        )
        assert done.code == 0, done.stderr
    text = summary.read_text()
    assert text.startswith("before\n")
    assert text.count("### Mismatches") == 2
    assert done.stdout in text


def test_a_dead_host_is_one_line(tmp_path: Path) -> None:
    """node-2, unreachable, is one line under "Unreachable hosts": no inconclusive row
    per verdict, no table of question marks."""
    from tests.report.fleet import nights

    _, b = nights(tmp_path)
    text = render_markdown(load_run(b))
    dead = "- node-2: connection refused (10 verdicts inconclusive)"
    assert f"### Unreachable hosts\n\n{dead}\n" in text
    assert "### Inconclusive" not in text and "host: node-2" not in text
    assert [line for line in text.splitlines() if "node-2" in line] == [dead]
