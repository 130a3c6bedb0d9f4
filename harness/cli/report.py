"""`harness report` and `harness diff`."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.bisect.report import SUMMARY
from harness.cli.app import HUMAN, err_console, json_or_human, out_console
from harness.errors import ResultsError, UsageError
from harness.exitcodes import ExitCode
from harness.files import output_error, write_atomic
from harness.report.console import STYLE, print_report
from harness.report.diff import Change, RunDiff, diff_runs
from harness.report.markdown import append_step_summary
from harness.report.render import FORMATS, render, render_parts
from harness.results.records import Verdict
from harness.results.store.layout import holds_run
from harness.results.store.read import Run, load_run, load_runs
from harness.text import json_text, rich_text

REPORT_FORMATS = [HUMAN, *FORMATS]
# Formats that show a cell's probe output; the others show verdicts only, so the
# cells (most of a folder's bytes) are checked as they are read but not kept.
CELL_FORMATS = ("html", "junit")
# Formats written as they are made (JSON a verdict at a time, HTML a host at a time).
STREAMED = ("json", "html", "junit")


@click.command("report")
@click.argument(
    "folders", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="DIR..."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(REPORT_FORMATS),
    default=HUMAN,
    show_default=True,
    help="table: the grid `harness run` prints, fitted to the terminal ($COLUMNS);"
    " junit: JUnit XML for CI; markdown: a step summary; html: one self-contained page"
    " (several DIRs add a history); json: verdicts and counts for scripts.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the report to this file instead of stdout.",
)
@click.option(
    "--mixed",
    is_flag=True,
    help="Report on runs of different matrices together (refused otherwise).",
)
def report(folders: tuple[Path, ...], fmt: str, output: Path | None, mixed: bool) -> None:
    """Report on results folders (DIR...) written by `harness run`.

    With no --format, the grid `harness run` printed at its end, fitted to the
    terminal's width ($COLUMNS when set).
    HTML takes several folders (`results/*`) and adds a history of each cell's
    verdicts, marking the run where each mismatch first appeared; the newest run
    (by start time) is the grid; plain files among several DIRs are skipped. The
    other formats take one folder. Markdown is also appended to
    $GITHUB_STEP_SUMMARY when that is set. Among several DIRs, a bisection's folder
    is skipped with a note (its steps are results folders of their own), and runs
    of different matrices are refused unless --mixed is given.

    Exit 0 when the report was written, 2 when a folder is not a results folder.
    """
    if len(folders) > 1:  # `results/*` also matches results/README.md: skip plain files
        folders = tuple(f for f in folders if not (f.exists() and not f.is_dir()))
        folders = tuple(f for f in folders if not _bisection(f))
    runs = load_runs(folders, cells="lazy" if fmt in CELL_FORMATS else "none", checks="lazy")
    if fmt == HUMAN:
        _print_table(runs, output)
        return
    matrices = sorted({run.matrix_name for run in runs})
    if len(runs) > 1 and len(matrices) > 1 and not mixed and fmt == "html":
        raise UsageError(
            f"the folders hold runs of {len(matrices)} matrices ({', '.join(matrices)});"
            " give one matrix's runs, or --mixed to report on them together"
        )
    text = None if fmt in STREAMED else render(fmt, runs)
    parts = [text] if text is not None else render_parts(fmt, runs)
    if output is not None:
        try:
            write_atomic(output, parts)
        except OSError as exc:
            raise ResultsError(output_error(output, exc)) from exc
    else:
        for part in parts:
            sys.stdout.write(part)
        sys.stdout.flush()
    if fmt == "markdown" and text is not None:
        append_step_summary(text)


def _print_table(runs: Sequence[Run], output: Path | None) -> None:
    """The end-of-run report of one run again, to the terminal or, plain, to a file."""
    if len(runs) > 1:
        raise UsageError(
            f"--format {HUMAN} reports on one results folder; {len(runs)} given"
            " (several folders make a history: use --format html)"
        )
    run = runs[0]
    console = out_console()
    buffer = None
    if output is not None:
        buffer = io.StringIO()
        console = Console(file=buffer, width=console.width, highlight=False, color_system=None)
    print_report(
        console,
        run.verdicts,
        runtimes=run.runtimes(),
        folder=str(run.folder),
        exit_code=run.exit_code,
    )
    if output is not None and buffer is not None:
        try:
            write_atomic(output, buffer.getvalue())
        except OSError as exc:
            raise ResultsError(output_error(output, exc)) from exc


def _bisection(folder: Path) -> bool:
    """A `harness bisect` folder, which is no run: skipped among several, with a note."""
    if (folder / SUMMARY).is_file() and not holds_run(folder):
        err_console.print(
            rich_text(
                f"harness: note: {folder} is a bisection (bisect.json), not a run; skipped"
                " (its step-* folders are runs of their own)"
            ),
            soft_wrap=True,
        )
        return True
    return False


def _verdict_text(value: str | None) -> Text:
    if value is None:
        return Text("-", "dim")
    try:
        verdict = Verdict(value)
    except ValueError:
        return Text(value)
    symbol, style = STYLE[verdict]
    return Text(f"{symbol} {value}", style)


def _value(change: Change, value: str | None) -> Text:
    if change.kind in ("verdict", "added", "removed"):
        return _verdict_text(value)
    return Text("-", "dim") if value is None else rich_text(value)


def diff_table(result: RunDiff) -> Table:
    table = Table(
        title=Text.assemble(
            rich_text(f"A: {result.a.folder}"), "\n", rich_text(f"B: {result.b.folder}")
        ),
        title_justify="left",
        show_lines=False,
    )
    for column in ("side", "change", "host", "runtime", "fact / property", "check", "A", "B"):
        table.add_column(column)
    for change in result.changes:
        kind = change.kind + (f" ({change.verdicts} verdicts)" if change.verdicts else "")
        table.add_row(
            rich_text(change.side),
            rich_text(kind),
            rich_text(change.host),
            rich_text(change.runtime or ""),
            rich_text(change.subject or ""),
            rich_text(change.check or ""),
            _value(change, change.before),
            _value(change, change.after),
        )
    return table


@click.command("diff")
@click.argument("run_a", type=click.Path(path_type=Path), metavar="RUN_A")
@click.argument("run_b", type=click.Path(path_type=Path), metavar="RUN_B")
@json_or_human("the changes as a JSON object on stdout, for scripts.")
def diff(run_a: Path, run_b: Path, fmt: str) -> None:
    """Show what changed from RUN_A to RUN_B (two results folders).

    Verdicts, expectations, observations, fact values, check outcomes (errno and
    control included), runtime versions and host kernels, and how hosts are reached
    (inventory drift). Each change is the config's, the lab's (a host lost, a verdict
    inconclusive on one side) or the sandbox's; a lost host is one line. Exit 1 when
    a verdict present in both runs changed, 0 otherwise, 2 on bad input.
    """
    result = diff_runs(load_run(run_a), load_run(run_b))
    if fmt == "json":
        click.echo(json_text(json.dumps(result.to_json(), indent=2, ensure_ascii=False)))
    else:
        console = Console(highlight=False)
        if not console.is_terminal:
            console.width = max(console.width, 160)
        if result.changes:
            console.print(diff_table(result))
        else:
            console.print(rich_text(f"no changes between {run_a} and {run_b}"))
        sandbox = result.sandbox_verdicts
        console.print(
            f"{result.verdicts_changed} verdict(s) changed: {sandbox} the sandbox's,"
            f" {result.verdicts_changed - sandbox} the lab's (unreachable hosts, inconclusive"
            f" cells); {len(result.changes)} change(s) in all"
        )
    raise SystemExit(ExitCode.MISMATCH if result.verdicts_changed else ExitCode.OK)
