"""Outputs are replaced whole: a reader, a crash or a full disk never sees a torn
or empty file where a good one was."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, harness_cli


def _capped(limit: int) -> None:
    """A file-size cap, as a full disk would be: writes past `limit` fail (EFBIG)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def _harness_capped(limit: int, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        preexec_fn=lambda: _capped(limit),
    )


def _leftovers(folder: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


def test_a_report_cut_short_by_a_full_disk_leaves_the_old_one(
    run_copy: Path, tmp_path: Path
) -> None:
    """`report -o` that cannot write the whole report: one line, exit 2, and the
    previous report is still there byte for byte, with no temporary file left."""
    out = tmp_path / "out"
    out.mkdir()
    report = out / "report.html"
    assert harness_cli("report", run_copy, "--format", "html", "-o", report).code == 0
    before = report.read_bytes()
    assert len(before) > 8192
    done = _harness_capped(4096, "report", run_copy, "--format", "html", "-o", report)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "cannot write" in done.stderr, done.stderr
    assert report.read_bytes() == before
    assert _leftovers(out, {"report.html"}) == []


def test_a_reader_of_the_old_report_never_sees_the_new_one_half_written(
    run_copy: Path, tmp_path: Path
) -> None:
    """A rewrite renames a complete file into place: a reader holding the old file
    reads it whole, and the new file appears complete."""
    report = tmp_path / "report.md"
    report.write_text("# an older report\n" * 1000)
    with open(report, "rb") as held:
        done = harness_cli("report", run_copy, "--format", "markdown", "-o", report)
        assert done.code == 0, done.stderr
        assert held.read() == b"# an older report\n" * 1000
    assert report.read_text().startswith("#") and "an older report" not in report.read_text()


def test_a_json_report_is_replaced_whole(run_copy: Path) -> None:
    """A JSON report that cannot be written whole leaves the previous one."""
    report = run_copy / "report.json"
    report.write_text('{"old": true}\n')
    done = harness_cli("report", run_copy, "--format", "json", "-o", report)
    assert done.code == 0
    new = report.read_bytes()
    done = _harness_capped(1024, "report", run_copy, "--format", "json", "-o", report)
    assert done.returncode == 2, done.stderr
    assert report.read_bytes() == new
    assert not [p for p in os.listdir(run_copy) if p.endswith(".tmp")]
