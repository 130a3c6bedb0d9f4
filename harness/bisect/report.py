"""A bisection's answer, as text for people and as JSON for scripts.

Both say: the first bad and the last good version (or the candidate range when
skips or flakes leave it ambiguous), every step with its verdict, what changed
between the two versions, and the upstream compare link.
"""

from __future__ import annotations

from typing import Any

from harness.bisect.search import Status, StepOutcome, budget
from harness.bisect.steps import BisectReport, StepRecord
from harness.exitcodes import ExitCode
from harness.releases.versions import Version, compare_url
from harness.results import VerdictRecord

SUMMARY = "bisect.json"  # the bisection folder's summary, rewritten after every step


def bisection_exit_code(report: BisectReport) -> ExitCode:
    """What `harness bisect` exits with: OK when a boundary was found, INCONCLUSIVE
    when it is ambiguous or the ends contradict. A run's code comes from its verdicts
    instead (`harness.results.exit_code`)."""
    found = report.result is not None and report.result.status is Status.FOUND
    return ExitCode.OK if found else ExitCode.INCONCLUSIVE


def _version(report: BisectReport, index: int | None) -> Version | None:
    return report.versions[index] if index is not None else None


def _step_of(report: BisectReport, version: Version | None) -> StepRecord | None:
    return next((s for s in report.steps if s.version == version), None)


def _attempt(outcome: str | None, errno: str | None) -> str:
    shown = outcome or "missing"
    return f"{shown} ({errno})" if errno else shown


def describe_change(before: VerdictRecord, after: VerdictRecord) -> list[str]:
    """What differs between a good and a bad run: the property's observation and
    each attempt whose outcome changed, e.g. `tcp-raw-ip: blocked (ENETUNREACH) ->
    escaped`; for a fact, its value, e.g. `landlock_abi: unavailable (ENOSYS) -> 7`."""
    subject = before.subject()
    if before.fact is not None:
        return [f"{subject}: {before.display} -> {after.display}"]
    lines = [f"{subject}: {before.display} -> {after.display}"]
    old = {c.id: c for c in before.checks}
    new = {c.id: c for c in after.checks}
    for check_id in [*old, *(i for i in new if i not in old)]:
        a, b = old.get(check_id), new.get(check_id)
        was = _attempt(a.outcome, a.errno) if a else "missing"
        now = _attempt(b.outcome, b.errno) if b else "missing"
        if was != now:
            lines.append(f"{check_id}: {was} -> {now}")
    return lines


def change(report: BisectReport) -> list[str]:
    """The observed change across the boundary, if both sides were run."""
    result = report.result
    if result is None or result.status is not Status.FOUND:
        return []
    good = _step_of(report, _version(report, result.last_good))
    bad = _step_of(report, _version(report, result.first_bad))
    if good is None or bad is None or good.judged is None or bad.judged is None:
        return []
    return describe_change(good.judged, bad.judged)


def _compare(report: BisectReport) -> str | None:
    result = report.result
    if result is None or result.last_good is None or result.first_bad is None:
        return None
    return compare_url(report.versions[result.last_good], report.versions[result.first_bad])


def _assumed(report: BisectReport, index: int | None) -> bool:
    """Was this end taken on the user's word (its own step could not be judged)?"""
    step = _step_of(report, _version(report, index))
    return step is None or step.outcome not in (StepOutcome.GOOD, StepOutcome.BAD)


def to_json(report: BisectReport) -> dict[str, Any]:
    """The JSON object `--format json` prints and `bisect.json` holds."""
    result = report.result
    last_good = _version(report, result.last_good if result else None)
    first_bad = _version(report, result.first_bad if result else None)
    candidates = [report.versions[i].name for i in result.candidates] if result else []
    status = str(result.status) if result else None
    reason = result.reason if result else None
    if report.interrupted:
        status, reason = "interrupted", f"interrupted after {len(report.steps)} step(s)"
    return {
        "status": status,
        "first_bad": first_bad.name
        if first_bad and result and result.status is Status.FOUND
        else None,
        "last_good": last_good.name
        if last_good and result and result.status is Status.FOUND
        else None,
        "candidates": candidates,
        "range": {
            "last_good": last_good.name if last_good else None,
            "first_bad": first_bad.name if first_bad else None,
            "last_good_assumed": _assumed(report, result.last_good) if result else None,
            "first_bad_assumed": _assumed(report, result.first_bad) if result else None,
        },
        "reason": reason,
        "change": change(report),
        "compare_url": _compare(report),
        report.target.kind: report.target.name,
        "scenario": report.target.scenario,
        "runtime": report.runtime,
        "host": report.host,
        "matrix": str(report.matrix.path),
        "channel": report.good.channel,
        "arch": report.arch,
        "good": report.good.name,
        "bad": report.bad.name,
        "index": report.index,
        "versions": [v.name for v in report.versions],
        "budget": budget(len(report.versions)) if len(report.versions) >= 2 else None,
        "repeat": report.repeat,
        "steps": [s.to_json() for s in report.steps],
        "skipped": [
            {"version": s.version.name, "verdict": str(s.outcome), "reason": s.reason}
            for s in report.steps
            if s.outcome in (StepOutcome.SKIPPED, StepOutcome.FLAKY)
        ],
        "flaky": [s.version.name for s in report.steps if s.outcome is StepOutcome.FLAKY],
        "folder": str(report.folder),
        "started": report.started,
        "ended": report.ended,
        "interrupted": report.interrupted,
        "exit_code": bisection_exit_code(report) if result and not report.interrupted else None,
    }


def _detail(step: StepRecord, width: int = 100) -> str:
    if step.outcome in (StepOutcome.GOOD, StepOutcome.BAD) and step.judged is not None:
        text = f"{step.judged.verdict}: {step.judged.display}"
        if step.outcome is StepOutcome.BAD and step.judged.reason:
            text += f" ({step.judged.reason})"
    else:
        text = step.reason or ""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def render_text(report: BisectReport) -> str:
    """The human report: header, steps, then the answer."""
    lines = [
        f"bisect {report.target.name} on {report.runtime} @ {report.host}"
        f" ({report.good.channel}, {report.arch or '?'})",
    ]
    if len(report.versions) >= 2:
        lines.append(
            f"range: {report.good.name} (good) .. {report.bad.name} (bad):"
            f" {len(report.versions)} versions; a search with few skips takes at most"
            f" {budget(len(report.versions))} steps"
        )
    lines.append("")
    width = max([len(s.version.name) for s in report.steps] + [7])
    lines.append(f"step  {'version':<{width}}  verdict  detail")
    for s in report.steps:
        lines.append(f"{s.number:>4}  {s.version.name:<{width}}  {s.outcome!s:<7}  {_detail(s)}")
    lines.append("")
    result = report.result
    if result is None:
        lines.append("no step finished")
    elif result.status is Status.FOUND:
        assert result.first_bad is not None and result.last_good is not None
        good, bad = report.versions[result.last_good], report.versions[result.first_bad]
        note = " (as given; its own step could not be judged)"
        lines.append(f"first bad:  {bad.name}{note if _assumed(report, result.first_bad) else ''}")
        lines.append(f"last good:  {good.name}{note if _assumed(report, result.last_good) else ''}")
        observed = change(report) or ["not observed (an end was not run)"]
        lines.append(f"change:     {observed[0]}")
        lines += [f"            {line}" for line in observed[1:]]
    elif result.status is Status.AMBIGUOUS:
        names = [report.versions[i].name for i in result.candidates]
        lines.append(f"ambiguous:  {result.reason}")
        lines.append(f"candidates: the first bad is one of {', '.join(names)}")
        if result.last_good is not None:
            lines.append(f"known good: {report.versions[result.last_good].name}")
    else:
        lines.append(f"inconsistent: {result.reason}")
    url = _compare(report)
    if url is not None and result is not None and result.status is not Status.INCONSISTENT:
        lines.append(f"compare:    {url}")
    lines.append(f"results:    {report.folder}")
    return "\n".join(lines)
