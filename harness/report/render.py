"""Report formats by name, for `harness report` and `harness run --report`."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from harness.errors import ResultsError, UsageError
from harness.files import write_atomic
from harness.report.html import html_parts, render_html
from harness.report.junit import junit_parts, render_junit
from harness.report.markdown import append_step_summary, render_markdown
from harness.report.runs import verdict_counts
from harness.results.store import Run, load_run
from harness.text import json_text

# format -> file extension of `report.<ext>` in a results folder
FORMATS: dict[str, str] = {"junit": "xml", "markdown": "md", "html": "html", "json": "json"}


def render_json(run: Run) -> str:
    """The run's verdicts with enough context for a script: one JSON object."""
    return "".join(json_parts(run))


def json_parts(run: Run) -> Iterator[str]:
    """`render_json`'s text in pieces, one verdict at a time, byte for byte what
    `json_text(json.dumps(..., indent=2))` of the whole would be: a report of many
    hosts never holds the whole document, and no raw bidi or control character."""
    head: dict[str, Any] = {
        "folder": str(run.folder),
        "run_id": run.run_id or None,
        "matrix": run.matrix_name or None,
        "started": run.started or None,
        "ended": run.ended,
        "interrupted": run.interrupted,
        "exit_code": run.exit_code,
        "counts": {str(k): n for k, n in verdict_counts(run).items()},
        "verdicts": [],
    }
    text = json_text(json.dumps(head, indent=2, ensure_ascii=False, default=str))
    if not run.verdicts:
        yield text + "\n"
        return
    yield text.removesuffix("[]\n}") + "["
    for i, verdict in enumerate(run.verdicts):
        whole = run.full(verdict).to_json()
        row = json_text(json.dumps(whole, indent=2, ensure_ascii=False, default=str))
        yield ("\n" if i == 0 else ",\n") + textwrap.indent(row, "    ")
    yield "\n  ]\n}\n"


def render_parts(fmt: str, runs: Sequence[Run]) -> Iterator[str]:
    """`render`'s text in pieces (JSON streams its verdicts, HTML its hosts, JUnit its
    suites; Markdown comes whole)."""
    if fmt == "json" and len(runs) == 1:
        yield from json_parts(runs[0])
    elif fmt == "html" and runs:
        yield from html_parts(runs)
    elif fmt == "junit" and len(runs) == 1:
        yield from junit_parts(runs[0])
    else:
        yield render(fmt, runs)


def render(fmt: str, runs: Sequence[Run]) -> str:
    """One report. Only HTML takes several runs (its history view); the rest take one.

    Raises:
        UsageError: an unknown format, or several runs for a one-run format.
    """
    if fmt not in FORMATS:
        raise UsageError(f"unknown report format {fmt!r} (known: {', '.join(FORMATS)})")
    if not runs:
        raise UsageError("no results folder given")
    if fmt == "html":
        return render_html(runs)
    if len(runs) > 1:
        raise UsageError(
            f"--format {fmt} reports on one results folder; {len(runs)} given"
            " (several folders make a history: use --format html)"
        )
    run = runs[0]
    if fmt == "junit":
        return render_junit(run)
    if fmt == "markdown":
        return render_markdown(run)
    return render_json(run)


def write_reports(folder: Path, formats: Sequence[str]) -> list[Path]:
    """Write `report.<ext>` for each format into a finished results folder
    (`harness run --report ...`).

    A Markdown report is also appended to `$GITHUB_STEP_SUMMARY` when that is set.
    """
    run = load_run(folder, checks="lazy")
    written = []
    for fmt in dict.fromkeys(formats):
        path = folder / f"report.{FORMATS.get(fmt, fmt)}"
        text = render(fmt, [run])
        try:
            write_atomic(path, text)
        except OSError as exc:
            raise ResultsError(f"{path}: cannot write report: {exc.strerror}") from exc
        written.append(path)
        if path.suffix == ".md":
            append_step_summary(text)
    return written
