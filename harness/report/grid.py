"""The verdict grid as plain data: facts and properties down, runtimes across, each
cell's symbol, observed value and verdict. Computed here once; the terminal,
Markdown and HTML writers only draw it (as pytest's `build_summary_stats_line`
returns parts and the terminal reporter colours them).

Texts are raw: each writer escapes them for its own format (`harness.text`).
No rich here, so the writers that do not draw on a terminal never load it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from harness.report.runs import observed_text
from harness.report.symbols import SYMBOL
from harness.results.records import Verdict, VerdictRecord
from harness.results.store import Run

Kind = Literal["property", "fact"]


@dataclass(frozen=True, slots=True)
class Cell:
    """One runtime's verdict on one fact or property."""

    record: VerdictRecord
    runtime: str
    symbol: str
    text: str  # the observed value as people write it (`enforced`, `7`, `-`)

    @property
    def verdict(self) -> Verdict:
        return self.record.verdict


@dataclass(frozen=True, slots=True)
class Row:
    """A fact or property across the grid's runtimes; None where a runtime has no verdict."""

    subject: str
    kind: Kind
    cells: tuple[Cell | None, ...]

    def uniform(self) -> Cell | None:
        """For a fact that every runtime (two or more) observed alike, with the same
        verdict: one of its cells, which stands for the row ("kernel_machine: x86_64
        on every runtime"). None otherwise; a property is never folded (it is the
        verdict, and each runtime's is read on its own)."""
        if self.kind != "fact" or len(self.cells) < 2 or None in self.cells:
            return None
        first = self.cells[0]
        assert first is not None
        same = all(
            c is not None and (c.verdict, c.text) == (first.verdict, first.text) for c in self.cells
        )
        return first if same else None


@dataclass(frozen=True, slots=True)
class Grid:
    """One host's grid, or several hosts' that came out identical."""

    hosts: tuple[str, ...]
    runtimes: tuple[str, ...]
    rows: tuple[Row, ...]  # properties first, then facts, each in the order cells report them


def _cell(v: VerdictRecord) -> Cell:
    return Cell(v, v.runtime, SYMBOL[v.verdict], observed_text(v))


def host_grid(
    hosts: Sequence[str], verdicts: Iterable[VerdictRecord], runtimes: Sequence[str]
) -> Grid:
    """The grid of one host's verdicts (`hosts` names it, or the hosts it stands for).

    Runtimes in `runtimes`' order (those with no verdict left out, any unknown one
    after them); properties first, as every report puts them: they are the verdict,
    mechanism facts are audit detail."""
    by_subject: dict[str, dict[str, VerdictRecord]] = {}
    kinds: dict[str, Kind] = {}
    for v in verdicts:
        subject = v.subject()
        by_subject.setdefault(subject, {})[v.runtime] = v
        if v.fact is not None or subject not in kinds:
            kinds[subject] = "fact" if v.fact is not None else "property"
    seen = {rt for row in by_subject.values() for rt in row}
    columns = [rt for rt in dict.fromkeys([*runtimes, *sorted(seen)]) if rt in seen]
    ordered = sorted(by_subject, key=lambda s: kinds[s] == "fact")  # stable
    rows = tuple(
        Row(
            subject,
            kinds[subject],
            tuple(
                _cell(by_subject[subject][rt]) if rt in by_subject[subject] else None
                for rt in columns
            ),
        )
        for subject in ordered
    )
    return Grid(tuple(hosts), tuple(columns), rows)


def run_grids(run: Run) -> list[Grid]:
    """One grid per host of the run that has verdicts, in the run's host order."""
    return [
        host_grid([host], run.verdicts_of(host), run.runtimes(host))
        for host in run.hosts()
        if run.runtimes(host)
    ]


def subjects(run: Run, host: str) -> list[str]:
    """A host's facts and properties in the grid's order (properties first)."""
    facts = {v.subject() for v in run.verdicts_of(host) if v.fact is not None}
    found = run.subjects(host)
    return [s for s in found if s not in facts] + [s for s in found if s in facts]


def shared_grids(verdicts: Sequence[VerdictRecord], runtimes: Sequence[str]) -> list[Grid]:
    """One grid per host, except that hosts whose grids would be identical share one
    (a fleet is mostly alike, and fifty copies of a table hide the one host that
    differs). In the order hosts first appear."""
    by_host: dict[str, list[VerdictRecord]] = {}
    for v in verdicts:  # one pass: a fleet has thousands of hosts
        by_host.setdefault(v.host, []).append(v)
    groups: dict[tuple[object, ...], list[str]] = {}
    for host, rows in by_host.items():
        # Order-free: the same results make the same key whichever cell ended first.
        key = tuple(
            sorted((v.subject(), v.runtime, str(v.verdict), observed_text(v)) for v in rows)
        )
        groups.setdefault(key, []).append(host)
    return [host_grid(hosts, by_host[hosts[0]], runtimes) for hosts in groups.values()]
