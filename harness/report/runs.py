"""What every report shares: how a verdict, a check or a value is written, and
how many verdicts of each kind (the order and symbols are `symbols.py`'s).

Reports read a folder through `harness.results.store` (`load_run`, `Run`).
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.report.symbols import ORDER
from harness.results.records import CheckResult, Verdict, VerdictRecord
from harness.results.store import Run
from harness.results.store import load_run as load_run  # where `bisect --from` finds it


def verdict_counts(run: Run) -> dict[Verdict, int]:
    """How many verdicts of each kind, in report order."""
    found = dict.fromkeys(ORDER, 0)
    for v in run.verdicts:
        found[v.verdict] += 1
    return found


def failing_checks(verdict: VerdictRecord) -> list[CheckResult]:
    """The checks that went against the expectation; all of them when none stands out.

    Expected `enforced`: every attempt that was not blocked (and every inside control
    that did not pass). Expected `violated`: every attempt that did not escape.
    """
    if verdict.property is not None and verdict.expected == "enforced":
        bad = [c for c in verdict.checks if c.outcome not in ("blocked", "ok")]
    elif verdict.property is not None and verdict.expected == "violated":
        bad = [c for c in verdict.checks if c.outcome not in ("escaped", "ok")]
    else:
        bad = []
    return bad or list(verdict.checks)


def describe(value: object) -> str:
    """An expectation or observation as people write it: `true`, `7`, `enforced`, `-`."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def observed_text(verdict: VerdictRecord) -> str:
    return verdict.display or describe(verdict.observed)


def check_line(check: CheckResult) -> str:
    """One check on one line: `tcp-raw-ip: escaped errno=- control=escaped: detail`."""
    parts = [f"{check.id}: {check.outcome}", f"errno={check.errno or '-'}"]
    if check.control:
        parts.append(f"control={check.control}")
    line = " ".join(parts)
    return f"{line}: {check.detail}" if check.detail else line


UNREACHABLE = "cell unreachable: "


def unreachable_hosts(verdicts: Iterable[VerdictRecord]) -> dict[str, tuple[str, int]]:
    """Hosts the run could not reach at all, each with its reason and how many
    verdicts that left inconclusive. Every report folds such a host into one line:
    its verdicts say nothing about the sandbox, only that the lab lost a host."""
    seen: dict[str, list[VerdictRecord]] = {}
    for v in verdicts:
        seen.setdefault(v.host, []).append(v)
    dead = {}
    for host, rows in seen.items():
        reasons = {v.reason or "" for v in rows}
        if all(r.startswith(UNREACHABLE) for r in reasons):
            why = min(reasons).removeprefix(UNREACHABLE)
            dead[host] = (why, len(rows))
    return dead
