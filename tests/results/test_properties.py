"""Property observations from checks, host-side evidence and controls (table-driven)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from harness.results import CellRecord, CellStatus
from harness.results.properties import observe
from harness.results.records import ProbeCheck
from harness.scenarios import SCENARIOS, Control

CASES = tomllib.loads(Path(__file__).with_name("property_cases.toml").read_text())["case"]
TAG = "harness-t-00001"
# The egress sweep's checks: a case that does not list one has it blocked (no route).
SWEEP = [c.id for c in SCENARIOS["egress-confinement"].checks[5:]]


def _filled(
    scenario: str, checks: list[dict[str, Any]], host_side: dict[str, Any]
) -> list[dict[str, Any]]:
    """A case's checks, with the sweep's unlisted ones blocked (those of a family
    the canary lacks are not asked for, so the probe does not report them)."""
    if scenario != "egress-confinement":
        return checks
    listed = {c["id"] for c in checks}
    has = host_side.get("canary_has", ["ipv4", "ipv6", "capture"])
    needs = {c.id: c.needs for c in SCENARIOS[scenario].checks}
    wanted = [i for i in SWEEP if all(n in has for n in needs[i])]
    rest = [{"id": i, "outcome": "blocked", "errno": "ENETUNREACH"} for i in wanted]
    return [*checks, *(c for c in rest if c["id"] not in listed)]


def _record(
    scenario: str,
    checks: list[dict[str, Any]],
    host_side: dict[str, Any],
    *,
    status: CellStatus,
    host_kernel: str | None = "6.1",
) -> CellRecord:
    probe_name = SCENARIOS[scenario].probe_name
    return CellRecord(
        run_id="t",
        host="h",
        runtime="r",
        kind="k",
        scenarios=[scenario],
        status=status,
        reason=None if status is CellStatus.COMPLETE else "probe crashed",
        started="",
        ended="",
        elapsed=0.0,
        checks=[
            ProbeCheck(
                id=c["id"],
                scenario=probe_name,
                kind=c.get("kind", "attempt"),
                outcome=c["outcome"],
                errno=c.get("errno"),
                detail=c.get("detail"),
                evidence=c.get("evidence", {}),
            )
            for c in _filled(scenario, checks, host_side)
        ],
        host_side={"tag": TAG, **host_side},
        host_kernel=host_kernel,
    )


def _control(case: dict[str, Any]) -> CellRecord | None:
    """The host runtime's cell: every attempt escaped, or blocked, as the case says."""
    mode = case["control"]
    if mode == "none":
        return None
    scenario = SCENARIOS[case["scenario"]]
    checks = []
    for check in scenario.checks:
        if check.id == "fs-sentinel-intact":
            continue
        if check.inside_control:
            checks.append({"id": check.id, "kind": "control", "outcome": "ok"})
        elif check.id in case.get("control_blocked", ()):
            checks.append({"id": check.id, "outcome": "blocked", "errno": "EPERM"})
        elif mode == "all-escaped" or (
            mode == "all-escaped-or-blocked" and check.control is Control.HOST
        ):
            checks.append({"id": check.id, "outcome": "escaped", "detail": "control"})
        else:
            checks.append({"id": check.id, "outcome": "blocked", "errno": "EPERM"})
    host_side = {"canary_events": [], "fs": {"sentinel": "intact"}}
    return _record(case["scenario"], checks, host_side, status=CellStatus.COMPLETE)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_property_observation(case: dict[str, Any]) -> None:
    """Each case yields the observation (and reason) the table lists."""
    scenario = SCENARIOS[case["scenario"]]
    record = _record(
        case["scenario"], case["checks"], case["host_side"], status=CellStatus.COMPLETE
    )
    allowed = frozenset(case.get("allowed_caps", []))
    result = observe(scenario, record, control=_control(case), allowed_caps=allowed)
    assert result.observed == case["observed"], result
    if "reason" in case:
        assert result.reason == case["reason"]
    for part in case.get("reason_contains", []):
        assert part in str(result.reason), result.reason
    details = {c.id: c.detail for c in result.checks}
    for check_id, detail in case.get("check_details", {}).items():
        assert details[check_id] == detail


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_incomplete_cell_is_never_enforced(case: dict[str, Any]) -> None:
    """The same checks from a cell that did not complete are inconclusive."""
    scenario = SCENARIOS[case["scenario"]]
    record = _record(case["scenario"], case["checks"], case["host_side"], status=CellStatus.ERROR)
    assert observe(scenario, record, control=_control(case)).observed == "inconclusive"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_every_check_reported_with_its_control(case: dict[str, Any]) -> None:
    """A verdict lists every check of the scenario, each with its control's outcome."""
    scenario = SCENARIOS[case["scenario"]]
    record = _record(
        case["scenario"], case["checks"], case["host_side"], status=CellStatus.COMPLETE
    )
    result = observe(scenario, record, control=_control(case))
    has = case["host_side"].get("canary_has", ["ipv4", "ipv6", "capture"])
    asked = [c for c in scenario.checks if all(n in has for n in c.needs)]
    assert [c.id for c in result.checks] == [c.id for c in asked]
    for spec, got in zip(asked, result.checks, strict=True):
        if spec.control is Control.NONE or spec.inside_control:
            assert got.control == "n/a"
        elif case["control"] == "none":
            assert got.control is None
        else:
            assert got.control in ("escaped", "blocked")


def test_a_missing_check_is_inconclusive() -> None:
    """If the probe skipped an attempt, the property cannot be enforced."""
    case = CASES[0]
    record = _record(
        case["scenario"], case["checks"][:-1], case["host_side"], status=CellStatus.COMPLETE
    )
    result = observe(SCENARIOS[case["scenario"]], record, control=_control(case))
    assert result.observed == "inconclusive"
    assert result.reason == "doh-port: missing: the probe did not report this check"
