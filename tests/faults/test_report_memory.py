"""Reports stream: a folder whose cells hold far more bytes than the report needs at
once is reported within a memory bound that does not grow with the cells."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

HOSTS = 60
STDOUT = 3_000_000  # each cell's recorded probe output: 180 MB of cells in all
RSS_BOUND_MB = 150


def _fleet(template: Path, folder: Path, *, stdout: str | None = None, detail: int = 0) -> None:
    """HOSTS copies of the template's records: each cell's stdout replaced by `stdout`
    if given, and `detail` bytes of check results spread over each host's verdicts."""
    manifest = json.loads((template / "manifest.json").read_text())
    cells = [json.loads(line) for line in (template / "cells.jsonl").read_text().splitlines()]
    verdicts = [json.loads(v) for v in (template / "verdicts.jsonl").read_text().splitlines()]
    (source,) = {c["host"] for c in cells}
    entry = (manifest.get("hosts") or {})[source]
    names = [f"h{i:03d}" for i in range(HOSTS)]
    manifest["hosts"] = {name: entry for name in names}
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(manifest))
    if detail:
        checks = sum(len(row.get("checks") or []) for row in verdicts)
        text = "y" * (detail // max(checks, 1))
        for row in verdicts:
            row["checks"] = [{**c, "detail": text} for c in row.get("checks") or []]
    flooded = {} if stdout is None else {"stdout": stdout}
    with open(folder / "cells.jsonl", "w") as c_out, open(folder / "verdicts.jsonl", "w") as v_out:
        for name in names:
            for cell in cells:
                c_out.write(json.dumps({**cell, "host": name, **flooded}) + "\n")
            for row in verdicts:
                v_out.write(json.dumps({**row, "host": name}) + "\n")


def _big_folder(template: Path, folder: Path) -> int:
    """HOSTS copies of the template's records, each cell with a 3 MB stdout."""
    _fleet(template, folder, stdout="x" * STDOUT)
    return (folder / "cells.jsonl").stat().st_size


def _hwm_mb(pid: int) -> float:
    """A live process's peak resident memory so far, in MB (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    line = next((ln for ln in status.splitlines() if ln.startswith("VmHWM:")), "VmHWM: 0 kB")
    return int(line.split()[1]) / 1024


def _report_peak_mb(big: Path, tmp_path: Path, fmt: str) -> float:
    """`harness report` of `big` in `fmt` (to tmp_path/report): its peak resident memory,
    in MB, once it has written a report."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "report", str(big), "--format", fmt,
         "-o", str(tmp_path / "report")],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    peak_mb = 0.0
    while proc.poll() is None:
        # The report's own high-water mark (VmHWM of its memory after exec): rusage's
        # ru_maxrss would carry pytest's size in from the fork, whatever it is.
        peak_mb = max(peak_mb, _hwm_mb(proc.pid))
        time.sleep(0.02)
    assert proc.returncode == 0
    assert (tmp_path / "report").stat().st_size > 0
    return peak_mb


# Each big folder is made once for the module and only read by the reports (a report
# writes to its own -o): writing 180 MB of JSON is seconds of CPU, and it was made
# once per format.
@pytest.fixture(scope="module")
def cell_heavy(local_run: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    folder = tmp_path_factory.mktemp("cell-heavy") / "big"
    return folder, _big_folder(local_run, folder)


@pytest.fixture(scope="module")
def verdict_heavy(local_run: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    folder = tmp_path_factory.mktemp("verdict-heavy") / "big"
    return folder, _verdict_heavy_folder(local_run, folder)


@pytest.mark.parametrize("fmt", ["json", "markdown", "junit", "html"])
def test_report_memory_does_not_grow_with_the_cells(
    cell_heavy: tuple[Path, int], tmp_path: Path, fmt: str
) -> None:
    big, size = cell_heavy
    assert size > 150_000_000
    peak_mb = _report_peak_mb(big, tmp_path, fmt)
    why = f"{fmt}: peak RSS {peak_mb:.0f} MB for {size >> 20} MB of cells"
    assert peak_mb < RSS_BOUND_MB, why


VERDICT_BYTES = 180_000_000  # the check results' details, spread over every check


def _verdict_heavy_folder(template: Path, folder: Path) -> int:
    """HOSTS copies of the template's records, each check result with a long detail:
    the verdicts, not the cells, outgrow the bound."""
    _fleet(template, folder, detail=VERDICT_BYTES // HOSTS)
    return (folder / "verdicts.jsonl").stat().st_size


@pytest.mark.parametrize("fmt", ["json", "markdown", "junit", "html"])
def test_report_memory_does_not_grow_with_the_check_results(
    verdict_heavy: tuple[Path, int], tmp_path: Path, fmt: str
) -> None:
    """Every verdict is held without its check results, read again one verdict at a
    time where the format shows them; JUnit is written a suite at a time."""
    big, size = verdict_heavy
    assert size > 150_000_000, size
    peak_mb = _report_peak_mb(big, tmp_path, fmt)
    why = f"{fmt}: peak RSS {peak_mb:.0f} MB for {size >> 20} MB of verdicts"
    assert peak_mb < RSS_BOUND_MB, why


@pytest.mark.parametrize("fmt", ["json", "markdown", "junit", "html"])
def test_lazy_reading_changes_no_byte_of_a_report(local_run: Path, fmt: str) -> None:
    """A report of a folder read lazily (cells and check results read again when
    shown, JUnit a suite at a time) is the report of the folder read whole."""
    from harness.report.render import render, render_parts
    from harness.results.store import load_run

    whole = render(fmt, [load_run(local_run)])
    lazy = load_run(local_run, cells="lazy", checks="lazy")
    assert "".join(render_parts(fmt, [lazy])) == whole
    assert "<testsuite " in whole or fmt != "junit"
