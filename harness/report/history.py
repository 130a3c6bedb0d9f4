"""Verdicts across runs: for each (host, runtime, fact or property), a timeline.

A step marks `first` where a mismatch appeared: a regression or unexpected
verdict whose verdict or observation differs from the last run that had this cell (or that
has no such run). Later runs with the same mismatch continue it; a pass in
between ends it, so a mismatch that comes back is marked again. A run that lacks
the cell (another shard, a smaller matrix) neither ends nor starts anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.judge.verdicts import MISMATCH
from harness.report.runs import observed_text
from harness.results.records import VerdictRecord
from harness.results.store import Key, Run


@dataclass(frozen=True, slots=True)
class Step:
    """One run's verdict in a timeline; `verdict` is None when the run lacks that cell."""

    run: Run
    index: int
    verdict: VerdictRecord | None
    first: bool = False

    @property
    def mismatch(self) -> bool:
        return self.verdict is not None and self.verdict.verdict in MISMATCH


def _signature(verdict: VerdictRecord | None) -> tuple[str, str] | None:
    if verdict is None:
        return None
    return (str(verdict.verdict), observed_text(verdict))


def timelines(runs: Sequence[Run]) -> dict[Key, list[Step]]:
    """Every key any run has, each with one step per run (oldest first)."""
    keyed = [run.by_key() for run in runs]
    keys: dict[Key, None] = {}
    for by_key in reversed(keyed):  # the newest run's order first
        keys.update(dict.fromkeys(by_key))
    result: dict[Key, list[Step]] = {}
    for key in keys:
        steps: list[Step] = []
        previous: tuple[str, str] | None = None
        for index, (run, by_key) in enumerate(zip(runs, keyed, strict=True)):
            verdict = by_key.get(key)
            signature = _signature(verdict)
            first = verdict is not None and verdict.verdict in MISMATCH and signature != previous
            steps.append(Step(run=run, index=index, verdict=verdict, first=first))
            if verdict is not None:  # a run without this cell says nothing about it
                previous = signature
        result[key] = steps
    return result


def mismatch_since(steps: Sequence[Step]) -> Step | None:
    """Where the latest run's mismatch first appeared; None if the latest run has none."""
    if not steps or not steps[-1].mismatch:
        return None
    for step in reversed(steps):
        if step.first:
            return step
    return None
