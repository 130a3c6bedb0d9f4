"""Terminal output: live progress while a run goes, the verdict grid after.

Progress goes to stderr so stdout stays clean for `--format json`. Every verdict
has its own symbol as well as its own colour, so the table reads without colour.
The grid is `grid.py`'s; here it is only fitted to the terminal's width
(`_layout`, the one place that decides widths) and drawn.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.judge.verdicts import MISMATCH
from harness.report.grid import Cell, Grid, Row, shared_grids
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


CORNER = {"across": "fact / property", "down": "runtime"}
CAP = 24  # a cell's text wraps, at words, beyond this many columns
CELL_LINES = 3  # and beyond this many lines is cut at a word, ending in "…"
CUT_NOTE = (
    "… a value cut short at a word: verdicts.jsonl has it whole, as has"
    " `harness report DIR --format html`"
)


@dataclass(frozen=True, slots=True)
class _Part:
    """One table of a grid's layout: the row labels and grid columns it shows, and
    each column's width."""

    rows: tuple[int, ...]
    columns: tuple[int, ...]
    widths: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class _Layout:
    orientation: str  # "across": runtimes head the columns; "down": runtimes head the rows
    labels: tuple[str, ...]  # row labels
    headers: tuple[str, ...]  # column headers
    cells: tuple[tuple[Cell | None, ...], ...]  # [row][column]
    label_width: int
    parts: tuple[_Part, ...]


def _units(cell: Cell) -> list[str]:
    """What a cell's text wraps by: its words, the symbol glued to the first (a
    verdict never stands on a line without its value)."""
    words = visible(cell.text).split() or ["-"]
    return [f"{cell.symbol} {words[0]}", *words[1:]]


def _wrap(units: Sequence[str], width: int) -> tuple[list[str], bool]:
    """Lines of at most `width` made of whole units, and whether any was cut: beyond
    `CELL_LINES` lines the last ends at a word in "…". A unit wider than `width`
    (only one wider than the terminal allows) is folded: no other choice is left."""
    lines: list[str] = []
    for unit in units:
        while cell_len(unit) > width:  # cannot happen unless nothing else fits
            lines.append(unit[:width])
            unit = unit[width:]
        if lines and cell_len(lines[-1]) + 1 + cell_len(unit) <= width:
            lines[-1] += " " + unit
        else:
            lines.append(unit)
    if len(lines) <= CELL_LINES:
        return lines, False
    kept = lines[:CELL_LINES]
    last = kept[-1]
    while cell_len(last) + 2 > width and " " in last:
        last = last.rsplit(" ", 1)[0]
    kept[-1] = last + " …" if cell_len(last) + 2 <= width else last[: width - 1] + "…"
    return kept, True


def _layout(grid: Grid, rows: Sequence[Row], width: int, orientation: str) -> _Layout:
    """The one place that fits a grid to `width`, for one orientation.

    Each column is as wide as its header (a name is never cut) and its longest word,
    and at most `CAP` unless a word is wider; columns that do not fit beside the
    row labels go to another table that repeats them, the tables made as even as
    they fit; what width is left widens columns up to their longest value. A table
    drops the rows that have no verdict among its columns."""
    if orientation == "across":
        labels = tuple(r.subject for r in rows)
        headers = grid.runtimes
        cells = tuple(r.cells for r in rows)
    else:
        labels = grid.runtimes
        headers = tuple(r.subject for r in rows)
        cells = tuple(tuple(r.cells[i] for r in rows) for i in range(len(grid.runtimes)))
    longest = max((cell_len(visible(s)) for s in (*labels, CORNER[orientation])), default=0)
    label_width = min(longest, max(width // 2, 16))
    room = max(width - label_width - 7, 1)  # beside the labels, in a one-column table
    fixed = 1 + label_width + 3  # the left rule, the labels and their padding and rule
    least, most = [], []
    for c, header in enumerate(headers):
        texts = [_units(cell) for cell in (row[c] for row in cells) if cell is not None]
        word = max((cell_len(u) for units in texts for u in units), default=1)
        whole = max((cell_len(" ".join(units)) for units in texts), default=1)
        low = min(max(cell_len(visible(header)), word), room)
        least.append(low)
        most.append(min(max(low, min(whole, CAP)), room))
    chunks: list[list[int]] = []
    used = fixed
    for c in range(len(headers)):
        if chunks and used + least[c] + 3 <= width:
            chunks[-1].append(c)
            used += least[c] + 3
        else:
            chunks.append([c])
            used = fixed + least[c] + 3
    if len(chunks) > 1:  # as even as they fit: 3+3+3 rather than 4+4+1
        k, n = len(chunks), len(headers)
        sizes = [n // k + (i < n % k) for i in range(k)]
        starts = [sum(sizes[:i]) for i in range(k)]
        even = [list(range(a, a + size)) for a, size in zip(starts, sizes, strict=True)]
        if all(fixed + sum(least[c] + 3 for c in chunk) <= width for chunk in even):
            chunks = even
    parts = []
    for chunk in chunks:
        widths = {c: least[c] for c in chunk}
        spare = width - fixed - sum(least[c] + 3 for c in chunk)
        # Widen first the columns that then need no wrapping, the smallest need first.
        for c in sorted(chunk, key=lambda c: most[c] - least[c]):
            grow = min(most[c] - widths[c], max(spare, 0))
            widths[c] += grow
            spare -= grow
        shown = tuple(r for r, row in enumerate(cells) if any(row[c] is not None for c in chunk))
        parts.append(_Part(shown, tuple(chunk), tuple(widths[c] for c in chunk)))
    return _Layout(orientation, labels, headers, cells, label_width, tuple(parts))


def grid_renderables(grid: Grid, width: int) -> tuple[list[Table | Text], bool]:
    """A grid drawn to fit `width` columns, and whether a value had to be cut short.

    Facts alike on every runtime are one line each under the tables ("· seccomp_filter:
    true on every runtime"). The rest is a table with runtimes across, or down when
    they outnumber the facts and properties; when the columns are too many for the
    width, several tables, each repeating the row labels."""
    folded = [(row, row.uniform()) for row in grid.rows]
    kept = [row for row, same in folded if same is None]
    out: list[Table | Text] = []
    cut = False
    if kept:
        # The longer list down: runtimes across, unless they outnumber the facts and
        # properties (a matrix of mutants: 85 runtimes, 6 properties).
        orientation = "down" if len(grid.runtimes) > len(kept) else "across"
        layout = _layout(grid, kept, width, orientation)
        for part in layout.parts:
            table, short = _draw(grid, layout, part)
            out.append(table)
            cut = cut or short
    else:  # no table to carry the title: say whose lines these are
        title = _hosts_title(grid.hosts)
        title.append(f", runtimes: {', '.join(visible(r) for r in grid.runtimes)}")
        out.append(title)
    for row, same in folded:
        if same is not None:
            symbol, style = STYLE[same.verdict]
            out.append(
                Text.assemble(
                    (f"{symbol} ", style),
                    f"{visible(row.subject)}: ",
                    (visible(same.text), _text_style(same.verdict)),
                    " on every runtime",
                )
            )
    return out, cut


def _text_style(verdict: Verdict) -> str:
    return "dim" if verdict is Verdict.SKIPPED else STYLE[verdict][1]


def _draw(grid: Grid, layout: _Layout, part: _Part) -> tuple[Table, bool]:
    """One part of a layout as a rich table (titled with its span when there are
    several), and whether a value in it was cut short."""
    title = _hosts_title(grid.hosts)
    if len(layout.parts) > 1:
        first, last = part.columns[0] + 1, part.columns[-1] + 1
        if layout.orientation == "across":
            what = "runtimes"
        else:
            kinds = {row.kind for row in grid.rows if row.uniform() is None}
            what = {"property": "properties", "fact": "facts"}.get(
                kinds.pop() if len(kinds) == 1 else "", "facts and properties"
            )
        span = f"{first}" if first == last else f"{first}-{last}"
        title.append(f" ({what} {span} of {len(layout.headers)})")
    # Names and subjects come from files and hosts: Text, never markup.
    table = Table(title=title, title_justify="left", show_lines=False)
    table.add_column(
        CORNER[layout.orientation], style="bold", width=layout.label_width, overflow="fold"
    )
    for c, w in zip(part.columns, part.widths, strict=True):
        table.add_column(rich_text(layout.headers[c]), width=w, no_wrap=True, overflow="fold")
    cut = False
    for r in part.rows:
        shown = []
        for c, w in zip(part.columns, part.widths, strict=True):
            cell = layout.cells[r][c]
            if cell is None:
                shown.append(Text(""))
                continue
            lines, short = _wrap(_units(cell), w)
            cut = cut or short
            text = Text("\n".join(lines), style=_text_style(cell.verdict))
            text.stylize(STYLE[cell.verdict][1], 0, len(cell.symbol))
            shown.append(text)
        table.add_row(rich_text(layout.labels[r]), *shown)
    return table, cut


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


def _break_paths(text: Text, width: int) -> Text:
    """`text` with each word longer than `width` broken after a "/" (a path deep in
    a reason), so that rich need not cut it anywhere: only a word with no "/" to
    break at is left for rich to fold."""
    plain = text.plain
    cuts = []
    for word in re.finditer(r"\S+", plain):
        start = word.start()
        while word.end() - start > width:
            slash = plain.rfind("/", start, start + width)
            if slash <= start:
                break
            cuts.append(slash + 1)
            start = slash + 1
    if not cuts:
        return text
    return Text("\n").join(text.divide(cuts))


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
    exit_code: int | None,
    after_run: bool = False,
) -> None:
    """The end-of-run report (and `harness report`'s on a terminal): a fleet summary,
    the grids fitted to the console's width, then every verdict that needs attention
    (one line per shared cause: a dead host is one line, not one per check). After a
    run, a last line names the commands that read the folder again."""
    summary = fleet_summary(verdicts, runtimes)
    for line in summary:
        console.print(_break_paths(line, console.width))
    if summary:
        console.print()
    cut = False
    for grid in shared_grids(verdicts, runtimes):
        parts, short = grid_renderables(grid, console.width)
        cut = cut or short
        for part in parts:
            console.print(part)
    if cut:
        console.print(rich_text(CUT_NOTE, "dim"))
    attention = attention_lines(verdicts)
    if attention:
        console.print()
        for line in attention:
            console.print(_break_paths(line, console.width))
    console.print()
    console.print(summary_line(verdicts))
    ended = "exit -" if exit_code is None else f"exit {exit_code}"
    console.print(rich_text(f"results: {folder}   {ended}"))
    if after_run:
        quoted = shlex.quote(folder)
        console.print(
            rich_text(
                f"read again: harness report {quoted} [--format junit|markdown|html|json]"
                f" · export: harness evidence {quoted}",
                "dim",
            )
        )
