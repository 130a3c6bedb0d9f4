"""Terminal output: live progress while a run goes, a verdict table after.

Progress goes to stderr so stdout stays clean for `--format json`. Every verdict
has its own symbol as well as its own colour, so the table reads without colour.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from harness.results.records import CellRecord, Verdict, VerdictRecord

if TYPE_CHECKING:
    from rich.progress import TaskID

STYLE = {
    Verdict.PASS: ("✓", "green"),
    Verdict.REGRESSION: ("✗", "bold red"),
    Verdict.UNEXPECTED: ("!", "red"),
    Verdict.INCONCLUSIVE: ("?", "yellow"),
    Verdict.SKIPPED: ("·", "dim"),
    Verdict.FLAKY: ("~", "bold magenta"),
}
ORDER = [
    Verdict.PASS,
    Verdict.REGRESSION,
    Verdict.UNEXPECTED,
    Verdict.FLAKY,
    Verdict.INCONCLUSIVE,
    Verdict.SKIPPED,
]


class LiveProgress:
    """Cells done out of total, overall and per host, while the run goes."""

    def __init__(self, console: Console, cells_per_host: dict[str, int]) -> None:
        # Imported here: a run with --no-progress (CI, logs) never draws a bar.
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.progress = Progress(
            TextColumn("{task.description:<24}"),
            BarColumn(bar_width=30),
            MofNCompleteColumn(),
            TextColumn("{task.fields[note]}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        total = sum(cells_per_host.values())
        self.total: TaskID = self.progress.add_task("all cells", total=total, note="")
        self.hosts: dict[str, TaskID] = {}
        if len(cells_per_host) > 1:
            for host, count in cells_per_host.items():
                self.hosts[host] = self.progress.add_task(
                    f"  {escape(host)}", total=count, note="connecting"
                )

    def __enter__(self) -> LiveProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def host_ready(self, host: str, error: str | None) -> None:
        if host in self.hosts:
            note = f"[red]{escape(error)}[/]" if error else ""
            self.progress.update(self.hosts[host], note=note)

    def cell_started(self, cell: object) -> None:
        pass

    def cell_finished(
        self, cell: object, record: CellRecord, verdicts: list[VerdictRecord]
    ) -> None:
        self.progress.advance(self.total)
        if record.host in self.hosts:
            self.progress.advance(self.hosts[record.host])
        counts = Counter(v.verdict for v in verdicts)
        bad = counts[Verdict.REGRESSION] + counts[Verdict.UNEXPECTED]
        marks = f"[red]{bad} mismatch[/] " if bad else ""
        if counts[Verdict.INCONCLUSIVE]:
            marks += f"[yellow]{counts[Verdict.INCONCLUSIVE]} inconclusive[/]"
        # Names come from user files: escape them, rich markup is for our own styling.
        where = escape(f"{record.host}/{record.runtime}")
        line = f"{where}: {record.status} in {record.elapsed:.1f}s {marks}"
        self.progress.console.log(line.rstrip())


def _cell(v: VerdictRecord | None) -> Text:
    if v is None:
        return Text("")
    symbol, style = STYLE[v.verdict]
    shown = v.display or str(v.observed)
    return Text.assemble(
        (symbol + " ", style), (shown, "dim" if v.verdict is Verdict.SKIPPED else style)
    )


def verdict_tables(verdicts: Sequence[VerdictRecord], runtimes: Sequence[str]) -> list[Table]:
    """Facts and properties down, runtimes across: one table per host, except that
    hosts whose tables would be identical share one (a fleet is mostly alike, and
    fifty copies of a table hide the one host that differs)."""
    by_host: dict[str, list[VerdictRecord]] = {}
    for v in verdicts:  # one pass: a fleet has thousands of hosts
        by_host.setdefault(v.host, []).append(v)
    groups: dict[tuple[object, ...], list[str]] = {}
    shapes: dict[tuple[object, ...], tuple[list[str], dict[str, dict[str, VerdictRecord]]]] = {}
    for host, rows in by_host.items():
        seen = {v.runtime for v in rows}
        columns = [r for r in runtimes if r in seen]
        by_subject: dict[str, dict[str, VerdictRecord]] = {}
        for v in rows:
            by_subject.setdefault(v.subject(), {})[v.runtime] = v
        # Order-free: the same results make the same key whichever cell ended first.
        cells = sorted(
            (subject, rt, str(v.verdict), v.display or str(v.observed))
            for subject, by_rt in by_subject.items()
            for rt, v in by_rt.items()
        )
        key: tuple[object, ...] = (tuple(columns), tuple(cells))
        groups.setdefault(key, []).append(host)
        shapes.setdefault(key, (columns, by_subject))
    tables = []
    for key, hosts in groups.items():
        columns, by_subject = shapes[key]
        title = (
            f"host: {hosts[0]}" if len(hosts) == 1 else f"{len(hosts)} hosts: {', '.join(hosts)}"
        )
        table = Table(title=title, title_justify="left", show_lines=False)
        table.add_column("fact / property", style="bold")
        for rt in columns:
            table.add_column(rt)
        for subject, by_rt in by_subject.items():
            table.add_row(subject, *(_cell(by_rt.get(rt)) for rt in columns))
        tables.append(table)
    return tables


def _pin_natural_widths(table: Table, width: int) -> None:
    """If the table fits in `width` as it is, pin each column to its natural width.

    rich then no longer measures every cell again, which is most of the report's
    cost for a fleet (one table per host). The output is the same: a table that
    fits is drawn at its natural widths anyway; one that does not is left alone.
    """
    natural = []
    for column in table.columns:
        texts = [column.header, *column.cells]
        plain = [t.plain if isinstance(t, Text) else str(t) for t in texts]
        natural.append(max(cell_len(line) for text in plain for line in text.split("\n")))
    # A space either side of each cell, and a rule before, between and after columns.
    if sum(natural) + 3 * len(natural) + 1 > width:
        return
    for column, pinned in zip(table.columns, natural, strict=True):
        column.width = pinned
        column.no_wrap = True


def summary_line(verdicts: Iterable[VerdictRecord]) -> Text:
    counts = Counter(v.verdict for v in verdicts)
    parts: list[tuple[str, str] | str] = []
    for verdict in ORDER:
        symbol, style = STYLE[verdict]
        if parts:
            parts.append("  ")
        parts.append((f"{symbol} {counts[verdict]} {verdict}", style if counts[verdict] else "dim"))
    return Text.assemble(*parts)


def print_report(
    console: Console,
    verdicts: Sequence[VerdictRecord],
    *,
    runtimes: Sequence[str],
    folder: str,
    exit_code: int,
) -> None:
    """The end-of-run report: tables, then every verdict that needs attention."""
    for table in verdict_tables(verdicts, runtimes):
        _pin_natural_widths(table, console.width)
        console.print(table)
    attention = [
        v
        for v in verdicts
        if v.verdict
        in (Verdict.REGRESSION, Verdict.UNEXPECTED, Verdict.FLAKY, Verdict.INCONCLUSIVE)
    ]
    if attention:
        console.print()
        for v in attention:
            symbol, style = STYLE[v.verdict]
            console.print(
                Text.assemble(
                    (f"{symbol} {v.verdict:<12}", style),
                    f" {v.host}/{v.runtime} {v.subject()}: ",
                    (v.reason or "", "default"),
                )
            )
    console.print()
    console.print(summary_line(verdicts))
    console.print(f"results: {folder}   exit {exit_code}")
