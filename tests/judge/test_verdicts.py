"""From probe output to verdicts: the rules that decide pass, mismatch or inconclusive."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from harness.execution import cell_status
from harness.judge.verdicts import exit_code, judge_facts
from harness.probe.protocol import parse_output
from harness.results import CellRecord, CellStatus, Verdict
from harness.results.records import CheckResult, VerdictRecord
from harness.scenarios import SCENARIOS
from harness.transport import Completed

CASES = tomllib.loads(Path(__file__).with_name("probe_outputs.toml").read_text())["case"]
HOST_KERNEL = "6.18.44-test"


def _judge(
    case: dict[str, Any], *, status: CellStatus | None = None
) -> tuple[CellRecord, dict[str, VerdictRecord]]:
    stdout = case["stdout"].lstrip("\n")
    done = Completed(
        argv=("probe",),
        exit_status=case.get("exit_status", None if "signal" in case else 0),
        signal=case.get("signal"),
        stdout=stdout,
        stderr=case.get("stderr", ""),
        elapsed=case.get("elapsed", 0.1),
    )
    output = parse_output(stdout)
    parsed, reason = cell_status(
        done,
        output,
        elapsed=done.elapsed,
        timeout=10.0,
        runtime=case.get("runtime", "the sandbox"),
    )
    if status is not None:  # the same output from a cell that ended otherwise
        reason = "forced"
    status = status or parsed
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
        checks=output.checks,
        host_kernel=case.get("host_kernel", HOST_KERNEL) or None,
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
    for fact, expected in case.get("expected", {}).items():
        assert verdicts[fact].expected == expected
    if "problem" in case:
        assert case["problem"] in (cell.reason or ""), cell.reason
    if "checks" in case:
        assert len(cell.checks) == case["checks"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_every_listed_fact_has_a_verdict(case: dict[str, Any]) -> None:
    """A cell yields exactly one verdict per fact of its scenarios, whatever it printed."""
    _, verdicts = _judge(case)
    assert set(verdicts) == set(SCENARIOS["mechanisms"].facts)


INCOMPLETE = [s for s in CellStatus if s is not CellStatus.COMPLETE]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_incomplete_output_never_passes(case: dict[str, Any]) -> None:
    """A cell that did not complete yields only inconclusive verdicts; one that did
    complete keeps every fact the probe reported, each judged on its own."""
    cell, verdicts = _judge(case)
    if cell.status is CellStatus.COMPLETE:
        assert cell.reason is None
        assert {f.id for f in cell.facts} <= set(verdicts)
        for v in verdicts.values():
            assert not (v.reason or "").startswith("cell "), v
        for fact in cell.facts:
            assert verdicts[fact.id].observed == (
                "unavailable" if fact.status == "unavailable" else fact.value
            )
            assert verdicts[fact.id].errno == fact.errno
            assert verdicts[fact.id].checks == [
                CheckResult(id=fact.id, outcome=fact.status, errno=fact.errno,
                            detail=fact.detail, elapsed_ms=fact.elapsed_ms)
            ]  # fmt: skip
    else:
        assert cell.reason
        assert {v.verdict for v in verdicts.values()} == {Verdict.INCONCLUSIVE}
        assert all(v.reason == f"cell {cell.status}: {cell.reason}" for v in verdicts.values())


@pytest.mark.parametrize("status", INCOMPLETE, ids=str)
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_same_output_from_an_incomplete_cell_never_passes(
    case: dict[str, Any], status: CellStatus
) -> None:
    """Even a complete, all-pass output is inconclusive when its cell did not complete."""
    _, verdicts = _judge(case, status=status)
    assert {v.verdict for v in verdicts.values()} == {Verdict.INCONCLUSIVE}
    assert {v.display for v in verdicts.values()} == {str(status)}


@pytest.mark.parametrize(
    ("verdicts", "code"),
    [
        ([], 0),
        ([Verdict.PASS, Verdict.SKIPPED], 0),
        ([Verdict.PASS, Verdict.INCONCLUSIVE], 3),
        ([Verdict.INCONCLUSIVE, Verdict.UNEXPECTED], 1),
        ([Verdict.REGRESSION], 1),
        ([Verdict.PASS, Verdict.FLAKY, Verdict.INCONCLUSIVE], 1),
        ([Verdict.SKIPPED, Verdict.INCONCLUSIVE], 3),
        ([Verdict.PASS, Verdict.UNEXPECTED], 1),
        ([Verdict.SKIPPED], 0),
    ],
)
def test_exit_code_contract(verdicts: list[Verdict], code: int) -> None:
    """Mismatch beats inconclusive beats pass."""
    records = [
        VerdictRecord(host="h", runtime="r", expected=None, observed=None, verdict=v)
        for v in verdicts
    ]
    assert exit_code(records) == code


@pytest.mark.parametrize("verdict", list(Verdict))
def test_a_mismatch_is_what_exits_1(verdict: Verdict) -> None:
    """One definition of a mismatch: exactly the verdicts that make the run exit 1."""
    from harness.judge.verdicts import MISMATCH

    row = VerdictRecord(host="h", runtime="r", expected=None, observed=None, verdict=verdict)
    assert (exit_code([row]) == 1) is (verdict in MISMATCH)
    assert (verdict in MISMATCH) is (verdict in {"regression", "unexpected", "flaky"})
