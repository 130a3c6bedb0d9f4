"""The bisect report: the observed change, the text answer and the JSON object."""

from __future__ import annotations

import json
from pathlib import Path

from harness.bisect.report import (
    SUMMARY,
    bisection_exit_code,
    describe_change,
    render_text,
    to_json,
)
from harness.bisect.search import StepOutcome, run_search
from harness.bisect.session import write_json
from harness.bisect.steps import BisectReport, StepRecord, Target
from harness.exitcodes import ExitCode
from harness.matrix import load_matrix
from harness.releases.versions import parse_listed, parse_version
from harness.results import CheckResult, Verdict, VerdictRecord


def _egress(observed: str, verdict: Verdict, raw_ip: CheckResult) -> VerdictRecord:
    return VerdictRecord(
        host="h",
        runtime="runsc",
        property="egress_confinement",
        expected="enforced",
        observed=observed,
        display=observed,
        verdict=verdict,
        checks=[CheckResult("tcp-denied-name", "blocked", "ENETUNREACH"), raw_ip],
    )


GOOD = _egress("enforced", Verdict.PASS, CheckResult("tcp-raw-ip", "blocked", "ENETUNREACH"))
BAD = _egress("violated", Verdict.REGRESSION, CheckResult("tcp-raw-ip", "escaped"))


def test_property_change_lists_the_attempts_that_changed() -> None:
    """Only attempts whose outcome changed are listed, after the property itself."""
    assert describe_change(GOOD, BAD) == [
        "egress_confinement: enforced -> violated",
        "tcp-raw-ip: blocked (ENETUNREACH) -> escaped",
    ]


def test_fact_change_shows_both_values() -> None:
    """A fact's change is its displayed value before and after."""
    before = VerdictRecord(
        "h", "runsc", "unavailable", "unavailable", Verdict.PASS, fact="landlock_abi",
        display="unavailable (ENOSYS)",
    )  # fmt: skip
    after = VerdictRecord(
        "h", "runsc", "unavailable", 7, Verdict.UNEXPECTED, fact="landlock_abi", display="7"
    )
    assert describe_change(before, after) == ["landlock_abi: unavailable (ENOSYS) -> 7"]


def _report(tmp_path: Path, outcomes: dict[int, str]) -> BisectReport:
    (tmp_path / "inv.toml").write_text('[hosts.h]\ntransport = "local"\n')
    (tmp_path / "m.toml").write_text(
        'name = "m"\ninventory = "inv.toml"\n[runtimes.runsc]\nkind = "runsc"\n'
    )
    names = [f"2026081{d}.0" for d in range(5)]
    versions = [v for n in names if (v := parse_listed("release", n)) is not None]
    report = BisectReport(
        matrix=load_matrix(tmp_path / "m.toml"),
        runtime="runsc",
        host="h",
        target=Target("property", "egress_confinement", "egress-confinement"),
        good=versions[0],
        bad=versions[-1],
        index="mirror",
        folder=tmp_path / "out",
        repeat=1,
        versions=versions,
        arch="x86_64",
    )

    def step(i: int) -> StepOutcome:
        outcome = StepOutcome(outcomes[i])
        record = StepRecord(len(report.steps) + 1, versions[i], outcome, folder=f"s{i}")
        record.judged = {"good": GOOD, "bad": BAD}.get(outcomes[i])
        record.reason = "checksum mismatch: x" if outcome is StepOutcome.SKIPPED else None
        report.steps.append(record)
        return outcome

    report.result = run_search(len(versions), step)
    return report


def test_found_report_text_and_json(tmp_path: Path) -> None:
    """A found boundary: both versions, the change, the release compare link, exit 0."""
    report = _report(tmp_path, {0: "good", 1: "good", 2: "good", 3: "bad", 4: "bad"})
    data = to_json(report)
    assert (data["status"], data["last_good"], data["first_bad"]) == (
        "found",
        "20260812.0",
        "20260813.0",
    )
    assert data["compare_url"] == (
        "https://github.com/google/gvisor/compare/release-20260812.0...release-20260813.0"
    )
    assert all({"version", "verdict"} <= set(s) for s in data["steps"])
    assert data["skipped"] == [] and bisection_exit_code(report) is ExitCode.OK
    text = render_text(report)
    assert "first bad:  20260813.0" in text and "last good:  20260812.0" in text
    assert "tcp-raw-ip: blocked (ENETUNREACH) -> escaped" in text


def test_ambiguous_report_names_the_candidates(tmp_path: Path) -> None:
    """A skip on the boundary: no first bad, the candidate range, exit 3."""
    report = _report(tmp_path, {0: "good", 1: "good", 2: "skipped", 3: "bad", 4: "bad"})
    data = to_json(report)
    assert (data["status"], data["first_bad"], data["candidates"]) == (
        "ambiguous",
        None,
        ["20260812.0", "20260813.0"],
    )
    assert data["skipped"] == [
        {"version": "20260812.0", "verdict": "skipped", "reason": "checksum mismatch: x"}
    ]
    assert bisection_exit_code(report) is ExitCode.INCONCLUSIVE
    assert "candidates: the first bad is one of 20260812.0, 20260813.0" in render_text(report)
    assert parse_version("release-20260812.0", flag="--good") == report.versions[2]


def test_bisect_json_holds_no_raw_bidi_from_a_host(tmp_path: Path) -> None:
    """A step's reason from a host, with bidi and mark characters, is written to
    bisect.json only as \\u escapes; read back, it is the same string."""
    report = _report(tmp_path, {0: "good", 1: "good", 2: "skipped", 3: "bad", 4: "bad"})
    hostile = "flaky\u202e:txt.exe\u2067\u200e\u061c"
    for step in report.steps:
        if step.outcome is StepOutcome.SKIPPED:
            step.reason = hostile
    path = tmp_path / SUMMARY
    write_json(path, to_json(report))
    text = path.read_text(encoding="utf-8")
    assert not [c for c in text if not c.isascii()]
    assert json.loads(text)["skipped"][0]["reason"] == hostile
