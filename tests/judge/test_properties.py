"""Property observations from checks, host-side evidence and controls (table-driven)."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.judge.properties import HOST_ONLY, RULES, Context, judge_attempt, observe, outcomes
from harness.policy.models import Policy
from harness.results import CellRecord, CellStatus
from harness.results.records import HostEvidence, ProbeCheck
from harness.scenarios import SCENARIOS, Check, Control, Scenario
from harness.scenarios.base import Rule

DATA = tomllib.loads(Path(__file__).with_name("property_cases.toml").read_text())
CASES = DATA["case"]
TAG = "harness-t-00001"


def _default(scenario: str, check: Check) -> dict[str, Any]:
    """What the probe reports for a check a case does not list: an inside control
    passed, an attempt blocked with the scenario's usual errno."""
    if check.inside_control:
        return {"id": check.id, "kind": "control", "outcome": "ok"}
    return {"id": check.id, **DATA["default"][scenario]}


# What a netns canary can prove, where a case does not say (`RunningCanary.abilities`).
CANARY_HAS = [
    "ipv4",
    "ipv6",
    "capture",
    "hostaddr",
    "veth",
    "metadata",
    "elsewhere",
    "elsewhere6",
    "web",
    "web6",
    "ipc",
]


def _filled(
    scenario: str, checks: list[dict[str, Any]], host_side: dict[str, Any], unreported: list[str]
) -> list[dict[str, Any]]:
    """A case's checks, with every declared check it does not list at its default.
    Left out: checks the host alone decides, those of a family the canary lacks
    (the probe is not asked for them), and those the case says went unreported."""
    listed = {c["id"] for c in checks}
    has = host_side.get("canary_has", CANARY_HAS)
    rest = [
        _default(scenario, c)
        for c in SCENARIOS[scenario].checks
        if c.table_row is not None
        and c.id not in listed
        and c.id not in unreported
        and all(n in has for n in c.needs)
    ]
    return [*checks, *rest]


def _record(
    scenario: str,
    checks: list[dict[str, Any]],
    host_side: dict[str, Any],
    *,
    status: CellStatus,
    host_kernel: str | None = "6.1",
    unreported: list[str] | None = None,
) -> CellRecord:
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
                scenario=scenario,
                kind=c.get("kind", "attempt"),
                outcome=c["outcome"],
                errno=c.get("errno"),
                detail=c.get("detail"),
                evidence=c.get("evidence", {}),
            )
            for c in _filled(scenario, checks, host_side, unreported or [])
        ],
        host_side=HostEvidence(tag=TAG, **host_side),
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
        case["scenario"],
        case["checks"],
        case["host_side"],
        status=CellStatus.COMPLETE,
        unreported=case.get("unreported", []),
    )
    allowed = frozenset(case.get("allowed_caps", []))
    result = observe(scenario, record, control=_control(case), allowed_caps=allowed)
    assert result.observed == case["observed"], result
    if "reason" in case:
        assert result.reason == case["reason"]
    for part in case.get("reason_contains", []):
        assert part in str(result.reason), result.reason
    reads_granted = case["host_side"].get("fs", {}).get("reads_granted")
    if result.observed == "enforced" and case["scenario"] != "egress-confinement":
        # Only egress lists what an enforced verdict rests on, and a filesystem
        # verdict that judged no read says so.
        assert result.reason is None or (reads_granted and "reads not judged" in result.reason)
    details = {c.id: c.detail for c in result.checks}
    for check_id, detail in case.get("check_details", {}).items():
        assert details[check_id] == detail
    found = {c.id: c.outcome for c in result.checks}
    for check_id, outcome in case.get("check_outcomes", {}).items():
        assert found[check_id] == outcome, (check_id, result)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
@pytest.mark.parametrize("status", [s for s in CellStatus if s is not CellStatus.COMPLETE], ids=str)
def test_incomplete_cell_is_never_enforced(case: dict[str, Any], status: CellStatus) -> None:
    """The same checks from a cell that did not complete are inconclusive."""
    scenario = SCENARIOS[case["scenario"]]
    record = _record(case["scenario"], case["checks"], case["host_side"], status=status)
    result = observe(scenario, record, control=_control(case))
    assert result.observed == "inconclusive"
    assert result.reason == f"cell {status}: {record.reason}"


WITH_CONTROL = [c for c in CASES if c["control"] != "none"]


@pytest.mark.parametrize("case", WITH_CONTROL, ids=[c["name"] for c in WITH_CONTROL])
def test_incomplete_control_is_no_control(case: dict[str, Any]) -> None:
    """A control cell that did not complete proves nothing: never enforced."""
    broken = _record(case["scenario"], [], {}, status=CellStatus.ERROR)
    record = _record(
        case["scenario"], case["checks"], case["host_side"], status=CellStatus.COMPLETE
    )
    result = observe(SCENARIOS[case["scenario"]], record, control=broken)
    assert result.observed != "enforced"
    assert all(c.control in (None, "n/a") for c in result.checks)


def _control_outcome(case: dict[str, Any], spec: Check) -> str:
    """What `_control` gave the attempt that serves as this check's control."""
    control_id = spec.control_id or spec.id
    if case["control"] == "all-blocked" or control_id in case.get("control_blocked", ()):
        return "blocked"
    control = next(c for c in SCENARIOS[case["scenario"]].checks if c.id == control_id)
    if case["control"] == "all-escaped-or-blocked" and control.control is not Control.HOST:
        return "blocked"
    return "escaped"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_every_check_reported_with_its_control(case: dict[str, Any]) -> None:
    """A verdict lists every check of the scenario, each with its control's outcome."""
    scenario = SCENARIOS[case["scenario"]]
    record = _record(
        case["scenario"], case["checks"], case["host_side"], status=CellStatus.COMPLETE
    )
    result = observe(scenario, record, control=_control(case))
    has = case["host_side"].get("canary_has", CANARY_HAS)
    asked = [c for c in scenario.checks if all(n in has for n in c.needs)]
    if case["host_side"].get("fs", {}).get("reads_granted"):  # no read is asked
        reads = ("fs-routes", "fs-io-uring")
        asked = [c for c in asked if c.rule not in (Rule.READ, Rule.HELD) and c.id not in reads]
    assert [c.id for c in result.checks] == [c.id for c in asked]
    for spec, got in zip(asked, result.checks, strict=True):
        if spec.control is Control.NONE or spec.inside_control:
            assert got.control == "n/a"
        elif case["control"] == "none":
            assert got.control is None
        else:
            assert got.control == _control_outcome(case, spec), spec.id


def test_a_missing_check_is_inconclusive() -> None:
    """If the probe skipped an attempt, the property cannot be enforced."""
    case = CASES[0]
    assert not any(c["id"] == "doh-port" for c in case["checks"])
    record = _record(
        case["scenario"],
        case["checks"],
        case["host_side"],
        status=CellStatus.COMPLETE,
        unreported=["doh-port"],
    )
    result = observe(SCENARIOS[case["scenario"]], record, control=_control(case))
    assert result.observed == "inconclusive"
    assert result.reason == "doh-port: missing: the probe did not report this check"
    missing = next(c for c in result.checks if c.id == "doh-port")
    assert (missing.outcome, missing.errno) == ("missing", None)


def test_checks_of_another_scenario_do_not_count() -> None:
    """A blocked line reported under another scenario's name is not this scenario's check."""
    case = CASES[0]
    cell = _record(case["scenario"], case["checks"], case["host_side"], status=CellStatus.COMPLETE)
    moved = replace(cell, checks=[replace(c, scenario="privilege-floor") for c in cell.checks])
    result = observe(SCENARIOS[case["scenario"]], moved, control=_control(case))
    assert result.observed == "inconclusive"
    assert {c.outcome for c in result.checks} == {"missing"}


def test_inside_controls_listed_first_leave_every_attempt_judged() -> None:
    """The order of a scenario's checks never lets an attempt go unjudged."""
    fs = SCENARIOS["filesystem-confinement"]
    reordered = replace(fs, checks=tuple(sorted(fs.checks, key=lambda c: not c.inside_control)))
    case = next(c for c in CASES if c["observed"] == "enforced" and c["scenario"] == fs.name)
    checks = [
        *(c for c in case["checks"] if c["id"] != "fs-rename-in"),
        {"id": "fs-rename-in", "outcome": "error", "detail": "no attempt"},
    ]
    cell = _record(fs.name, checks, case["host_side"], status=CellStatus.COMPLETE)
    result = observe(reordered, cell, control=_control(case))
    assert result.observed == "inconclusive"
    assert result.reason == "fs-rename-in: error: no attempt"
    mixed = Scenario(
        name="privilege-floor",
        summary="",
        property="privilege_floor",
        checks=(
            Check("fs-allowed-write", "", inside_control=True),
            Check("priv-setuid0", "an attempt after an inside control", control=Control.NONE),
        ),
    )
    lines = [
        {"id": "fs-allowed-write", "kind": "control", "outcome": "ok"},
        {"id": "priv-setuid0", "outcome": "error", "detail": "no attempt"},
    ]
    cell = _record("privilege-floor", lines, {}, status=CellStatus.COMPLETE)
    assert observe(mixed, cell, control=None).observed == "inconclusive"


def test_the_sentinel_is_judged_only_for_a_complete_filesystem_cell() -> None:
    """The host-side sentinel is an outcome of the filesystem scenario's complete cells only."""
    fs = next(c for c in CASES if c["scenario"] == "filesystem-confinement")
    cell = _record(fs["scenario"], fs["checks"], fs["host_side"], status=CellStatus.COMPLETE)
    assert outcomes(SCENARIOS[fs["scenario"]], cell)["fs-sentinel-intact"].outcome == "blocked"
    broken = replace(cell, status=CellStatus.ERROR)
    assert "fs-sentinel-intact" not in outcomes(SCENARIOS[fs["scenario"]], broken)
    egress = CASES[0]
    cell = _record(egress["scenario"], egress["checks"], egress["host_side"],
                   status=CellStatus.COMPLETE)  # fmt: skip
    assert "fs-sentinel-intact" not in outcomes(SCENARIOS[egress["scenario"]], cell)


def test_the_kernel_is_read_off_the_capabilities_check_wherever_it_is_reported() -> None:
    """Which kernel the root phase ran in comes from `priv-start`'s evidence, not from
    whichever check the probe happened to print first: reported last, it still
    makes root-phase successes in the sandbox's own kernel blocked."""
    case = next(c for c in CASES if c["name"].startswith("every capability in the sandbox's own"))
    cell = _record(case["scenario"], case["checks"], case["host_side"], status=CellStatus.COMPLETE)
    start = next(c for c in cell.checks if c.id == "priv-start")
    assert cell.checks[0] is start
    cell = replace(cell, checks=[*(c for c in cell.checks if c is not start), start])
    result = observe(SCENARIOS[case["scenario"]], cell, control=_control(case))
    assert result.observed == "enforced", result.reason


def test_every_rule_has_the_function_that_applies_it() -> None:
    """The judge's one table covers every rule a check may declare: a new rule without
    its function cannot be declared (it would raise, never pass)."""
    assert set(RULES) == set(Rule)
    assert set(RULES) >= HOST_ONLY
    for scenario in SCENARIOS.values():
        for check in scenario.checks:
            assert check.rule in RULES, check.id


def test_an_outcome_the_judge_does_not_know_is_an_error() -> None:
    """A word outside the protocol's outcomes (an old or forged record) never counts
    as blocked."""
    check = ProbeCheck("fs-routes", "filesystem-confinement", "attempt", "blockd", detail="x")
    rule = next(c for c in SCENARIOS["filesystem-confinement"].checks if c.id == "fs-routes")
    cell = _record("filesystem-confinement", [], {}, status=CellStatus.COMPLETE)
    got = judge_attempt(check, rule, Context(cell, TAG))
    assert (got.outcome, got.detail) == ("error", "unknown outcome 'blockd': x")


def test_intercepted_is_a_field_not_prose() -> None:
    """What an enforced egress verdict calls intercepted comes from the outcome's field:
    a detail that merely says "(intercepted)" does not make it so."""
    case = CASES[0]
    checks = [{"id": "tcp-raw-ip", "outcome": "blocked", "detail": "refused (intercepted)"}]
    cell = _record(case["scenario"], checks, case["host_side"], status=CellStatus.COMPLETE)
    result = observe(SCENARIOS[case["scenario"]], cell, control=_control(case))
    assert result.observed == "enforced"
    assert "intercepted (connected" not in str(result.reason)
    checks = [{"id": "tcp-raw-ip", "outcome": "succeeded", "detail": "connected, no nonce"}]
    cell = _record(case["scenario"], checks, case["host_side"], status=CellStatus.COMPLETE)
    result = observe(SCENARIOS[case["scenario"]], cell, control=_control(case))
    assert result.observed == "enforced"
    assert str(result.reason).endswith("; intercepted (connected, nothing arrived): tcp-raw-ip")


def test_a_check_no_scenario_declares_keeps_the_probes_word() -> None:
    """A line the scenario does not declare is judged by the probe's word alone: its
    `succeeded` is an error, never blocked."""
    cell = _record("filesystem-confinement", [], {}, status=CellStatus.COMPLETE)
    ctx = Context(cell, TAG)
    odd = ProbeCheck(
        "fs-new-thing", "filesystem-confinement", "attempt", "succeeded", detail="went through"
    )
    assert judge_attempt(odd, None, ctx).outcome == "error"
    escaped = replace(odd, outcome="escaped")
    assert judge_attempt(escaped, None, ctx).outcome == "escaped"


def test_a_write_without_its_host_fact_is_the_probes_word() -> None:
    """A write check that names no host fact cannot be proved swallowed: its `succeeded`
    is an error, never blocked, even when the host's sentinel state was read."""
    check = Check("fs-odd-write", "a write", rule=Rule.WRITE)
    cell = _record(
        "filesystem-confinement", [], {"fs": {"sentinel": "intact"}}, status=CellStatus.COMPLETE
    )
    report = ProbeCheck(
        "fs-odd-write", "filesystem-confinement", "attempt", "succeeded", detail="wrote"
    )
    assert judge_attempt(report, check, Context(cell, TAG)).outcome == "error"


NAMES_BINARIES = Policy.model_validate(
    {
        "network_policies": {
            "api": {"endpoints": [{"host": "api.example.test", "port": 443}], "binaries": ["/a"]}
        }
    }
)


@pytest.mark.parametrize(
    ("control", "other", "observed", "reason"),
    [
        ("ok", "blocked", "enforced", "; allowed as the policy says: egress-policy-binary"),
        ("ok", "escaped", "violated", "egress-other-binary escaped: to other"),
        ("failed", "blocked", "inconclusive", "inside control egress-policy-binary did not pass"),
    ],
)
def test_a_policy_naming_binaries_asks_for_both_directions(
    control: str, other: str, observed: str, reason: str
) -> None:
    """Where the policy names the binaries that may reach its endpoints, the probe
    must reach the allowed destination and another program must not; a policy that
    names none (or no policy) asks neither."""
    egress = SCENARIOS["egress-confinement"]
    case = CASES[0]
    lines = [
        {"id": "egress-policy-binary", "kind": "control", "outcome": control},
        {"id": "egress-other-binary", "outcome": other, "detail": "to other"},
    ]
    cell = _record(egress.name, lines, case["host_side"], status=CellStatus.COMPLETE)
    host = _control(case)
    assert host is not None
    escaped = ProbeCheck("egress-other-binary", egress.name, "attempt", "escaped", detail="c")
    host = replace(host, checks=[*host.checks, escaped])
    result = observe(egress, cell, control=host, policy=NAMES_BINARIES)
    assert result.observed == observed, result
    assert reason in str(result.reason)
    if observed == "violated":  # the reason quotes the policy's line the escape breaks
        said = "; the policy (inline) says network_policies: only [api.example.test:443]"
        assert str(result.reason).endswith(said), result.reason
    assert {"egress-policy-binary", "egress-other-binary"} <= {c.id for c in result.checks}
    no_binaries = Policy.model_validate(
        {"network_policies": {"api": {"endpoints": [{"host": "h", "port": 1}]}}}
    )
    for policy in (None, no_binaries):
        plain = observe(egress, cell, control=host, policy=policy)
        assert "binary" not in " ".join(c.id for c in plain.checks)
        assert plain.observed == "enforced"  # neither check weighs without binaries named
        assert "binary" not in str(plain.reason)  # nor is listed as left out by the canary


@pytest.mark.parametrize(
    ("read", "write", "changed", "observed", "reason"),
    [
        ("ok", "blocked", False, "enforced", None),
        ("ok", "succeeded", True, "violated", "fs-write-read-only escaped: visible on the host"),
        ("ok", "succeeded", False, "enforced", None),  # swallowed: the host saw nothing
        ("failed", "blocked", False, "inconclusive", "inside control fs-read-granted did not"),
    ],
)
def test_the_read_only_grants_are_read_and_never_changed(
    read: str, write: str, changed: bool, observed: str, reason: str | None
) -> None:
    """Where harness placed a folder of its own in the policy's read-only grants,
    reading it is an inside control and a change the host sees is an escape; where it
    placed none, neither check is asked (nor weighs)."""
    fs = SCENARIOS["filesystem-confinement"]
    case = next(c for c in CASES if c["scenario"] == fs.name and c["observed"] == "enforced")
    lines = [
        *case["checks"],
        {"id": "fs-read-granted", "kind": "control", "outcome": read},
        {"id": "fs-write-read-only", "outcome": write, "errno": "EROFS"},
    ]
    placed = {"granted": ["/etc"], "granted_changed": changed}
    side = {**case["host_side"], "fs": {**case["host_side"]["fs"], **placed}}
    cell = _record(fs.name, lines, side, status=CellStatus.COMPLETE)
    host = _control(case)
    assert host is not None
    escaped = ProbeCheck("fs-write-read-only", fs.name, "attempt", "escaped", detail="c")
    host = replace(host, checks=[*host.checks, escaped])
    result = observe(fs, cell, control=host)
    assert result.observed == observed, result
    assert reason is None or reason in str(result.reason)
    assert {"fs-read-granted", "fs-write-read-only"} <= {c.id for c in result.checks}
    unplaced = replace(cell, host_side=replace(cell.host_side, fs=case["host_side"]["fs"]))
    plain = observe(fs, unplaced, control=host)
    assert plain.observed == "enforced", plain
    assert "granted" not in " ".join(c.id for c in plain.checks)
    # Its control: the host runtime's attempt must have escaped.
    blocked = replace(escaped, outcome="blocked")
    host = replace(host, checks=[*host.checks[:-1], blocked])
    if observed == "enforced":
        weak = observe(fs, cell, control=host)
        assert weak.observed == "inconclusive"
        assert "fs-write-read-only blocked, but its control did not escape" in str(weak.reason)


def test_a_violation_quotes_the_policy_it_breaks() -> None:
    """The part of the policy each property's violation breaks, as the policy says it."""
    from harness.judge.properties import policy_line

    policy = Policy.model_validate(
        {
            "filesystem_policy": {"read_only": ["/usr", "/etc"], "read_write": ["/tmp"]},
            "process": {"run_as_user": "sandbox"},
            "network_policies": {"a": {"endpoints": [{"host": "h", "ports": [80, 443]}]}},
        }
    )
    assert policy_line(policy, "filesystem_confinement") == (
        "filesystem_policy: read_only [/usr, /etc], read_write [/tmp]"
    )
    assert policy_line(policy, "privilege_floor") == "process: run_as_user sandbox, run_as_group -"
    assert policy_line(policy, "egress_confinement") == "network_policies: only [h:80,443]"
    assert policy_line(Policy(), "privilege_floor") == (
        "no process user or group (OpenShell's default: a sandbox user, not root)"
    )
    assert policy_line(Policy(), "egress_confinement") == "network_policies: none"
    assert policy_line(policy, "attribution") is None
    many = Policy.model_validate({"filesystem_policy": {"read_only": [f"/r{i}" for i in range(7)]}})
    six = Policy.model_validate({"filesystem_policy": {"read_only": [f"/r{i}" for i in range(6)]}})
    assert policy_line(many, "filesystem_confinement") == (
        "filesystem_policy: read_only [/r0, /r1, /r2, /r3, /r4, /r5, … (7 in all)], read_write []"
    )
    assert "in all" not in str(policy_line(six, "filesystem_confinement"))


def test_a_terminal_a_host_process_reads_is_a_privilege_escape() -> None:
    """priv-held-tty: a pty master held at start whose terminal lies on the host's devpts,
    and a controlling terminal of a host session TIOCSTI types into, are escapes of the
    privilege floor (a host root shell runs what goes in), placed as fs-inherited-fds
    places them; a terminal of the sandbox's own devpts, or none, keeps the probe's word."""
    declared = next(c for c in SCENARIOS["privilege-floor"].checks if c.id == "priv-held-tty")
    mounts = [["254:0", "ext4", "/", "/"], ["0:26", "devpts", "/dev/pts", "/"]]
    boot = "5386c38b-773f-4cb0-8ee0-a6337cb8d671"
    host_side = {"host_fs": {"boot_id": boot, "mounts": mounts}, "grants": {}}
    cell = _record("privilege-floor", [], host_side, status=CellStatus.COMPLETE)
    ctx = Context(cell, TAG)

    def judged(outcome: str, **evidence: Any) -> Any:
        report = ProbeCheck(
            "priv-held-tty", "privilege-floor", "attempt", outcome, detail="held", evidence=evidence
        )
        return judge_attempt(report, declared, ctx)

    pty = ["3", "pty", "0:26", "/dev/pts/1", "", "", "rw", "", "4"]
    got = judged("blocked", boot_id=boot, held_files=[pty], held_changed=[])
    assert (got.outcome, got.detail) == (
        "escaped",
        "descriptor 3 held at start holds the master of a host terminal, pts 1: what it"
        " writes there is typed into it",
    )
    ctty = ["fd 0", "0", "own", "0:26", "/dev/pts/0", "", "1", "0"]
    got = judged("blocked", boot_id=boot, held_files=[], held_changed=[], ctty=[ctty])
    assert got.outcome == "escaped" and "TIOCSTI types into it" in str(got.detail)
    own = ["3", "pty", "0:71", "/dev/pts/0", "/dev/pts", "/", "rw", "", "3"]
    got = judged("blocked", boot_id=boot, held_files=[own], held_changed=[])
    assert (got.outcome, got.detail) == ("blocked", "held")
    assert judged("blocked", boot_id=boot, held_files=[], held_changed=[]).outcome == "blocked"
    # A sandbox's own kernel holds no host terminal; the probe's error stays an error.
    other = boot.replace("5", "6")
    assert judged("blocked", boot_id=other, held_files=[pty], held_changed=[]).outcome == "blocked"
    assert judged("error", boot_id=boot, held_files=[pty]).outcome == "error"
