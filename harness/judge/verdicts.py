"""Judge observations against expectations.

The rule that matters most: anything short of a complete, trustworthy
observation is `inconclusive`, never `pass`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from harness.exitcodes import ExitCode
from harness.judge.properties import Observation
from harness.matrix.models import COMPARISON
from harness.results.records import (
    CellRecord,
    CellStatus,
    CheckResult,
    FactObservation,
    Observed,
    Verdict,
    VerdictRecord,
)
from harness.scenarios.base import Property

Expected = int | bool | str
_OPS: dict[str, Callable[[int, int], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}
IDENTITY_FACT = "kernel_release"


def describe_expectation(expected: Expected) -> str:
    return str(expected).lower() if isinstance(expected, bool) else str(expected)


def fact_matches(expected: Expected, fact: FactObservation) -> bool:
    """Does a measured fact satisfy an expectation?

    `"unavailable"` and `"available"` test the status; `">= 3"` style strings
    compare numbers; anything else must equal the measured value exactly
    (booleans and numbers are never confused).
    """
    if expected == "unavailable":
        return fact.status == "unavailable"
    if fact.status != "ok":
        return False
    if expected == "available":
        return True
    value = fact.value
    if isinstance(expected, str) and (m := COMPARISON.match(expected)):
        if isinstance(value, bool) or not isinstance(value, int):
            return False
        return _OPS[m.group(1)](value, int(m.group(2)))
    return type(expected) is type(value) and expected == value


def _check(fact: FactObservation) -> CheckResult:
    return CheckResult(
        id=fact.id,
        outcome=fact.status,
        errno=fact.errno,
        detail=fact.detail,
        elapsed_ms=fact.elapsed_ms,
    )


def _identity_verdict(fact: FactObservation, host_kernel: str | None) -> tuple[Verdict, str]:
    """A runtime that promises its own kernel must not report the host's."""
    if fact.status != "ok" or host_kernel is None:
        return Verdict.INCONCLUSIVE, "runtime identity: kernel release not measured"
    if fact.value == host_kernel:
        reason = f"runtime identity: sandbox reports the host kernel ({host_kernel})"
        return Verdict.UNEXPECTED, reason
    return Verdict.PASS, f"runtime identity: sandbox kernel differs from the host's ({host_kernel})"


def _unseen(
    cell: CellRecord, fact_id: str, expected: Expected | None, reason: str, display: str
) -> VerdictRecord:
    """The verdict on a fact the cell cannot show: inconclusive, whatever was expected."""
    return VerdictRecord(
        host=cell.host,
        runtime=cell.runtime,
        fact=fact_id,
        expected=expected,
        observed=None,
        verdict=Verdict.INCONCLUSIVE,
        reason=reason,
        display=display,
    )


def _seen(
    cell: CellRecord,
    fact_id: str,
    expected: Expected | None,
    fact: FactObservation,
    verdict: Verdict,
    reason: str | None = None,
) -> VerdictRecord:
    """The verdict on a fact the probe reported, built once: every cell of a large
    run makes one per fact, so no chain of `replace` copies."""
    return VerdictRecord(
        host=cell.host,
        runtime=cell.runtime,
        fact=fact_id,
        expected=expected,
        observed="unavailable" if fact.status == "unavailable" else fact.value,
        verdict=verdict,
        reason=reason,
        errno=fact.errno,
        display=fact.display(),
        checks=[_check(fact)],
    )


def judge_fact(
    cell: CellRecord, fact_id: str, *, expected: Expected | None, own_kernel: bool
) -> VerdictRecord:
    """The verdict for one fact of one cell."""
    identity = fact_id == IDENTITY_FACT and own_kernel and expected is None
    if identity:
        expected = f"not {cell.host_kernel}" if cell.host_kernel else "not the host's"
    fact = next((f for f in cell.facts if f.id == fact_id), None)
    if cell.status is not CellStatus.COMPLETE:
        return _unseen(
            cell, fact_id, expected, f"cell {cell.status}: {cell.reason}", str(cell.status)
        )
    if fact is None:
        return _unseen(cell, fact_id, expected, "the probe did not report this fact", "missing")
    failed = fact.status in ("error", "timeout")
    why = f"{fact.status}: {fact.detail or 'no detail'}"
    if expected is None:
        # Recorded for audit only: nothing was promised, so a fact that could not be
        # measured is no reason to call the run inconclusive; its error stays visible.
        note = f" ({why})" if failed else ""
        return _seen(
            cell, fact_id, expected, fact, Verdict.SKIPPED, f"no expectation: recorded only{note}"
        )
    if failed:
        return _seen(cell, fact_id, expected, fact, Verdict.INCONCLUSIVE, why)
    if identity:
        return _seen(cell, fact_id, expected, fact, *_identity_verdict(fact, cell.host_kernel))
    if fact_matches(expected, fact):
        return _seen(cell, fact_id, expected, fact, Verdict.PASS)
    reason = f"expected {describe_expectation(expected)}, observed {fact.display()}"
    return _seen(cell, fact_id, expected, fact, Verdict.UNEXPECTED, reason)


def judge_facts(
    cell: CellRecord,
    *,
    fact_ids: Iterable[str],
    expectations: Mapping[str, Expected],
    own_kernel: bool,
) -> list[VerdictRecord]:
    """One verdict per fact of the cell's scenarios, in scenario order."""
    return [
        judge_fact(cell, f, expected=expectations.get(f), own_kernel=own_kernel) for f in fact_ids
    ]


def default_expectation(kind: str) -> str:
    """The host runtime is the positive control: it must be violated. Every
    sandbox must enforce unless its entry says otherwise."""
    return Observed.VIOLATED if kind == "host" else Observed.ENFORCED


def judge_property(
    cell: CellRecord, prop: Property, observation: Observation, *, expected: str
) -> VerdictRecord:
    """A property verdict: a regression is expected-enforced but observed-violated."""
    base = VerdictRecord(
        host=cell.host,
        runtime=cell.runtime,
        property=prop,
        expected=expected,
        observed=observation.observed,
        verdict=Verdict.INCONCLUSIVE,
        reason=observation.reason,
        display=observation.observed,
        checks=observation.checks,
    )
    if observation.observed == Observed.SKIPPED:
        return replace(base, verdict=Verdict.SKIPPED)
    if observation.observed == Observed.INCONCLUSIVE:
        return base
    if observation.observed == expected:
        return replace(base, verdict=Verdict.PASS)
    if expected == Observed.ENFORCED:
        return replace(base, verdict=Verdict.REGRESSION)
    why = f"expected {expected}, observed {observation.observed}"
    return replace(base, verdict=Verdict.UNEXPECTED, reason=f"{why}: {observation.reason}")


# The one definition of a mismatch: a verdict that went against its expectation. It
# makes the run exit 1, a JUnit <failure>, a row under "Mismatches", a cell held for
# reruns. A flaky verdict is one too: reruns disagreed, so it never passes.
MISMATCH = frozenset({Verdict.REGRESSION, Verdict.UNEXPECTED, Verdict.FLAKY})


def exit_code(verdicts: Iterable[VerdictRecord]) -> ExitCode:
    """The contract: 1 on any mismatch (a flaky one too), else 3 on any
    inconclusive, else 0."""
    seen = {v.verdict for v in verdicts}
    if seen & MISMATCH:
        return ExitCode.MISMATCH
    if Verdict.INCONCLUSIVE in seen:
        return ExitCode.INCONCLUSIVE
    return ExitCode.OK


def settle_reruns(attempts: list[list[VerdictRecord]]) -> list[VerdictRecord]:
    """Final verdicts of a cell run several times: a subject whose verdicts all
    agree keeps the first; one whose verdicts disagree is `flaky`, with every
    attempt's verdict in the reason. Never silently a pass."""
    final = []
    for rows in zip(*attempts, strict=True):
        seen = [r.verdict for r in rows]
        first = rows[0]
        if len(set(seen)) == 1:
            note = f" (same in all {len(rows)} runs)" if first.verdict in MISMATCH else ""
            final.append(
                replace(first, reason=(first.reason or "") + note if note else first.reason)
            )
        else:
            history = ", ".join(str(v) for v in seen)
            # A property that held only sometimes was not observed enforced.
            observed = Observed.FLAKY if first.property else first.observed
            final.append(
                replace(
                    first,
                    verdict=Verdict.FLAKY,
                    observed=observed,
                    display=observed if first.property else first.display,
                    reason=f"outcomes disagree across {len(rows)} runs: {history}",
                )
            )
    return final
