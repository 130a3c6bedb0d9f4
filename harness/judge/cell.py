"""Turn one finished cell into verdicts: its facts, and each property it tested."""

from __future__ import annotations

from harness.judge.attribution import observe_attribution
from harness.judge.fence import observe_phased
from harness.judge.properties import JudgedControl, judged, observe
from harness.judge.verdicts import default_expectation, judge_facts, judge_property
from harness.plan import Cell
from harness.results import CellRecord, VerdictRecord
from harness.scenarios import SCENARIOS
from harness.scenarios.base import Need
from harness.scenarios.fence import REVOKE_PHASE


def judge_cell(
    cell: Cell, record: CellRecord, *, control: CellRecord | JudgedControl | None
) -> list[VerdictRecord]:
    """Every verdict one cell yields; a control cell yields none. The host's control
    cell is its record, or (for a host's many cells) a `JudgedControl` of it, whose
    outcomes are worked out once."""
    if cell.control:
        return []
    control = judged(control)
    spec = cell.runtime.spec
    scenarios = [SCENARIOS[s] for s in cell.scenarios]
    verdicts = judge_facts(
        record,
        fact_ids=[f for s in scenarios for f in s.facts],
        expectations=spec.facts,
        own_kernel=cell.runtime.promises_own_kernel,
    )
    for scenario in scenarios:
        if scenario.property is None:
            continue
        if Need.DECISIONS in scenario.needs:
            evidence = record.host_side
            observation = observe_attribution(
                record,
                configured=spec.attribution is not None or spec.supervisor is not None,
                endpoint_only=spec.endpoint_only,
                decisions=evidence.decisions,
                fetch_error=evidence.decisions_error,
                expected_sha256=evidence.probe_sha256,
                via_supervisor=spec.supervisor is not None,
                other_sha256=evidence.other_sha256,
            )
        elif Need.PHASES in scenario.needs:
            # An external supervisor is acted on through its matrix commands: a
            # `revoke` command makes it revocable; nothing harness does kills it.
            revocable = REVOKE_PHASE in scenario.phases and bool(
                spec.attribution and spec.attribution.revoke
            )
            observation = observe_phased(
                scenario,
                record,
                control=control,
                supervised=spec.supervisor is not None or revocable,
            )
        else:
            observation = observe(
                scenario,
                record,
                control=control,
                allowed_caps=frozenset(spec.allowed_caps),
                policy=spec.policy,
            )
        expected = spec.expect.get(scenario.property) or default_expectation(cell.runtime.kind)
        verdicts.append(judge_property(record, scenario.property, observation, expected=expected))
    return verdicts
