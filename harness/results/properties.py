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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.results import arrivals
from harness.results.reach import judge_mounts, judge_start, own_kernel
from harness.results.records import CellRecord, CellStatus, CheckResult, ProbeCheck
from harness.scenarios import Check, Control, Scenario
from harness.scenarios.filesystem import SENTINEL_INTACT

READS = frozenset(
    {
        "fs-read-outside",
        "fs-traversal",
        "fs-symlink-planted",
        "fs-symlink-made",
        "fs-proc-self-root",
        "fs-proc-1-root",
        "fs-hardlink-in",
    }
)
# Write attempts and the host-side fact that proves them.
WRITES = {
    "fs-create-outside": "created",
    "fs-overwrite-outside": "overwritten",
    "fs-rename-in": "renamed",
}


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


def final_outcome(check: ProbeCheck, host_side: Mapping[str, Any], *, tag: str) -> Outcome:
    """Combine what the probe reported with what the host saw."""
    base = Outcome(check.outcome, check.errno, check.detail, check.elapsed_ms)
    if check.kind == "control":
        return base
    if check.scenario == "egress":
        if check.outcome == "escaped":
            return base  # the canary's nonce came back: proof on its own
        if "canary_events" not in host_side:
            why = host_side.get("canary_error") or "canary log unavailable"
            return Outcome(
                "error", check.errno, f"{why}: cannot rule out an arrival", check.elapsed_ms
            )
        seen = arrivals.of_attempt(host_side.get("canary_events", []), tag, check)
        if seen:
            late = " (after the cell)" if host_side.get("settled") else ""
            return Outcome("escaped", check.errno, f"canary saw {seen[0]}{late}", check.elapsed_ms)
        if check.outcome == "succeeded":
            waited = host_side.get("settled")
            why = "connected, but nothing reached the canary"
            why += f" within {waited:g} s after the host's last cell" if waited else ""
            return Outcome("blocked", None, f"{why} (intercepted)", check.elapsed_ms)
        return base
    if check.id in WRITES:
        fs = host_side.get("fs") or {}
        if fs.get(WRITES[check.id]):
            return Outcome("escaped", None, f"visible on the host: {WRITES[check.id]}")
        if check.outcome == "succeeded":
            if not fs:
                return Outcome("error", None, "host-side state not inspected", check.elapsed_ms)
            why = "write succeeded inside but is not visible on the host (swallowed)"
            return Outcome("blocked", None, why, check.elapsed_ms)
        return base
    if check.outcome == "succeeded":
        if check.id in ("fs-mounts", "priv-start"):
            return base  # judged with the cell's other evidence, in _reach
        if check.id in READS:
            return Outcome("blocked", None, "read succeeded but not the sentinel's content")
        return Outcome("error", None, f"unexpected outcome 'succeeded': {check.detail}")
    return base


def _sentinel(host_side: Mapping[str, Any]) -> Outcome:
    state = (host_side.get("fs") or {}).get("sentinel")
    if state == "intact":
        return Outcome("blocked", None, "sentinel unchanged on the host")
    if state in ("changed", "missing"):
        return Outcome("escaped", None, f"sentinel {state} on the host")
    return Outcome("error", None, "sentinel not inspected after the cell")


# Attempts made as started (root, if the sandbox starts so), before dropping privileges.
ROOT_PHASE = frozenset(
    {
        "priv-root-sysctl",
        "priv-root-mount",
        "priv-root-release-agent",
        "priv-root-handle",
        "priv-root-mknod",
        "priv-root-sys-module",
    }
)


def _reach(
    check: ProbeCheck,
    found: Outcome,
    record: CellRecord,
    *,
    start: ProbeCheck | None,
    allowed_caps: frozenset[str],
) -> Outcome:
    """Judge what the probe only reported (mounts, capabilities), and read the root
    phase in the light of the kernel it ran on: a success inside a sandbox's own
    kernel (gVisor, a VM) changes that kernel, not the host's."""
    host_side = record.host_side
    if check.outcome != "succeeded" and check.id in ("fs-mounts", "priv-start"):
        return found
    if check.id == "fs-mounts":
        outcome, detail = judge_mounts(check.evidence, host_side, record.host_kernel)
        return Outcome(outcome, None, detail, check.elapsed_ms)
    own = start is not None and own_kernel(
        start.evidence, host_side.get("host_fs") or {}, record.host_kernel
    )
    if check.id == "priv-start":
        outcome, detail = judge_start(check.evidence, allowed=allowed_caps, own=own)
        return Outcome(outcome, None, detail, check.elapsed_ms)
    if check.id in ROOT_PHASE and found.outcome == "escaped" and own:
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
    tag = tag or str(record.host_side.get("tag", ""))
    mine = [c for c in record.checks if c.scenario == scenario.probe_name]
    start = next((c for c in mine if c.id == "priv-start"), None)
    found = {
        c.id: _reach(
            c,
            final_outcome(c, record.host_side, tag=tag),
            record,
            start=start,
            allowed_caps=allowed_caps,
        )
        for c in mine
    }
    if (
        any(c.id == SENTINEL_INTACT for c in scenario.checks)
        and record.status is CellStatus.COMPLETE
    ):
        found[SENTINEL_INTACT] = _sentinel(record.host_side)
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
    has = record.host_side.get("canary_has")
    asked = [
        c
        for c in scenario.checks
        if not isinstance(has, list) or all(need in has for need in c.needs)
    ]
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
    fs = record.host_side.get("fs") or {}
    private = fs.get("allowed_shared") and fs.get("allowed_visible") is False
    if scenario.property == "filesystem_confinement" and private:
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
    if scenario.probe_name != "egress":
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
