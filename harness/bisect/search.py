"""The bisection itself: which version to try next, and what the answers mean.

Pure: no I/O. The caller asks `next()` for an index, runs whatever a step is,
and `record()`s its outcome.

Both ends are tried first: `--good` (index 0), then `--bad` (the last index). The
search goes on only if they really differ, good then bad; an end that contradicts
the user (a `--good` that is bad, a `--bad` that is good) makes the search
inconsistent, and an end that cannot be judged (skipped or flaky) stops it as
ambiguous: a bisection between ends that were never shown to differ would name a
"first bad" build on the user's word alone. Then it is a binary search between the
ends. A skipped or flaky step is left out, as with `git bisect skip`, and the next
try is the untried version nearest the middle. If only skipped or flaky versions
remain between the last good and the first bad, the first bad is one of them:
ambiguous.

Without skips a search over N versions takes at most 2 + ceil(log2(N-1)) steps;
`budget(N)` = ceil(log2 N) + 3 leaves room for a skip.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum


class StepOutcome(StrEnum):
    """What one bisection step (one version, its runs combined) showed; not a
    check's outcome (`harness.results`), which is about one attempt in a cell."""

    GOOD = "good"
    BAD = "bad"
    SKIPPED = "skipped"  # could not be judged: install, checksum, control, timeout...
    FLAKY = "flaky"  # repeated runs disagreed


class Status(StrEnum):
    FOUND = "found"  # last good and first bad are adjacent
    AMBIGUOUS = "ambiguous"  # skips, flakes or the step budget leave several candidates
    INCONSISTENT = "inconsistent"  # an end contradicts what the user said about it


def combine(outcomes: Sequence[StepOutcome]) -> StepOutcome:
    """One step's outcome from its repeated runs: good and bad together are
    flaky; otherwise any run that could not be judged makes the step skipped."""
    seen = set(outcomes)
    if not seen:
        return StepOutcome.SKIPPED
    if {StepOutcome.GOOD, StepOutcome.BAD} <= seen or StepOutcome.FLAKY in seen:
        return StepOutcome.FLAKY
    if StepOutcome.SKIPPED in seen:
        return StepOutcome.SKIPPED
    return outcomes[0]


def budget(count: int) -> int:
    """The step bound a search over `count` versions is held to: both ends, a
    binary search over what lies between them, and a skip of slack."""
    return math.ceil(math.log2(count)) + 3


@dataclass(frozen=True, slots=True)
class SearchResult:
    status: Status
    last_good: int | None  # index of the last good version (tried, or the --good end)
    first_bad: int | None  # index of the first bad version (tried, or the --bad end)
    candidates: tuple[int, ...]  # where the first bad can be: one index when found
    reason: str | None
    steps: tuple[tuple[int, StepOutcome], ...]


class Bisection:
    """State of one search over versions `0..count-1`: 0 is `--good`, the last `--bad`."""

    def __init__(self, count: int, *, max_steps: int | None = None) -> None:
        if count < 2:
            raise ValueError("a bisection needs at least two versions")
        self.count = count
        self.max_steps = max_steps
        self.lo = 0
        self.hi = count - 1
        self.tried: dict[int, StepOutcome] = {}
        self.order: list[int] = []
        self.inconsistent: str | None = None
        self.unjudged_end: str | None = None

    @property
    def exhausted(self) -> bool:
        return self.max_steps is not None and len(self.order) >= self.max_steps

    def next(self) -> int | None:
        """The index to try next, or None when the search is over."""
        if self.inconsistent is not None or self.unjudged_end is not None or self.exhausted:
            return None
        for end in (0, self.count - 1):  # the ends first: they must be shown to differ
            if end not in self.tried:
                return end
        between = [i for i in range(self.lo + 1, self.hi) if i not in self.tried]
        if between:
            middle = (self.lo + self.hi) / 2
            return min(between, key=lambda i: (abs(i - middle), i))
        return None

    def record(self, index: int, outcome: StepOutcome) -> None:
        if index in self.tried or not 0 <= index < self.count:
            raise ValueError(f"index {index} was already tried or is out of range")
        self.tried[index] = outcome
        self.order.append(index)
        if outcome in (StepOutcome.SKIPPED, StepOutcome.FLAKY) and index in (0, self.count - 1):
            which = "--good" if index == 0 else "--bad"
            self.unjudged_end = (
                f"the {which} version could not be judged ({outcome}): the ends were never"
                " shown to differ"
            )
        elif outcome is StepOutcome.GOOD:
            if index >= self.hi:
                self.inconsistent = "the --bad version is good: no change to find in this range"
            else:
                self.lo = max(self.lo, index)
        elif outcome is StepOutcome.BAD:
            if index <= self.lo:
                self.inconsistent = (
                    "the --good version is bad: the change is at or before it; "
                    "choose an older --good"
                )
            else:
                self.hi = min(self.hi, index)

    def result(self) -> SearchResult:
        steps = tuple((i, self.tried[i]) for i in self.order)
        if self.inconsistent is not None:
            return SearchResult(Status.INCONSISTENT, None, None, (), self.inconsistent, steps)
        if self.unjudged_end is not None:
            candidates = tuple(range(1, self.count))
            return SearchResult(Status.AMBIGUOUS, None, None, candidates, self.unjudged_end, steps)
        if self.hi == self.lo + 1:
            return SearchResult(Status.FOUND, self.lo, self.hi, (self.hi,), None, steps)
        candidates = tuple(range(self.lo + 1, self.hi + 1))
        untried = [i for i in candidates[:-1] if i not in self.tried]
        if untried:
            reason = f"the step budget ({self.max_steps}) ran out with {len(untried)} untried"
        else:
            reason = (
                f"{len(candidates) - 1} version(s) between could not be judged (skipped or flaky)"
            )
        return SearchResult(Status.AMBIGUOUS, self.lo, self.hi, candidates, reason, steps)


def run_search(
    count: int, oracle: Callable[[int], StepOutcome], *, max_steps: int | None = None
) -> SearchResult:
    """Drive a whole search with a synchronous step function (tests, simulations)."""
    search = Bisection(count, max_steps=max_steps)
    while (index := search.next()) is not None:
        search.record(index, oracle(index))
    return search.result()
