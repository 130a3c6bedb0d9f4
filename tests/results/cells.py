"""Cell records for the judging tests, built from plain dicts (no pytest here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.results import CellRecord, CellStatus
from harness.results.records import FactObservation, HostEvidence, ProbeCheck
from harness.scenarios import SCENARIOS, Control

TAG = "harness-t-00001"


def record(
    scenarios: list[str],
    checks: Sequence[dict[str, Any]] = (),
    host_side: dict[str, Any] | None = None,
    *,
    status: CellStatus = CellStatus.COMPLETE,
    facts: Sequence[dict[str, Any]] = (),
    host: str = "h",
    runtime: str = "r",
    host_kernel: str | None = None,
    control: bool = False,
) -> CellRecord:
    """A cell record; each check dict names its scenario by name or defaults to the first."""
    default = SCENARIOS[scenarios[0]].name
    return CellRecord(
        run_id="t",
        host=host,
        runtime=runtime,
        kind="k",
        scenarios=scenarios,
        status=status,
        reason=None if status is CellStatus.COMPLETE else "probe crashed",
        started="",
        ended="",
        elapsed=0.0,
        facts=[FactObservation(scenario="mechanisms", **f) for f in facts],
        checks=[
            ProbeCheck(
                id=c["id"],
                scenario=SCENARIOS[c["scenario"]].name if "scenario" in c else default,
                kind=c.get("kind", "attempt"),
                outcome=c["outcome"],
                errno=c.get("errno"),
                detail=c.get("detail"),
                evidence=c.get("evidence", {}),
            )
            for c in checks
        ],
        host_side=HostEvidence(tag=TAG, **(host_side or {})),
        host_kernel=host_kernel,
        control=control,
    )


def control_checks(scenario: str, mode: str) -> list[dict[str, Any]]:
    """The host runtime's checks for a scenario: every attempt escaped, blocked, or
    escaped only where the attempt has a host control (`all-escaped-or-blocked`)."""
    checks: list[dict[str, Any]] = []
    for check in SCENARIOS[scenario].checks:
        if check.id == "fs-sentinel-intact":
            continue
        if check.inside_control:
            checks.append({"id": check.id, "kind": "control", "outcome": "ok"})
        elif mode == "all-escaped" or (
            mode == "all-escaped-or-blocked" and check.control is Control.HOST
        ):
            checks.append({"id": check.id, "outcome": "escaped", "detail": "control"})
        else:
            checks.append({"id": check.id, "outcome": "blocked", "errno": "EPERM"})
    return checks


def control_outcome(check_id: str, scenario: str, mode: str) -> str:
    """What `control_checks` gave one attempt (the outcome its verdict must show)."""
    spec = next(c for c in SCENARIOS[scenario].checks if c.id == check_id)
    if spec.control is Control.NONE or spec.inside_control:
        return "n/a"
    if mode == "all-escaped" or (mode == "all-escaped-or-blocked" and spec.control is Control.HOST):
        return "escaped"
    return "blocked"
