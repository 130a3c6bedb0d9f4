"""From probe attempts and host-side evidence to a property observation.

The rules, in order:
- any attempt escaped (proved by the canary's log, the nonce, the sentinel's
  token, or a change visible on the host): the property is `violated`;
- every attempt blocked, every inside control passed, and every attempt's
  control (the same attempt from the host runtime) escaped: `enforced`;
- anything else (an error, a timeout, a dead canary, a control that did not
  escape, an incomplete cell): `inconclusive`. Never `enforced`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.judge import arrivals
from harness.judge.reach import judge_mounts, judge_start, own_kernel
from harness.results.records import CellRecord, CellStatus, CheckResult, HostEvidence, ProbeCheck
from harness.scenarios import Check, Control, Scenario
from harness.scenarios.base import Need, Rule


@dataclass(frozen=True, slots=True)
class Outcome:
    """The harness's final word on one attempt, after weighing host-side evidence."""

    outcome: str  # blocked | escaped | error | timeout | ok | failed
    errno: str | None = None
    detail: str | None = None
    elapsed_ms: float | None = None


@dataclass(frozen=True, slots=True)
class Observation:
    """What a cell showed about one property, with the checks behind it."""

    observed: str  # enforced | violated | inconclusive | skipped
    reason: str | None = None
    checks: list[CheckResult] = field(default_factory=list)


def final_outcome(
    check: ProbeCheck, rule: Check | None, evidence: HostEvidence, *, tag: str
) -> Outcome:
    """Combine what the probe reported with what the host saw, by the declared
    check's rule (a check no scenario declares keeps the probe's word)."""
    base = Outcome(check.outcome, check.errno, check.detail, check.elapsed_ms)
    if check.kind == "control":
        return base
    kind = rule.rule if rule is not None else Rule.PROBE
    if kind is Rule.ARRIVAL:
        return _arrival(check, base, evidence, tag=tag)
    if kind is Rule.WRITE and rule is not None and rule.host_fact:
        fs = evidence.fs or {}
        if fs.get(rule.host_fact):
            return Outcome("escaped", None, f"visible on the host: {rule.host_fact}")
        if check.outcome == "succeeded":
            if not fs:
                return Outcome("error", None, "host-side state not inspected", check.elapsed_ms)
            why = "write succeeded inside but is not visible on the host (swallowed)"
            return Outcome("blocked", None, why, check.elapsed_ms)
        return base
    if check.outcome == "succeeded":
        if kind in (Rule.MOUNTS, Rule.CAPS):
            return base  # judged with the cell's other evidence, in _reach
        if kind is Rule.READ:
            return Outcome("blocked", None, "read succeeded but not the sentinel's content")
        return Outcome("error", None, f"unexpected outcome 'succeeded': {check.detail}")
    return base


def _arrival(check: ProbeCheck, base: Outcome, evidence: HostEvidence, *, tag: str) -> Outcome:
    """An attempt towards the canary: escaped if its log holds the attempt's arrival."""
    if check.outcome == "escaped":
        return base  # the canary's nonce came back: proof on its own
    if evidence.canary_events is None:
        why = evidence.canary_error or "canary log unavailable"
        return Outcome("error", check.errno, f"{why}: cannot rule out an arrival", check.elapsed_ms)
    seen = arrivals.of_attempt(evidence.canary_events, tag, check)
    if seen:
        late = " (after the cell)" if evidence.settled else ""
        return Outcome("escaped", check.errno, f"canary saw {seen[0]}{late}", check.elapsed_ms)
    if check.outcome == "succeeded":
        waited = evidence.settled
        why = "connected, but nothing reached the canary"
        why += f" within {waited:g} s after the host's last cell" if waited else ""
        return Outcome("blocked", None, f"{why} (intercepted)", check.elapsed_ms)
    return base


def _sentinel(evidence: HostEvidence) -> Outcome:
    state = (evidence.fs or {}).get("sentinel")
    if state == "intact":
        return Outcome("blocked", None, "sentinel unchanged on the host")
    if state in ("changed", "missing"):
        return Outcome("escaped", None, f"sentinel {state} on the host")
    return Outcome("error", None, "sentinel not inspected after the cell")


def _reach(
    check: ProbeCheck,
    rule: Check | None,
    found: Outcome,
    record: CellRecord,
    *,
    start: ProbeCheck | None,
    allowed_caps: frozenset[str],
) -> Outcome:
    """Judge what the probe only reported (mounts, capabilities), and read the root
    phase in the light of the kernel it ran on: a success inside a sandbox's own
    kernel (gVisor, a VM) changes that kernel, not the host's."""
    evidence = record.host_side
    kind = rule.rule if rule is not None else Rule.PROBE
    if check.outcome != "succeeded" and kind in (Rule.MOUNTS, Rule.CAPS):
        return found
    if kind is Rule.MOUNTS:
        outcome, detail = judge_mounts(check.evidence, evidence, record.host_kernel)
        return Outcome(outcome, None, detail, check.elapsed_ms)
    own = start is not None and own_kernel(
        start.evidence, evidence.host_fs or {}, record.host_kernel
    )
    if kind is Rule.CAPS:
        outcome, detail = judge_start(check.evidence, allowed=allowed_caps, own=own)
        return Outcome(outcome, None, detail, check.elapsed_ms)
    if kind is Rule.ROOT and found.outcome == "escaped" and own:
        why = f"only in the sandbox's own kernel: {found.detail}"
        return Outcome("blocked", None, why, found.elapsed_ms)
    return found


def outcomes(
    scenario: Scenario,
    record: CellRecord,
    *,
    tag: str | None = None,
    allowed_caps: frozenset[str] = frozenset(),
) -> dict[str, Outcome]:
    """Final outcomes of a cell's checks for one scenario, by check id."""
    tag = tag or record.host_side.tag
    declared = {c.id: c for c in scenario.checks}
    mine = [(c, declared.get(c.id)) for c in record.checks if c.scenario == scenario.probe_name]
    # Which kernel the root phase ran in is read off the capabilities check's evidence.
    start = next((c for c, rule in mine if rule is not None and rule.rule is Rule.CAPS), None)
    found = {
        c.id: _reach(
            c,
            rule,
            final_outcome(c, rule, record.host_side, tag=tag),
            record,
            start=start,
            allowed_caps=allowed_caps,
        )
        for c, rule in mine
    }
    if record.status is CellStatus.COMPLETE:
        for check in scenario.checks:
            if check.rule is Rule.SENTINEL:
                found[check.id] = _sentinel(record.host_side)
    return found


def _control_text(check: Check, control: dict[str, Outcome] | None) -> str | None:
    if check.control is Control.NONE or check.inside_control:
        return "n/a"
    if control is None:
        return None
    seen = control.get(check.control_id or check.id)
    return seen.outcome if seen else None


def observe(
    scenario: Scenario,
    record: CellRecord,
    *,
    control: CellRecord | None,
    allowed_caps: frozenset[str] = frozenset(),
) -> Observation:
    """Judge one property from one cell, using the host runtime's cell as control.
    `allowed_caps` are the capabilities the runtime entry declares beyond Docker's
    default set (audited: named in the `priv-start` check's detail)."""
    if record.status is not CellStatus.COMPLETE:
        return Observation("inconclusive", f"cell {record.status}: {record.reason}")
    has = record.host_side.canary_has
    asked = [c for c in scenario.checks if has is None or all(need in has for need in c.needs)]
    mine = outcomes(scenario, record, allowed_caps=allowed_caps)
    theirs = (
        outcomes(scenario, control)
        if control is not None and control.status is CellStatus.COMPLETE
        else None
    )
    results = []
    for check in asked:
        got = mine.get(check.id)
        results.append(
            CheckResult(
                id=check.id,
                outcome=got.outcome if got else "missing",
                errno=got.errno if got else None,
                detail=got.detail if got else "the probe did not report this check",
                elapsed_ms=got.elapsed_ms if got else None,
                control=_control_text(check, theirs),
            )
        )
    escaped = [r for r in results if r.outcome == "escaped"]
    if escaped:
        first = escaped[0]
        return Observation("violated", f"{first.id} escaped: {first.detail}", results)
    fs = record.host_side.fs or {}
    private = fs.get("allowed_shared") and fs.get("allowed_visible") is False
    if Need.SENTINELS in scenario.needs and private:
        why = "the folder the sandbox wrote as allowed is not the host's allowed folder"
        return Observation("inconclusive", why, results)
    paired = list(zip(asked, results, strict=True))
    for check, result in paired:
        if check.inside_control and result.outcome != "ok":
            why = f"inside control {check.id} did not pass ({result.outcome}"
            why += f" {result.errno})" if result.errno else ")"
            return Observation("inconclusive", f"{why}: {result.detail}", results)
    for check, result in paired:
        if check.inside_control:
            continue
        if result.outcome != "blocked":
            why = f"{check.id}: {result.outcome}: {result.detail}"
            return Observation("inconclusive", why, results)
        if result.control not in ("escaped", "n/a"):
            if theirs is None:
                why = "no usable control cell (host runtime) on this host"
            else:
                why = f"its control did not escape (host runtime: {result.control or 'missing'})"
            return Observation("inconclusive", f"{check.id} blocked, but {why}", results)
    return Observation("enforced", _tried(scenario, asked, results), results)


def _tried(scenario: Scenario, asked: list[Check], results: list[CheckResult]) -> str | None:
    """What an enforced egress verdict rests on: the channels tried, those left out
    (a family the canary lacks), and the attempts that were intercepted."""
    if Need.TARGETS not in scenario.needs:
        return None
    ids = [r.id for r in results]
    why = f"{len(ids)} attempts blocked: " + ", ".join(ids)
    left = [c.id for c in scenario.checks if c not in asked]
    if left:
        why += f"; not asked (the canary could not see them): {', '.join(left)}"
    intercepted = [r.id for r in results if "(intercepted)" in (r.detail or "")]
    if intercepted:
        why += f"; intercepted (connected, nothing arrived): {', '.join(intercepted)}"
    return why
