"""From probe output to verdicts: the rules that decide pass, mismatch or inconclusive."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from harness.probe.protocol import parse_output
from harness.results import CellRecord, CellStatus, Verdict, exit_code, judge_facts
from harness.results.records import VerdictRecord
from harness.runner import cell_status
from harness.scenarios import SCENARIOS
from harness.transport import Completed

CASES = tomllib.loads(Path(__file__).with_name("probe_outputs.toml").read_text())["case"]
HOST_KERNEL = "6.18.44-test"


def _judge(case: dict[str, Any]) -> tuple[CellRecord, dict[str, VerdictRecord]]:
    stdout = case["stdout"].lstrip("\n")
    done = Completed(
        argv=("probe",),
        exit_status=case.get("exit_status", 0),
        signal=None,
        stdout=stdout,
        stderr=case.get("stderr", ""),
        elapsed=case.get("elapsed", 0.1),
    )
    output = parse_output(stdout)
    status, reason = cell_status(
        done,
        output,
        elapsed=done.elapsed,
        timeout=10.0,
        runtime=case.get("runtime", "the sandbox"),
    )
    cell = CellRecord(
        run_id="t",
        host="h",
        runtime="r",
        kind="k",
        scenarios=["mechanisms"],
        status=status,
        reason=reason,
        started="",
        ended="",
        elapsed=done.elapsed,
        facts=output.facts,
        host_kernel=HOST_KERNEL,
    )
    verdicts = judge_facts(
        cell,
        fact_ids=list(SCENARIOS["mechanisms"].facts),
        expectations=case.get("expect", {}),
        own_kernel=case["own_kernel"],
    )
    return cell, {v.subject(): v for v in verdicts}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_probe_output_yields_verdicts(case: dict[str, Any]) -> None:
    """Each recorded probe output yields exactly the verdicts the table lists."""
    cell, verdicts = _judge(case)
    assert cell.status == CellStatus(case.get("cell", "complete"))
    for fact, expected in case["verdicts"].items():
        assert verdicts[fact].verdict == Verdict(expected), (fact, verdicts[fact])
    for fact, reason in case.get("reasons", {}).items():
        assert verdicts[fact].reason == reason
    for fact, shown in case.get("displays", {}).items():
        assert verdicts[fact].display == shown


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_incomplete_output_never_passes(case: dict[str, Any]) -> None:
    """Whatever the expectation, a cell that did not complete yields no pass."""
    cell, verdicts = _judge(case)
    if cell.status is not CellStatus.COMPLETE:
        assert all(v.verdict is Verdict.INCONCLUSIVE for v in verdicts.values())


@pytest.mark.parametrize(
    ("verdicts", "code"),
    [
        ([], 0),
        ([Verdict.PASS, Verdict.SKIPPED], 0),
        ([Verdict.PASS, Verdict.INCONCLUSIVE], 3),
        ([Verdict.INCONCLUSIVE, Verdict.UNEXPECTED], 1),
        ([Verdict.REGRESSION], 1),
    ],
)
def test_exit_code_contract(verdicts: list[Verdict], code: int) -> None:
    """Mismatch beats inconclusive beats pass."""
    records = [
        VerdictRecord(host="h", runtime="r", expected=None, observed=None, verdict=v)
        for v in verdicts
    ]
    assert exit_code(records) == code
