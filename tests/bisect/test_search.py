"""The pure bisection, driven by fake step functions."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.bisect.search import (
    Bisection,
    Status,
    StepOutcome,
    budget,
    combine,
    run_search,
)

G, B, S, F = StepOutcome.GOOD, StepOutcome.BAD, StepOutcome.SKIPPED, StepOutcome.FLAKY


def regressed_at(
    k: int, *, odd: dict[int, StepOutcome] | None = None
) -> Callable[[int], StepOutcome]:
    """Versions before k are good, k and later bad, except those in `odd`."""
    odd = odd or {}
    return lambda i: odd.get(i, G if i < k else B)


def counting(oracle: Callable[[int], StepOutcome], seen: list[int]) -> Callable[[int], StepOutcome]:
    def step(i: int) -> StepOutcome:
        seen.append(i)
        return oracle(i)

    return step


@pytest.mark.parametrize("count", [2, 3, 4, 5, 8, 9, 13, 16, 17, 33, 100])
def test_finds_every_boundary_within_budget(count: int) -> None:
    """For every first-bad position, the search finds it in at most ceil(log2 N) + 3 steps."""
    for k in range(1, count):
        seen: list[int] = []
        result = run_search(count, counting(regressed_at(k), seen))
        assert result.status is Status.FOUND, (count, k)
        assert (result.last_good, result.first_bad) == (k - 1, k)
        assert len(seen) == len(set(seen)) <= budget(count), (count, k, seen)


def test_boundary_sides_are_always_observed() -> None:
    """The last good and first bad were both run, so the change between them is real."""
    for k in range(1, 13):
        result = run_search(13, regressed_at(k))
        tried = dict(result.steps)
        assert tried[k - 1] is G and tried[k] is B


def test_skips_are_searched_around() -> None:
    """A skipped version is never retried, and the search still lands on k."""
    seen: list[int] = []
    result = run_search(13, counting(regressed_at(9, odd={6: S, 5: S}), seen))
    assert result.status is Status.FOUND
    assert (result.last_good, result.first_bad) == (8, 9)
    assert seen[:4] == [0, 12, 6, 5]  # both ends first, then around the skipped middle
    assert len(seen) <= budget(13)


def test_skip_next_to_the_boundary_is_ambiguous() -> None:
    """If the version just before k cannot be judged, the first bad is k-1 or k."""
    result = run_search(13, regressed_at(9, odd={8: S}))
    assert result.status is Status.AMBIGUOUS
    assert (result.last_good, result.first_bad) == (7, 9)
    assert result.candidates == (8, 9)
    assert "could not be judged" in (result.reason or "")


def test_flaky_is_treated_like_a_skip() -> None:
    """A flaky version is left out; if it sits on the boundary, the answer is ambiguous."""
    result = run_search(9, regressed_at(4, odd={4: F}))
    assert result.status is Status.AMBIGUOUS
    assert result.candidates == (4, 5)
    assert dict(result.steps)[4] is F


def test_only_a_broken_candidate_between_is_ambiguous() -> None:
    """good, broken, bad: both ends, then the middle; the candidates are the last two."""
    result = run_search(3, regressed_at(2, odd={1: S}))
    assert result.status is Status.AMBIGUOUS
    assert result.steps == ((0, G), (2, B), (1, S))
    assert (result.last_good, result.first_bad, result.candidates) == (0, 2, (1, 2))


def test_a_run_of_skips_widens_the_range() -> None:
    """Several adjacent skips leave all of them, and the first bad seen, as candidates."""
    result = run_search(10, regressed_at(5, odd={3: S, 4: S, 5: S}))
    assert result.status is Status.AMBIGUOUS
    assert result.candidates == (3, 4, 5, 6)
    assert (result.last_good, result.first_bad) == (2, 6)


def test_good_end_that_is_bad_is_inconsistent() -> None:
    """A --good that reproduces the regression is reported, not silently accepted."""
    result = run_search(8, lambda i: B)
    assert result.status is Status.INCONSISTENT
    assert "--good version is bad" in (result.reason or "")
    assert result.steps[-1] == (0, B)


def test_bad_end_that_is_good_is_inconsistent() -> None:
    """A --bad that does not reproduce the regression is reported."""
    result = run_search(8, lambda i: G)
    assert result.status is Status.INCONSISTENT
    assert "--bad version is good" in (result.reason or "")


@pytest.mark.parametrize(("end", "which"), [(0, "--good"), (4, "--bad")])
@pytest.mark.parametrize("odd", [S, F])
def test_an_unjudgeable_end_stops_the_search(end: int, which: str, odd: StepOutcome) -> None:
    """If an end cannot be judged, nothing is searched on the user's word: ambiguous."""
    seen: list[int] = []
    result = run_search(5, counting(regressed_at(1, odd={end: odd}), seen))
    assert result.status is Status.AMBIGUOUS
    assert f"the {which} version could not be judged" in (result.reason or "")
    assert seen == [0, 4][: [0, 4].index(end) + 1]
    assert result.first_bad is None


def test_ends_that_do_not_differ_stop_after_two_steps() -> None:
    """Good and bad ends both bad: the search stops at once, having run only the ends."""
    seen: list[int] = []
    result = run_search(64, counting(lambda i: B, seen))
    assert result.status is Status.INCONSISTENT
    assert seen == [0]
    seen.clear()
    result = run_search(64, counting(lambda i: G, seen))
    assert result.status is Status.INCONSISTENT
    assert seen == [0, 63]


def test_step_budget_stops_the_search() -> None:
    """With max_steps the search stops and says how many versions it never tried."""
    result = run_search(64, regressed_at(40), max_steps=2)
    assert result.status is Status.AMBIGUOUS
    assert len(result.steps) == 2
    assert "step budget (2)" in (result.reason or "")


def test_two_versions_need_both_ends() -> None:
    """With nothing between, both ends are run to confirm the boundary."""
    result = run_search(2, regressed_at(1))
    assert result.status is Status.FOUND
    assert [i for i, _ in result.steps] == [0, 1]


@pytest.mark.parametrize(
    ("runs", "combined"),
    [
        ([G], G),
        ([B, B, B], B),
        ([G, B], F),
        ([B, S, G], F),
        ([G, S], S),
        ([S, S], S),
        ([G, F], F),
    ],
)
def test_repeated_runs_combine(runs: list[StepOutcome], combined: StepOutcome) -> None:
    """Disagreeing runs are flaky; a run that could not be judged makes the step skipped."""
    assert combine(runs) is combined


def test_record_refuses_a_second_answer() -> None:
    """Each version is tried once."""
    search = Bisection(4)
    index = search.next()
    assert index is not None
    search.record(index, G)
    with pytest.raises(ValueError):
        search.record(index, B)
