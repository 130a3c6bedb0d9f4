"""Markdown for a CI step summary: what needs attention first, then the matrix.

GitHub renders `$GITHUB_STEP_SUMMARY` (up to 1 MiB per step) on the run's page;
the report stays far below that by listing at most `ATTENTION_LIMIT` verdicts that
need attention and cutting long reasons, since the results folder has the rest.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.errors import UsageError
from harness.judge.verdicts import MISMATCH
from harness.report.grid import Cell, run_grids
from harness.report.runs import describe, observed_text, unreachable_hosts, verdict_counts
from harness.report.symbols import ORDER, SYMBOL
from harness.results.records import Verdict, VerdictRecord
from harness.results.store import Run
from harness.text import markdown, visible

ATTENTION_LIMIT = 50
TEXT_LIMIT = 160
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def _cell_text(text: str, limit: int = TEXT_LIMIT) -> str:
    """Safe inside a table cell: one line, no HTML, links or table breaks, not too long."""
    flat = visible(" ".join(text.split()))
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return markdown(flat)


def _verdict_cell(cell: Cell | None) -> str:
    if cell is None:
        return ""
    return f"{cell.symbol} {_cell_text(cell.text, 40)}"


HEADER = "| verdict | host | runtime | fact / property | expected | observed | reason |"


def _attention_row(v: VerdictRecord) -> str:
    cells = [
        f"{SYMBOL[v.verdict]} {v.verdict}",
        _cell_text(v.host),
        _cell_text(v.runtime),
        _cell_text(v.subject()),
        _cell_text(describe(v.expected)),
        _cell_text(observed_text(v)),
        _cell_text(v.reason or ""),
    ]
    return "| " + " | ".join(cells) + " |"


def summary_text(run: Run) -> str:
    counts = verdict_counts(run)
    return " · ".join(f"{SYMBOL[v]} {counts[v]} {v}" for v in ORDER)


def render_markdown(run: Run) -> str:
    """The report: headline, mismatches, inconclusive verdicts, one grid per host
    (properties first, as on the terminal)."""
    counts = verdict_counts(run)
    mismatches = sum(counts[v] for v in MISMATCH)
    if mismatches:
        headline = f"{SYMBOL[Verdict.REGRESSION]} {mismatches} mismatch" + (
            "es" if mismatches > 1 else ""
        )
    elif counts[Verdict.INCONCLUSIVE]:
        headline = f"{SYMBOL[Verdict.INCONCLUSIVE]} {counts[Verdict.INCONCLUSIVE]} inconclusive"
    else:
        headline = f"{SYMBOL[Verdict.PASS]} all verdicts pass"
    title = f"harness: {markdown(run.matrix_name)}" if run.matrix_name else "harness"
    lines = [f"## {title}: {headline}", ""]
    facts = [
        f"run {markdown(run.run_id)}" if run.run_id else None,
        f"results {markdown(run.name)}",
    ]
    if run.started:
        facts.append(f"started {markdown(run.started)}")
    if run.exit_code is not None:
        facts.append(f"exit {run.exit_code}")
    if run.interrupted:
        facts.append("**interrupted**")
    lines += [" · ".join(f for f in facts if f), "", summary_text(run), ""]

    dead = unreachable_hosts(run.verdicts)
    if dead:  # one line per lost host: its verdicts say only that it was lost
        lines += ["### Unreachable hosts", ""]
        lines += [
            f"- {_cell_text(host)}: {_cell_text(why)} ({count} verdicts inconclusive)"
            for host, (why, count) in dead.items()
        ]
        lines.append("")
    mismatched = [v for v in run.verdicts if v.verdict in MISMATCH]
    unjudged = [v for v in run.verdicts if v.verdict is Verdict.INCONCLUSIVE and v.host not in dead]
    room = ATTENTION_LIMIT
    for heading, rows in (("Mismatches", mismatched), ("Inconclusive", unjudged)):
        if not rows:
            continue
        lines += [f"### {heading}", "", HEADER, "| --- | --- | --- | --- | --- | --- | --- |"]
        lines += [_attention_row(v) for v in rows[:room]]
        if len(rows) > room:
            lines += ["", f"…and {len(rows) - room} more in `verdicts.jsonl`."]
        room = max(room - len(rows), 0)
        lines.append("")

    for grid in run_grids(run):
        if grid.hosts[0] in dead:
            continue
        lines += [f"### host: {_cell_text(grid.hosts[0])}", ""]
        lines.append("| fact / property | " + " | ".join(map(_cell_text, grid.runtimes)) + " |")
        lines.append("| --- |" + " --- |" * len(grid.runtimes))
        for row in grid.rows:
            cells = [_verdict_cell(cell) for cell in row.cells]
            lines.append(f"| {_cell_text(row.subject)} | " + " | ".join(cells) + " |")
        lines.append("")
    legend = ", ".join(f"`{SYMBOL[v]}` {v}" for v in ORDER)
    lines += [f"<sub>{legend}</sub>", ""]
    return "\n".join(lines)


def append_step_summary(text: str) -> Path | None:
    """Append to `$GITHUB_STEP_SUMMARY` when CI set it; returns the file written, if any."""
    target = os.environ.get(STEP_SUMMARY)
    if not target:
        return None
    path = Path(target)
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
    except OSError as exc:
        raise UsageError(f"{STEP_SUMMARY}={target}: cannot append: {exc.strerror}") from exc
    return path
