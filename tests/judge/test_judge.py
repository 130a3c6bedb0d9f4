"""From a finished cell to its verdicts: expectations, property verdicts and reruns."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.judge.cell import judge_cell
from harness.judge.properties import JudgedControl, Observation, outcomes
from harness.judge.verdicts import default_expectation, exit_code, judge_property, settle_reruns
from harness.matrix import load_matrix
from harness.plan import Cell, make_plan
from harness.results import CellRecord, CellStatus, Verdict
from harness.results.records import CheckResult, VerdictRecord
from harness.runtimes import RUNTIMES
from harness.scenarios import SCENARIOS as SCENARIO_TABLE
from tests.results.cells import control_checks, record

CHECKS = [CheckResult(id="tcp-raw-ip", outcome="blocked", errno="EPERM", control="escaped")]


def _verdict(observed: str, expected: str, reason: str | None = "why") -> VerdictRecord:
    cell = record(["egress-confinement"], host="lab-1", runtime="runsc")
    observation = Observation(observed, reason, CHECKS)
    return judge_property(cell, "egress_confinement", observation, expected=expected)


@pytest.mark.parametrize(
    ("observed", "expected", "verdict"),
    [
        ("enforced", "enforced", Verdict.PASS),
        ("violated", "violated", Verdict.PASS),
        ("violated", "enforced", Verdict.REGRESSION),
        ("enforced", "violated", Verdict.UNEXPECTED),  # the host runtime observed enforced
        ("inconclusive", "enforced", Verdict.INCONCLUSIVE),
        ("inconclusive", "violated", Verdict.INCONCLUSIVE),
        ("skipped", "enforced", Verdict.SKIPPED),
        ("flaky", "enforced", Verdict.REGRESSION),
        ("flaky", "violated", Verdict.UNEXPECTED),
    ],
)
def test_property_verdict(observed: str, expected: str, verdict: Verdict) -> None:
    """Pass only when observed equals expected; every other mismatch is never a pass."""
    got = _verdict(observed, expected)
    assert got.verdict is verdict
    assert (got.host, got.runtime, got.property, got.fact) == (
        "lab-1",
        "runsc",
        "egress_confinement",
        None,
    )
    assert (got.expected, got.observed, got.display) == (expected, observed, observed)
    assert got.checks == CHECKS


def test_a_mismatch_says_what_was_expected() -> None:
    """An unexpected verdict names the expectation, the observation and why."""
    assert _verdict("enforced", "violated", "all blocked").reason == (
        "expected violated, observed enforced: all blocked"
    )
    assert _verdict("violated", "enforced", "tcp-raw-ip escaped").reason == "tcp-raw-ip escaped"
    assert _verdict("inconclusive", "enforced", "dead canary").reason == "dead canary"
    assert _verdict("enforced", "enforced", None).reason is None


@pytest.mark.parametrize(
    ("kind", "expected"),
    [("host", "violated")] + [(k, "enforced") for k in sorted(RUNTIMES) if k != "host"],
)
def test_default_expectation(kind: str, expected: str) -> None:
    """The host runtime is the positive control (violated); every sandbox must enforce."""
    assert default_expectation(kind) == expected


def _row(
    subject: str, verdict: Verdict, *, fact: bool = False, reason: str | None = None
) -> VerdictRecord:
    return VerdictRecord(
        host="h",
        runtime="r",
        property=None if fact else subject,
        fact=subject if fact else None,
        expected="enforced",
        observed="7" if fact else "violated",
        display="7" if fact else "violated",
        verdict=verdict,
        reason=reason,
    )


def test_reruns_that_agree_keep_the_verdict() -> None:
    """Agreeing reruns keep the first verdict; a mismatch says it held in every run."""
    runs = [
        [
            _row("egress_confinement", Verdict.REGRESSION, reason="escaped"),
            _row("f", Verdict.PASS, fact=True),
        ],
        [
            _row("egress_confinement", Verdict.REGRESSION, reason="again"),
            _row("f", Verdict.PASS, fact=True),
        ],
        [_row("egress_confinement", Verdict.REGRESSION), _row("f", Verdict.PASS, fact=True)],
    ]
    prop, fact = settle_reruns(runs)
    assert prop.verdict is Verdict.REGRESSION
    assert prop.reason == "escaped (same in all 3 runs)"
    assert fact.verdict is Verdict.PASS and fact.reason is None
    unexpected = [[_row("p", Verdict.UNEXPECTED)], [_row("p", Verdict.UNEXPECTED)]]
    assert settle_reruns(unexpected)[0].reason == " (same in all 2 runs)"
    inconclusive = [[_row("p", Verdict.INCONCLUSIVE, reason="x")]] * 2
    assert settle_reruns(inconclusive)[0].reason == "x"


def test_reruns_that_disagree_are_flaky_never_pass() -> None:
    """A subject whose reruns disagree is flaky, with every attempt in the reason."""
    runs = [
        [
            _row("egress_confinement", Verdict.REGRESSION),
            _row("landlock_abi", Verdict.UNEXPECTED, fact=True),
        ],
        [_row("egress_confinement", Verdict.PASS), _row("landlock_abi", Verdict.PASS, fact=True)],
    ]
    prop, fact = settle_reruns(runs)
    assert (prop.verdict, prop.observed, prop.display) == (Verdict.FLAKY, "flaky", "flaky")
    assert prop.reason == "outcomes disagree across 2 runs: regression, pass"
    assert (fact.verdict, fact.observed, fact.display) == (Verdict.FLAKY, "7", "7")
    assert exit_code([prop]) == 1
    assert (
        settle_reruns([[_row("p", Verdict.PASS)], [_row("p", Verdict.INCONCLUSIVE)]])[0].verdict
        is Verdict.FLAKY
    )


def test_reruns_must_judge_the_same_subjects() -> None:
    """Reruns with a different number of verdicts are a bug, never silently truncated."""
    with pytest.raises(ValueError):
        settle_reruns([[_row("p", Verdict.PASS)], []])


MATRIX = """
name = "judge"
inventory = "hosts.toml"
scenarios = ["mechanisms", "egress-confinement", "privilege-floor", "attribution"]

[runtimes.host]
kind = "host"

[runtimes.runsc]
kind = "runsc"
facts = { landlock_abi = "unavailable" }
attribution = { source = "file", path = "/var/log/decisions.jsonl" }

[runtimes.wrapper]
kind = "command"
argv = ["{probe}", "{args}"]
own_kernel = true
expect = { egress_confinement = "violated" }
"""


@pytest.fixture
def cells(tmp_path: Path) -> dict[str, Cell]:
    """The matrix's cells by runtime name: host, runsc and a wrapper."""
    (tmp_path / "hosts.toml").write_text('[hosts.lab]\ntransport = "local"\n')
    (tmp_path / "m.toml").write_text(MATRIX)
    plan = make_plan(load_matrix(tmp_path / "m.toml"))
    return {c.runtime.name: c for c in plan.cells}


SCENARIOS = ["mechanisms", "egress-confinement", "privilege-floor", "attribution"]
EGRESS_BLOCKED = [
    {"id": c["id"], "scenario": "egress-confinement", "outcome": "blocked", "errno": "EPERM"}
    for c in control_checks("egress-confinement", "all-blocked")
]
PRIV_BLOCKED = [
    {**c, "scenario": "privilege-floor"} for c in control_checks("privilege-floor", "all-blocked")
]
ALLOWED = {
    "id": "attr-allowed-connect",
    "scenario": "attribution",
    "kind": "control",
    "outcome": "ok",
    "evidence": {"src_port": 40112},
}
FACTS: list[dict[str, Any]] = [
    {"id": "landlock_abi", "status": "ok", "value": 7},
    {"id": "kernel_release", "status": "ok", "value": "6.1.0-host"},
]


def _control_record() -> CellRecord:
    checks = [
        {**c, "scenario": "egress-confinement"}
        for c in control_checks("egress-confinement", "all-escaped")
    ] + [
        {**c, "scenario": "privilege-floor"}
        for c in control_checks("privilege-floor", "all-escaped-or-blocked")
    ]
    return record(SCENARIOS, checks, {"canary_events": []}, facts=FACTS, host_kernel="6.1.0-host")


def test_a_sandbox_cell_yields_every_fact_and_property(cells: dict[str, Cell]) -> None:
    """Facts against the runtime's expectations, properties against the defaults, in order."""
    cell = record(
        SCENARIOS,
        [*EGRESS_BLOCKED, *PRIV_BLOCKED, ALLOWED],
        {"canary_events": [], "decisions": [{"src_port": 40112, "binary": {"path": "/probe"}}]},
        facts=FACTS,
        host_kernel="6.1.0-host",
    )
    verdicts = {v.subject(): v for v in judge_cell(cells["runsc"], cell, control=_control_record())}
    assert verdicts["landlock_abi"].verdict is Verdict.UNEXPECTED  # runsc expects it unavailable
    # runsc promises its own kernel: the host's release from inside is a wrong runtime.
    assert verdicts["kernel_release"].verdict is Verdict.UNEXPECTED
    assert verdicts["egress_confinement"].verdict is Verdict.PASS
    assert verdicts["privilege_floor"].verdict is Verdict.PASS
    assert verdicts["attribution"].verdict is Verdict.PASS
    assert [
        v.property
        for v in judge_cell(cells["runsc"], cell, control=_control_record())
        if v.property
    ] == ["egress_confinement", "privilege_floor", "attribution"]
    # mechanisms has facts only: no property verdict of its own, nothing unnamed
    every = judge_cell(cells["runsc"], cell, control=_control_record())
    facts = [f for s in SCENARIOS for f in SCENARIO_TABLE[s].facts]
    assert [v.fact for v in every if v.fact] == facts
    assert len(every) == len(facts) + 3


def test_a_sandbox_cell_without_its_control_is_never_enforced(cells: dict[str, Cell]) -> None:
    """Blocked attempts with no control cell: inconclusive, and the run exits 3."""
    cell = record(SCENARIOS, [*EGRESS_BLOCKED, *PRIV_BLOCKED, ALLOWED], {"canary_events": []})
    verdicts = {v.subject(): v for v in judge_cell(cells["runsc"], cell, control=None)}
    assert verdicts["egress_confinement"].verdict is Verdict.INCONCLUSIVE
    # no decision records were fetched: attribution cannot be judged
    assert verdicts["attribution"].verdict is Verdict.INCONCLUSIVE


def test_why_decision_records_are_missing_is_kept(cells: dict[str, Cell]) -> None:
    """The error met fetching decision records is the attribution verdict's reason."""
    host_side = {"canary_events": [], "decisions_error": "HTTP 500"}
    cell = record(SCENARIOS, [*EGRESS_BLOCKED, *PRIV_BLOCKED, ALLOWED], host_side)
    verdicts = {v.subject(): v for v in judge_cell(cells["runsc"], cell, control=None)}
    assert verdicts["attribution"].verdict is Verdict.INCONCLUSIVE
    assert verdicts["attribution"].reason == "decision records unavailable: HTTP 500"


def test_the_host_runtime_is_expected_violated(cells: dict[str, Cell]) -> None:
    """The host runtime's escapes pass; its attribution is skipped (no source)."""
    verdicts = {
        v.subject(): v
        for v in judge_cell(cells["host"], _control_record(), control=_control_record())
    }
    assert verdicts["egress_confinement"].expected == "violated"
    assert verdicts["egress_confinement"].verdict is Verdict.PASS
    assert verdicts["attribution"].verdict is Verdict.SKIPPED
    assert verdicts["kernel_release"].verdict is Verdict.SKIPPED  # the host promises no kernel


def test_a_control_judged_once_gives_what_its_record_gives(cells: dict[str, Cell]) -> None:
    """A host's control judged once for all its cells (`JudgedControl`, as the runner
    holds it), the host cell itself among them, gives each cell the verdicts that a
    fresh copy of the control's record gives."""
    control = _control_record()
    held = JudgedControl(control)
    sandbox = record(
        SCENARIOS,
        [*EGRESS_BLOCKED, *PRIV_BLOCKED, ALLOWED],
        {"canary_events": []},
        facts=FACTS,
        host_kernel="6.1.0-host",
    )
    judged = [("host", control), ("runsc", sandbox), ("wrapper", sandbox), ("host", control)]
    for name, cell in judged:
        once = judge_cell(cells[name], cell, control=held)
        assert once == judge_cell(cells[name], cell, control=_control_record())
        assert once == judge_cell(cells[name], cell, control=control)
    # Another scenario of the same name, with other checks, is worked out afresh.
    egress = SCENARIO_TABLE["egress-confinement"]
    fewer = replace(egress, checks=egress.checks[:3])
    whole = held.outcomes(egress)
    assert whole == outcomes(egress, control)
    assert held.outcomes(egress) is whole  # worked out once
    part = held.outcomes(fewer)
    assert part is not whole and part == outcomes(fewer, control)


def test_an_entry_expectation_overrides_the_default(cells: dict[str, Cell]) -> None:
    """`expect` in the runtime entry wins; other properties keep the default; own_kernel counts."""
    cell = record(
        SCENARIOS,
        [*EGRESS_BLOCKED, *PRIV_BLOCKED, ALLOWED],
        {"canary_events": []},
        facts=FACTS,
        host_kernel="6.1.0-host",
    )
    verdicts = {
        v.subject(): v for v in judge_cell(cells["wrapper"], cell, control=_control_record())
    }
    assert verdicts["egress_confinement"].expected == "violated"
    assert verdicts["egress_confinement"].verdict is Verdict.UNEXPECTED
    assert verdicts["privilege_floor"].expected == "enforced"
    assert verdicts["kernel_release"].verdict is Verdict.UNEXPECTED


def test_a_control_cell_yields_no_verdicts(cells: dict[str, Cell]) -> None:
    """The implicit host cell exists only as a control."""
    control = replace(cells["host"], control=True)
    assert judge_cell(control, _control_record(), control=None) == []


def test_an_incomplete_cell_yields_no_pass(cells: dict[str, Cell]) -> None:
    """Every verdict of a cell that did not complete is inconclusive."""
    cell = record(
        SCENARIOS,
        [*EGRESS_BLOCKED, *PRIV_BLOCKED, ALLOWED],
        {"canary_events": []},
        facts=FACTS,
        status=CellStatus.TIMEOUT,
    )
    verdicts = judge_cell(cells["runsc"], cell, control=_control_record())
    assert verdicts and {v.verdict for v in verdicts} == {Verdict.INCONCLUSIVE}
    assert exit_code(verdicts) == 3


def test_the_record_must_name_the_probe_the_run_staged(cells: dict[str, Cell]) -> None:
    """The probe's sha256 from the host side is what a decision record must name."""
    for sha, verdict in (("cd" * 32, Verdict.PASS), ("ef" * 32, Verdict.REGRESSION)):
        decisions = [{"src_port": 40112, "binary": {"path": "/probe", "sha256": sha}}]
        host_side = {"canary_events": [], "decisions": decisions, "probe_sha256": "cd" * 32}
        cell = record(SCENARIOS, [*EGRESS_BLOCKED, *PRIV_BLOCKED, ALLOWED], host_side)
        verdicts = {v.subject(): v for v in judge_cell(cells["runsc"], cell, control=None)}
        assert verdicts["attribution"].verdict is verdict, verdicts["attribution"]
