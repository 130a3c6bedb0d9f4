"""The end-of-run tables: hosts with identical results share one table, so the
host that differs stands out instead of hiding among fifty copies."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from harness.report.console import print_report
from harness.results.records import Verdict, VerdictRecord


def _verdicts(host: str, *, egress: str = "enforced", order: int = 1) -> list[VerdictRecord]:
    rows = [
        VerdictRecord(
            host, "runsc", "enforced", egress, Verdict.PASS if egress == "enforced" else
            Verdict.REGRESSION, property="egress_confinement", display=egress,
        ),
        VerdictRecord(host, "runsc", None, "4.4.0", Verdict.SKIPPED, fact="kernel_release"),
        VerdictRecord(host, "host", None, "6.1.0", Verdict.SKIPPED, fact="kernel_release"),
    ]  # fmt: skip
    return rows[::order]


def _report(verdicts: list[VerdictRecord]) -> str:
    out = io.StringIO()
    console = Console(file=out, width=200, highlight=False, color_system=None)
    print_report(console, verdicts, runtimes=["host", "runsc"], folder="out", exit_code=1)
    return out.getvalue()


def test_identical_hosts_share_a_table_and_the_odd_one_stands_alone() -> None:
    text = _report(
        [
            *_verdicts("ci-1"),
            *_verdicts("ci-2", order=-1),  # same results, recorded in another order
            *_verdicts("ci-3", egress="violated"),
            *_verdicts("ci-4"),
        ]
    )
    assert "3 hosts: ci-1, ci-2, ci-4" in text
    assert "host: ci-3" in text
    assert text.count("egress_confinement ") == 2  # one row per table
    # Every mismatch is still listed by its own host below the tables.
    assert "regression   ci-3/runsc egress_confinement" in text
    assert "ci-1/runsc" not in text


def test_a_different_measured_value_is_a_different_table() -> None:
    other = _verdicts("ci-2")
    other[1] = replace(other[1], observed="4.4.1")
    text = _report([*_verdicts("ci-1"), *other])
    assert "host: ci-1" in text and "host: ci-2" in text
    assert "4.4.0" in text and "4.4.1" in text


def test_properties_come_before_facts() -> None:
    """In each table the property rows sit above the mechanism-fact rows."""
    text = _report(_verdicts("ci-1", order=-1))
    assert text.index("egress_confinement") < text.index("kernel_release")


def test_fleet_summary_names_the_hosts_that_differ() -> None:
    """Across hosts, one line per runtime and property names the odd hosts out."""
    text = _report([*_verdicts("ci-1"), *_verdicts("ci-2"), *_verdicts("ci-3", egress="violated")])
    assert "runsc egress_confinement: pass on 2/3 hosts; regression on ci-3" in text
    assert text.index("pass on 2/3 hosts") < text.index("2 hosts: ci-1, ci-2")


def test_a_dead_host_is_one_line_with_its_reason_and_count() -> None:
    """Inconclusive verdicts sharing a host and a reason are one line, with a count."""
    reason = "unreachable: connection refused"
    dead = [
        VerdictRecord("dead", rt, "enforced", "inconclusive", Verdict.INCONCLUSIVE,
                      property=prop, reason=reason)
        for rt in ("host", "runsc")
        for prop in ("egress_confinement", "filesystem_confinement", "privilege_floor")
    ]  # fmt: skip
    text = _report([*_verdicts("ci-1"), *dead])
    assert text.count(reason) == 1
    assert "dead (2 runtimes, 6 verdicts): unreachable: connection refused" in text


def test_a_long_fleet_title_is_bounded() -> None:
    """Fifty identical hosts share a table whose title names five and counts the rest."""
    text = _report([v for i in range(50) for v in _verdicts(f"node-{i}")])
    flat = " ".join(text.split())  # the title wraps over the narrow table
    assert "50 hosts: node-0, node-1, node-2, node-3, node-4 and 45 more" in flat
    assert "node-5," not in flat


def test_the_fleet_summary_says_a_dead_host_once(tmp_path: Path) -> None:
    """node-2, unreachable, is one line on top, and the per-property lines count only
    the hosts that were reached (no "pass on 2/3 hosts; inconclusive on node-2")."""
    from harness.report.console import fleet_summary
    from harness.results.store.read import load_run
    from tests.report.fleet import nights

    _, b = nights(tmp_path)
    lines = [t.plain for t in fleet_summary(load_run(b).verdicts, ["host", "runsc"])]
    assert lines[0] == "? node-2 unreachable: connection refused (10 verdicts inconclusive)"
    assert not any("node-2" in line for line in lines[1:]), lines
    assert "✓ runsc privilege_floor: pass on 2/2 hosts" in lines


SEVEN = ["host", "runsc", "bwrap", "runc", "landlock-supervised", "runsc-supervised", "microvm"]
SUBJECTS = ["egress_confinement", "filesystem_confinement", "seccomp_retained_socket_operation"]


def test_seven_runtimes_fit_the_width_and_no_name_is_cut() -> None:
    """With seven runtimes the table fits the terminal and never ends a name in "…":
    runtimes that do not fit beside the fact / property column go to another table
    that repeats it (or runtimes go down, when that takes fewer lines); every
    runtime, fact and property name is whole in a header or a row label."""
    verdicts = [
        VerdictRecord("node-1", rt, "enforced", "unavailable (ENOSYS)", Verdict.PASS,
                      property=subject, display="unavailable (ENOSYS)")
        for rt in SEVEN for subject in SUBJECTS
    ]  # fmt: skip
    for width in (80, 120, 200):
        out = io.StringIO()
        console = Console(file=out, width=width, highlight=False, color_system=None)
        print_report(console, verdicts, runtimes=SEVEN, folder="out", exit_code=0)
        lines = out.getvalue().splitlines()
        assert max(len(line) for line in lines) <= width, width
        assert not any("…" in line for line in lines), out.getvalue()
        for name in (*SUBJECTS, *SEVEN):
            assert any(f"│ {name} " in line or f"┃ {name} " in line for line in lines), (
                width,
                name,
                out.getvalue(),
            )
