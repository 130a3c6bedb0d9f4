"""JUnit XML: valid for CI readers, and every mismatch shows up as a failure."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from harness.report.junit import render_junit
from harness.results.records import Verdict, VerdictRecord
from harness.results.store.read import load_run
from tests.report.conftest import Runs, harness

XSD = Path(__file__).with_name("junit.xsd")


@pytest.fixture(scope="module")
def schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(XSD))


def _cases(root: ET.Element) -> dict[tuple[str, str], ET.Element]:
    found = {}
    for suite in root.iter("testsuite"):
        for case in suite.iter("testcase"):
            found[(suite.get("name", ""), case.get("name", ""))] = case
    return found


@pytest.mark.parametrize("which", ["clean", "mixed"])
def test_validates_against_the_junit_schema(
    runs: Runs, schema: xmlschema.XMLSchema, which: str
) -> None:
    """The XML of a clean and of a mixed run validates against junit-10-style XSD."""
    xml = render_junit(load_run(getattr(runs, which)))
    schema.validate(xml)


def test_the_schema_is_strict(schema: xmlschema.XMLSchema) -> None:
    """The XSD really checks: a testcase without a name, or a zoned timestamp, is refused."""
    bad_case = (
        '<testsuites><testsuite name="s" tests="1">'
        '<testcase classname="c"/></testsuite></testsuites>'
    )
    zoned = (
        '<testsuites><testsuite name="s" tests="0" timestamp="2026-01-01T00:00:00Z"/></testsuites>'
    )
    for doc in (bad_case, zoned):
        assert not schema.is_valid(doc)


def _tested(v: VerdictRecord) -> bool:
    """A property, or a fact held to an expectation (not merely recorded)."""
    return v.property is not None or v.verdict is not Verdict.SKIPPED


def test_one_suite_per_cell_one_case_per_property_and_tested_fact(runs: Runs) -> None:
    """Suites are host/runtime cells; each holds one testcase per property and per
    fact with an expectation; recorded facts are suite properties, never skipped cases."""
    run = load_run(runs.mixed)
    root = ET.fromstring(render_junit(run))
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {f"localhost/{r}" for r in ("host", "runsc", "bare", "ghost")}
    for name, suite in suites.items():
        runtime = name.split("/", 1)[1]
        expected = [v.subject() for v in run.verdicts if v.runtime == runtime and _tested(v)]
        assert [c.get("name") for c in suite.iter("testcase")] == expected
        assert suite.get("tests") == str(len(expected))
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        for v in run.verdicts:
            if v.runtime == runtime and not _tested(v):
                assert f"fact.{v.subject()}" in props
    assert root.get("tests") == str(sum(_tested(v) for v in run.verdicts))
    skipped_facts = [c for c in root.iter("testcase") if c.get("classname", "").endswith(".fact")
                     and c.find("skipped") is not None]  # fmt: skip
    assert skipped_facts == []
    assert _cases(root)[("localhost/runsc", "privilege_floor")].get("classname") == (
        "localhost/runsc.property"
    )
    assert _cases(root)[("localhost/runsc", "landlock_abi")].get("classname") == (
        "localhost/runsc.fact"
    )


def test_a_mismatch_is_a_failure_with_expected_observed_and_checks(runs: Runs) -> None:
    """The wrong runsc fact is a <failure> whose text has expected, observed, errno and detail."""
    root = ET.fromstring(render_junit(load_run(runs.mixed)))
    case = _cases(root)[("localhost/runsc", "landlock_abi")]
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("type") == "unexpected"
    assert "expected 7" in failure.get("message", "")
    text = failure.text or ""
    assert "expected: 7" in text
    assert "observed: unavailable (ENOSYS)" in text
    assert "landlock_abi: unavailable errno=ENOSYS: landlock_create_ruleset" in text
    suite = next(s for s in root.iter("testsuite") if s.get("name") == "localhost/runsc")
    assert suite.get("failures") == "1"


def test_a_regression_is_a_failure_naming_the_escaped_check(runs: Runs) -> None:
    """The unsandboxed runtime's privilege floor fails, listing the escaped attempts."""
    root = ET.fromstring(render_junit(load_run(runs.mixed)))
    failure = _cases(root)[("localhost/bare", "privilege_floor")].find("failure")
    assert failure is not None and failure.get("type") == "regression"
    text = failure.text or ""
    assert "expected: enforced" in text and "observed: violated" in text
    assert "priv-setuid-exec: escaped errno=-" in text
    assert "blocked" not in text  # only the checks that went against the expectation


def test_inconclusive_is_an_error_with_its_reason_and_skipped_is_skipped(runs: Runs) -> None:
    """Inconclusive verdicts are <error> carrying the reason; skipped ones are <skipped/>."""
    run = load_run(runs.mixed)
    # A property with nothing to measure (attribution without a record source) is skipped.
    skipped_property = VerdictRecord(
        "localhost", "runsc", "enforced", "skipped", Verdict.SKIPPED,
        property="attribution", reason="no decision-record source",
    )  # fmt: skip
    run.verdicts.append(skipped_property)
    root = ET.fromstring(render_junit(run))
    cases = _cases(root)
    error = cases[("localhost/ghost", "privilege_floor")].find("error")
    assert error is not None and error.get("type") == "inconclusive"
    assert "runtime unavailable" in error.get("message", "")
    assert "reason: " in (error.text or "")
    skipped = [v for v in run.verdicts if v.verdict is Verdict.SKIPPED and _tested(v)]
    assert skipped
    for v in skipped:
        assert cases[(f"{v.host}/{v.runtime}", v.subject())].find("skipped") is not None
    passed = next(v for v in run.verdicts if v.verdict is Verdict.PASS)
    assert len(cases[(f"{passed.host}/{passed.runtime}", passed.subject())]) == 0


def test_raw_probe_output_and_versions_travel_with_the_suite(runs: Runs) -> None:
    """Each suite carries the cell's raw probe output and the runtime's version."""
    root = ET.fromstring(render_junit(load_run(runs.mixed)))
    suite = next(s for s in root.iter("testsuite") if s.get("name") == "localhost/runsc")
    assert '"type":"done"' in (suite.findtext("system-out") or "")
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert "runsc" in (props.get("runtime_version") or "")
    assert props.get("cell_status") == "complete"


def test_run_report_and_report_command_write_the_same_junit(
    runs: Runs, schema: xmlschema.XMLSchema, tmp_path: Path
) -> None:
    """`harness run --report junit` left report.xml; `harness report -o` writes the same."""
    written = runs.mixed / "report.xml"
    schema.validate(str(written))
    out = tmp_path / "junit.xml"
    done = harness("report", runs.mixed, "--format", "junit", "-o", out)
    assert done.code == 0, done.stderr
    assert out.read_text() == written.read_text()


def test_a_dead_host_is_one_error_not_one_per_verdict(tmp_path: Path) -> None:
    """node-2, unreachable all night, is one testsuite with one <error> naming why;
    the reachable hosts keep one testcase per verdict."""
    from tests.report.fleet import nights

    _, b = nights(tmp_path)
    xml = render_junit(load_run(b))
    xmlschema.XMLSchema(str(XSD)).validate(xml)
    root = ET.fromstring(xml)
    errors = root.findall(".//error")
    assert [(e.get("type"), e.get("message")) for e in errors] == [
        ("unreachable", "unreachable: connection refused")
    ]
    (dead,) = [s for s in root.findall("testsuite") if s.get("hostname") == "node-2"]
    assert (dead.get("name"), dead.get("tests"), dead.get("errors")) == ("node-2", "1", "1")
    assert root.get("errors") == "1"
    assert len(root.findall(".//failure")) == 1  # node-1's regression
