"""Terminal output: live progress while a run goes, a verdict table after.

Progress goes to stderr so stdout stays clean for `--format json`. Every verdict
has its own symbol as well as its own colour, so the table reads without colour.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from harness.judge.verdicts import MISMATCH
from harness.report.runs import unreachable_hosts
from harness.report.symbols import ATTENTION, ORDER, SYMBOL
from harness.results.records import CellRecord, Verdict, VerdictRecord
from harness.text import markup, rich_text, visible

if TYPE_CHECKING:
    from rich.progress import TaskID

COLOUR = {
    Verdict.PASS: "green",
    Verdict.REGRESSION: "bold red",
    Verdict.UNEXPECTED: "red",
    Verdict.INCONCLUSIVE: "yellow",
    Verdict.SKIPPED: "dim",
    Verdict.FLAKY: "bold magenta",
}
STYLE = {verdict: (SYMBOL[verdict], COLOUR[verdict]) for verdict in ORDER}


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
                    f"  {markup(host)}", total=count, note="connecting"
                )

    def __enter__(self) -> LiveProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def host_ready(self, host: str, error: str | None) -> None:
        if host in self.hosts:
            note = f"[red]{markup(error)}[/]" if error else ""
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
        bad = sum(counts[v] for v in MISMATCH)
        marks = f"[red]{bad} mismatch[/] " if bad else ""
        if counts[Verdict.INCONCLUSIVE]:
            marks += f"[yellow]{counts[Verdict.INCONCLUSIVE]} inconclusive[/]"
        # Names come from user files: escape them, rich markup is for our own styling.
        where = markup(f"{record.host}/{record.runtime}")
        line = f"{where}: {markup(record.status)} in {record.elapsed:.1f}s {marks}"
        self.progress.console.log(line.rstrip())


def _cell(v: VerdictRecord | None) -> Text:
    if v is None:
        return Text("")
    symbol, style = STYLE[v.verdict]
    shown = visible(v.display or str(v.observed))
    return Text.assemble(
        (symbol + " ", style), (shown, "dim" if v.verdict is Verdict.SKIPPED else style)
    )


def verdict_tables(
    verdicts: Sequence[VerdictRecord], runtimes: Sequence[str], *, width: int | None = None
) -> list[Table]:
    """Facts and properties down, runtimes across: one table per host, except that
    hosts whose tables would be identical share one (a fleet is mostly alike, and
    fifty copies of a table hide the one host that differs).

    No name is ever cut: the fact / property column keeps its longest name whole;
    runtime names head their columns when they all fit in `width` beside it, and
    otherwise the columns are numbered and named in a legend under the table. Values
    wrap, and fold rather than end in "…"."""
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
        # Names and subjects come from files and hosts: Text, never markup.
        table = _table(hosts, columns, by_subject, numbered=False)
        if width is not None and _narrowest(table, width) > width:
            table = _table(hosts, columns, by_subject, numbered=True)
        tables.append(table)
    return tables


def _table(
    hosts: Sequence[str],
    columns: Sequence[str],
    by_subject: dict[str, dict[str, VerdictRecord]],
    *,
    numbered: bool,
) -> Table:
    """One host group's table; `numbered`: runtime columns 1..N, named in a legend."""
    # Names and subjects come from files and hosts: Text, never markup.
    legend = "  ".join(f"{i}={visible(rt)}" for i, rt in enumerate(columns, 1))
    table = Table(
        title=_hosts_title(hosts),
        title_justify="left",
        show_lines=False,
        caption=rich_text(f"runtimes: {legend}") if numbered else None,
        caption_justify="left",
    )
    longest = max((cell_len(visible(s)) for s in by_subject), default=0)
    table.add_column("fact / property", style="bold", no_wrap=True, min_width=longest)
    for i, rt in enumerate(columns, 1):
        if numbered:
            table.add_column(str(i), overflow="fold")
        else:
            table.add_column(rich_text(rt), overflow="fold", min_width=cell_len(visible(rt)))
    # Properties first: they are the verdict; mechanism facts are audit detail.
    for subject, by_rt in sorted(by_subject.items(), key=lambda kv: _is_fact(kv[1])):
        table.add_row(rich_text(subject), *(_cell(by_rt.get(rt)) for rt in columns))
    return table


def _narrowest(table: Table, width: int) -> int:
    """How narrow rich can draw the table without cutting a name (every runtime name
    whole in its header, every value's longest word whole)."""
    # Measured unbounded: rich clamps a measurement to the width it is given.
    console = Console(width=max(width, 1 << 14), file=io.StringIO())
    return Measurement.get(console, console.options, table).minimum


def _natural_width(table: Table) -> int:
    """The width the table takes when nothing is wrapped: its longest cells, a space
    either side of each, and a rule before, between and after columns."""
    natural = []
    for column in table.columns:
        texts = [column.header, *column.cells]
        plain = [t.plain if isinstance(t, Text) else str(t) for t in texts]
        natural.append(max(cell_len(line) for text in plain for line in text.split("\n")))
    return sum(natural) + 3 * len(natural) + 1


def _is_fact(by_runtime: dict[str, VerdictRecord]) -> bool:
    return any(v.fact is not None for v in by_runtime.values())


def _hosts_title(hosts: Sequence[str], shown: int = 5) -> Text:
    """ "host: a", or "3 hosts: a, b, c", or "48 hosts: a, b, c, d, e and 43 more"."""
    if len(hosts) == 1:
        return rich_text(f"host: {hosts[0]}")
    names = ", ".join(hosts[:shown])
    more = f" and {len(hosts) - shown} more" if len(hosts) > shown else ""
    return rich_text(f"{len(hosts)} hosts: {names}{more}")


def fleet_summary(verdicts: Sequence[VerdictRecord], runtimes: Sequence[str]) -> list[Text]:
    """Per runtime and property, across hosts: "runsc egress_confinement: pass on 48/50
    hosts; regression on node-17, node-23", after one line per host that could not be
    reached at all (left out of the counts). Empty for a single host."""
    hosts = {v.host for v in verdicts}
    if len(hosts) < 2:
        return []
    dead = unreachable_hosts(verdicts)
    lines = [  # a lost host once, not once per runtime and property
        Text.assemble(
            (f"{STYLE[Verdict.INCONCLUSIVE][0]} ", STYLE[Verdict.INCONCLUSIVE][1]),
            f"{visible(host)} unreachable: ",
            (visible(why), "default"),
            f" ({count} verdicts inconclusive)",
        )
        for host, (why, count) in dead.items()
    ]
    by_key: dict[tuple[str, str], dict[Verdict, list[str]]] = {}
    for v in verdicts:
        if v.property is not None and v.host not in dead:
            by_key.setdefault((v.runtime, v.property), {}).setdefault(v.verdict, []).append(v.host)
    order = {rt: i for i, rt in enumerate(runtimes)}
    for (runtime, prop), seen in sorted(
        by_key.items(), key=lambda kv: order.get(kv[0][0], 1 << 30)
    ):
        total = sum(len(h) for h in seen.values())
        main = max(seen, key=lambda verdict: len(seen[verdict]))
        symbol, style = STYLE[main]
        parts: list[tuple[str, str] | str] = [
            (f"{symbol} ", style),
            f"{visible(runtime)} {prop}: ",
            (f"{main} on {len(seen[main])}/{total} hosts", style),
        ]
        for verdict in ORDER:
            if verdict is main or verdict not in seen:
                continue
            names = seen[verdict]
            listed = ", ".join(map(visible, names[:5])) + (
                f" and {len(names) - 5} more" if len(names) > 5 else ""
            )
            parts += ["; ", (f"{verdict} on {listed}", STYLE[verdict][1])]
        lines.append(Text.assemble(*parts))
    return lines


def _pin_natural_widths(table: Table, width: int) -> None:
    """If the table fits in `width` as it is, pin each column to its natural width.

    rich then no longer measures every cell again, which is most of the report's
    cost for a fleet (one table per host). The output is the same: a table that
    fits is drawn at its natural widths anyway; one that does not is left alone.
    """
    if _natural_width(table) > width:
        return
    natural = []
    for column in table.columns:
        texts = [column.header, *column.cells]
        plain = [t.plain if isinstance(t, Text) else str(t) for t in texts]
        natural.append(max(cell_len(line) for text in plain for line in text.split("\n")))
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


def attention_lines(verdicts: Iterable[VerdictRecord]) -> list[Text]:
    """Mismatches one per verdict; inconclusive verdicts that share a host and a reason
    (a dead host, a missing runtime) as one line with their count."""
    groups: dict[tuple[object, ...], list[VerdictRecord]] = {}
    for v in verdicts:
        if v.verdict not in ATTENTION:
            continue
        if v.verdict is Verdict.INCONCLUSIVE:
            key: tuple[object, ...] = (v.verdict, v.host, v.reason)
        else:
            key = (v.verdict, v.host, v.runtime, v.subject())
        groups.setdefault(key, []).append(v)
    lines = []
    for members in groups.values():
        first = members[0]
        symbol, style = STYLE[first.verdict]
        if len(members) == 1:
            where = f" {visible(first.host)}/{visible(first.runtime)} {visible(first.subject())}: "
        else:
            runtimes = list(dict.fromkeys(v.runtime for v in members))
            shown = visible(runtimes[0]) if len(runtimes) == 1 else f"{len(runtimes)} runtimes"
            where = f" {visible(first.host)} ({shown}, {len(members)} verdicts): "
        lines.append(
            Text.assemble(
                (f"{symbol} {first.verdict:<12}", style),
                where,
                (visible(first.reason or ""), "default"),
            )
        )
    return lines


def print_report(
    console: Console,
    verdicts: Sequence[VerdictRecord],
    *,
    runtimes: Sequence[str],
    folder: str,
    exit_code: int,
) -> None:
    """The end-of-run report: a fleet summary, the tables, then every verdict that
    needs attention (one line per shared cause: a dead host is one line, not one
    per check)."""
    summary = fleet_summary(verdicts, runtimes)
    for line in summary:
        console.print(line)
    if summary:
        console.print()
    for table in verdict_tables(verdicts, runtimes, width=console.width):
        _pin_natural_widths(table, console.width)
        console.print(table)
    attention = attention_lines(verdicts)
    if attention:
        console.print()
        for line in attention:
            console.print(line)
    console.print()
    console.print(summary_line(verdicts))
    console.print(rich_text(f"results: {folder}   exit {exit_code}"))
