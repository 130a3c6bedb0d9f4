"""The outer fence's guarantees that need the host to act mid-cell (cells in
phases): judged like any property from the attempts after the barrier, with the
host runtime's same attempts as control, and only when the host did act.

A guarantee about a supervisor is measured only where harness can act on one (the
reference supervisor; for revocation, an external one with a `revoke` command):
without a controller there is nothing to lose and no rule to take back.
"""

from __future__ import annotations

from dataclasses import replace

from harness.judge.properties import JudgedControl, Observation, observe
from harness.results.records import CellRecord, CellStatus, Observed, Phase
from harness.scenarios.base import NO_ACTION, Need, Scenario
from harness.scenarios.fence import HELD


def observe_phased(
    scenario: Scenario,
    record: CellRecord,
    *,
    control: CellRecord | JudgedControl | None,
    supervised: bool,
) -> Observation:
    """One guarantee from a cell in phases; `supervised`: harness can act on the
    sandbox's controller at its barriers."""
    if not supervised:
        why = "no supervisor harness can act on: no controller to lose or rule to revoke"
        return Observation(Observed.SKIPPED, why)
    # The folder is shared if the host saw the barrier: that is checked below, and
    # the filesystem scenario's own proof of it need not have run.
    shared = replace(scenario, needs=scenario.needs - {Need.SENTINELS})
    found = observe(shared, record, control=control)
    if record.status is not CellStatus.COMPLETE:
        return found
    acted = record.host_side.phases or {}
    for phase in scenario.phases:
        did = acted.get(phase)
        if did is None:
            why = f"the host never acted at barrier {phase}"
            return Observation(Observed.INCONCLUSIVE, why, found.checks)
        said = did.said
        if did.status != 0 or said == NO_ACTION:
            why = f"the host's action at barrier {phase} failed: {said or 'no output'}"
            return Observation(Observed.INCONCLUSIVE, why, found.checks)
    if found.observed is not Observed.ENFORCED:
        return found
    held_id = HELD[scenario.phases[0]]
    held = next((c for c in record.checks if c.id == held_id), None)
    before = held.evidence.get("before") if held is not None else None
    if before != "ok":
        why = f"the allowed connection did not work before the barrier ({before}): nothing to lose"
        return Observation(Observed.INCONCLUSIVE, why, found.checks)
    done = "; ".join(f"{p}: {_did(acted[p])}" for p in scenario.phases)
    return replace(found, reason=f"{found.reason}; at the barrier {done}")


def _did(phase: Phase) -> str:
    """What the host did at a barrier: its hook's words, or (a silent external
    `revoke` command) how long it took."""
    return phase.said or f"done in {phase.ms} ms"
