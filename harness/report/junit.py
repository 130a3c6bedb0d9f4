"""JUnit XML, the format CI systems read (Jenkins, GitLab, GitHub test reporters).

The shape is the common "junit-10.xsd" one: testsuites > testsuite > testcase.
One testsuite per (host, runtime) cell; one testcase per property, and per fact
that was held to an expectation. A fact merely recorded (no expectation) is audit
detail, not a test: it becomes a `fact.<name>` property of the suite, so a CI page
lists the properties instead of a wall of skipped facts.

A mismatch (`regression`, `unexpected`) is a <failure>; an `inconclusive` one is an
<error> (the lab could not judge, which is not the sandbox's failure); a
`skipped` one is <skipped/>. tests/report/junit.xsd holds the schema the tests
validate against.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import datetime

from harness.judge.verdicts import MISMATCH
from harness.report.runs import (
    check_line,
    describe,
    failing_checks,
    observed_text,
    unreachable_hosts,
)
from harness.results.records import CellRecord, Verdict, VerdictRecord
from harness.results.store import Run
from harness.text import xml_text

STDOUT_LIMIT = 64 * 1024  # raw probe output per suite; a runaway probe must not bloat CI


def _timestamp(stamp: str | None) -> str | None:
    """`2026-11-30T00:46:26.943Z` -> `2026-11-30T00:46:26` (UTC).

    The junit-10 schema's timestamp carries no zone; harness times are all UTC.
    """
    if not stamp:
        return None
    try:
        parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.strftime("%Y-%m-%dT%H:%M:%S")


def _seconds(stamp_a: str | None, stamp_b: str | None) -> float:
    try:
        a = datetime.fromisoformat((stamp_a or "").replace("Z", "+00:00"))
        b = datetime.fromisoformat((stamp_b or "").replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return max((b - a).total_seconds(), 0.0)


def _fmt_time(seconds: float) -> str:
    return f"{seconds:.3f}"


def _clean(text: object) -> str:
    """XML 1.0 cannot hold most control characters; a probe's raw output might.
    They are written out visibly (`\\x1b`), as everywhere else."""
    return xml_text(text, lines=True)


def _attrs(attrs: dict[str, str]) -> dict[str, str]:
    """Attribute values from names and values in files: one line, valid XML."""
    return {k: xml_text(v) for k, v in attrs.items()}


def verdict_text(verdict: VerdictRecord) -> str:
    """The body of a failure or error: expected, observed, reason, then the checks."""
    lines = [
        f"expected: {describe(verdict.expected)}",
        f"observed: {observed_text(verdict)}",
    ]
    if verdict.errno:
        lines.append(f"errno: {verdict.errno}")
    if verdict.reason:
        lines.append(f"reason: {verdict.reason}")
    checks = failing_checks(verdict)
    if checks:
        lines.append("checks:")
        lines.extend(f"  {check_line(c)}" for c in checks)
    return "\n".join(lines)


def _testcase(suite: ET.Element, verdict: VerdictRecord, classname: str) -> None:
    elapsed = sum(c.elapsed_ms or 0.0 for c in verdict.checks) / 1000
    case = ET.SubElement(
        suite,
        "testcase",
        _attrs({"classname": classname, "name": verdict.subject(), "time": _fmt_time(elapsed)}),
    )
    summary = f"expected {describe(verdict.expected)}, observed {observed_text(verdict)}"
    if verdict.verdict in MISMATCH:
        failure = ET.SubElement(
            case,
            "failure",
            _attrs({"message": f"{verdict.verdict}: {summary}", "type": str(verdict.verdict)}),
        )
        failure.text = _clean(verdict_text(verdict))
    elif verdict.verdict is Verdict.INCONCLUSIVE:
        error = ET.SubElement(
            case,
            "error",
            _attrs({"message": verdict.reason or "inconclusive", "type": "inconclusive"}),
        )
        error.text = _clean(verdict_text(verdict))
    elif verdict.verdict is Verdict.SKIPPED:
        ET.SubElement(case, "skipped", _attrs({"message": verdict.reason or "skipped"}))


def _properties(
    suite: ET.Element, pairs: list[tuple[str, str | None]], *, into: ET.Element | None = None
) -> ET.Element:
    props = into if into is not None else ET.SubElement(suite, "properties")
    for name, value in pairs:
        if value is not None:
            ET.SubElement(props, "property", _attrs({"name": name, "value": value}))
    return props


def _suite(
    root: ET.Element, run: Run, host: str, runtime: str, rows: list[VerdictRecord], index: int
) -> tuple[int, int, int, int]:
    cell: CellRecord | None = run.cell(host, runtime)
    recorded = [v for v in rows if v.fact is not None and v.verdict is Verdict.SKIPPED]
    rows = [v for v in rows if not (v.fact is not None and v.verdict is Verdict.SKIPPED)]
    failures = sum(v.verdict in MISMATCH for v in rows)
    errors = sum(v.verdict is Verdict.INCONCLUSIVE for v in rows)
    skipped = sum(v.verdict is Verdict.SKIPPED for v in rows)
    attrs = {
        "name": f"{host}/{runtime}",
        "tests": str(len(rows)),
        "failures": str(failures),
        "errors": str(errors),
        "skipped": str(skipped),
        "time": _fmt_time(cell.elapsed if cell else 0.0),
        "hostname": host,
        "id": str(index),
        "package": run.matrix_name or "harness",
    }
    stamp = _timestamp(cell.started if cell else run.started)
    if stamp:
        attrs["timestamp"] = stamp
    suite = ET.SubElement(root, "testsuite", _attrs(attrs))
    props = _properties(
        suite,
        [
            ("run_id", run.run_id or None),
            ("results", str(run.folder)),
            ("cell_status", str(cell.status) if cell else None),
            ("cell_reason", cell.reason if cell else None),
            ("kernel_release", run.kernel(host)),
            ("runtime_version", run.runtime_version(host, runtime)),
        ],
    )
    classname = f"{host}/{runtime}"
    for verdict in rows:
        kind = "property" if verdict.property is not None else "fact"
        _testcase(suite, run.full(verdict), f"{classname}.{kind}")
    _properties(suite, [(f"fact.{v.subject()}", observed_text(v)) for v in recorded], into=props)
    if cell is not None:
        out = ET.SubElement(suite, "system-out")
        out.text = _clean(cell.stdout[:STDOUT_LIMIT])
        err = ET.SubElement(suite, "system-err")
        err.text = _clean(cell.stderr[-STDOUT_LIMIT:])
    return len(rows), failures, errors, skipped


def _dead_suite(root: ET.Element, run: Run, host: str, why: str, count: int, index: int) -> None:
    """A host the run could not reach: one testsuite with one errored testcase, not
    an error per verdict (its verdicts only say that the host was lost)."""
    attrs = {
        "name": host, "tests": "1", "failures": "0", "errors": "1", "skipped": "0",
        "time": _fmt_time(0.0), "hostname": host, "id": str(index),
        "package": run.matrix_name or "harness",
    }  # fmt: skip
    suite = ET.SubElement(root, "testsuite", _attrs(attrs))
    case = ET.SubElement(
        suite, "testcase", _attrs({"classname": host, "name": "reachable", "time": "0.000"})
    )
    error = ET.SubElement(
        case, "error", _attrs({"message": f"unreachable: {why}", "type": "unreachable"})
    )
    error.text = _clean(f"{host} was not reached: {why}\n{count} verdicts inconclusive")


def render_junit(run: Run) -> str:
    """The whole run as one JUnit XML document."""
    return "".join(junit_parts(run))


def _counts(run: Run, dead: dict[str, tuple[str, int]]) -> tuple[int, int, int]:
    """The document's tests, failures and errors, as its suites will count them."""
    tests = failures = errors = 0
    for host in run.hosts():
        if host in dead:
            tests, errors = tests + 1, errors + 1
            continue
        for v in run.verdicts_of(host):
            if v.fact is not None and v.verdict is Verdict.SKIPPED:
                continue  # a recorded fact: a property of its suite, not a test
            tests += 1
            failures += v.verdict in MISMATCH
            errors += v.verdict is Verdict.INCONCLUSIVE
    return tests, failures, errors


def junit_parts(run: Run) -> Iterator[str]:
    """`render_junit`'s document in pieces, a testsuite at a time, byte for byte what
    the whole tree would serialise to: a fleet's report never holds every suite (each
    with its cell's raw output) at once. The totals, which head the document, come
    from the verdicts first."""
    dead = unreachable_hosts(run.verdicts)
    tests, failures, errors = _counts(run, dead)
    attrs = {
        "name": f"harness {run.matrix_name}".strip(),
        "tests": str(tests),
        "failures": str(failures),
        "errors": str(errors),
        "time": _fmt_time(_seconds(run.started, run.ended)),
    }
    head = ET.tostring(ET.Element("testsuites", _attrs(attrs)), encoding="unicode")
    opened = '<?xml version="1.0" encoding="UTF-8"?>\n' + head.removesuffix(" />") + ">"
    index, previous = 0, None
    for host in run.hosts():
        runtimes = [None] if host in dead else run.runtimes(host)
        for runtime in runtimes:
            holder = ET.Element("testsuites")
            if runtime is None:
                _dead_suite(holder, run, host, *dead[host], index)
            else:
                rows = [v for v in run.verdicts_of(host) if v.runtime == runtime]
                if not rows:
                    continue
                _suite(holder, run, host, runtime, rows, index)
            index += 1
            (suite,) = holder
            ET.indent(suite, level=1)
            text = ET.tostring(suite, encoding="unicode")
            yield (opened + "\n  " if previous is None else "\n  ") + text
            previous = text
    if previous is None:
        yield opened.removesuffix(">") + " />\n"
    else:
        yield "\n</testsuites>\n"
