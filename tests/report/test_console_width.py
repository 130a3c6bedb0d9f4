"""The terminal report at 80, 100 and 120 columns, for runs of the real shape:
`nightly.json` holds the verdicts of `harness run matrices/local.toml` (9 runtimes,
6 properties, 15 facts) and of `matrices/mutants.toml` (85 runtimes, each breaking
one or two properties) on the lab machine, checks left out."""

from __future__ import annotations

import io
import itertools
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from harness.report.console import CUT_NOTE, print_report
from harness.results.records import Verdict, VerdictRecord
from tests.report.conftest import harness
from tests.report.fleet import nights

SHAPES = json.loads((Path(__file__).parent / "nightly.json").read_text(encoding="utf-8"))
WIDTHS = (80, 100, 120)
BOX = re.compile("[\u2500-\u257f]")  # the table's rules and corners


def _nightly(name: str, host: str = "localhost") -> tuple[list[VerdictRecord], list[str]]:
    shape = SHAPES[name]
    verdicts = [
        VerdictRecord(
            host, runtime, expected, observed, Verdict(verdict), reason=reason, display=display,
            **{"property" if kind == "property" else "fact": subject},
        )
        for runtime, kind, subject, verdict, expected, observed, display, reason
        in shape["verdicts"]
    ]  # fmt: skip
    return verdicts, shape["runtimes"]


def _report(verdicts: list[VerdictRecord], runtimes: list[str], width: int) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, highlight=False, color_system=None)
    print_report(console, verdicts, runtimes=runtimes, folder="results/x", exit_code=1)
    return out.getvalue()


def _words(text: str) -> set[str]:
    return set(BOX.sub(" ", text).split())


def _path_pieces(words: set[str]) -> set[str]:
    """The pieces a path longer than the terminal may be broken into: whole runs of
    its parts, broken only after a "/"."""
    pieces = set()
    for word in words:
        if "/" in word:
            at = [0, *(i + 1 for i, ch in enumerate(word) if ch == "/"), len(word)]
            pieces.update(word[i:j] for i in at for j in at if i < j)
    return pieces


def _assert_fits(text: str, wide: str, width: int) -> None:
    """No line over `width`, and every word one that the report has whole when
    nothing need wrap (a word cut in two would be two words it never has); the
    titles of a grid drawn as several tables are the only new words, and a path
    longer than the line may break after a "/"."""
    lines = text.splitlines()
    over = [line for line in lines if len(line) > width]
    assert not over, "\n".join(over)
    titles = " ".join(line for line in lines if re.match(r"(host|\d+ hosts): ", line))
    whole = _words(wide)
    cut = _words(text) - whole - _words(titles) - _path_pieces(whole)
    assert not cut, (sorted(cut)[:20], text)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["local", "mutants"])
def test_a_nightly_fits_the_terminal_and_no_word_is_split(name: str, width: int) -> None:
    """The local and mutants runs at 80, 100 and 120 columns: no line is longer than
    the terminal, no word is split, and no verdict is left out."""
    verdicts, runtimes = _nightly(name)
    text = _report(verdicts, runtimes, width)
    _assert_fits(text, _report(verdicts, runtimes, 10_000), width)
    for runtime in runtimes:
        assert re.search(rf"[│┃] {re.escape(runtime)} ", text), runtime
    rows = [line for line in text.splitlines() if line.startswith("│")]
    shown = sum(len(re.findall(r"[✓✗!~?·] ", line)) for line in rows)
    folded = text.count(" on every runtime")
    assert shown + folded * len(runtimes) == len(verdicts)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_fleet_of_the_local_shape_fits(width: int) -> None:
    """Three hosts of the local run, one with another kernel: two grids, a fleet
    summary and the odd host's own grid, all within the width."""
    verdicts = []
    for host in ("node-1", "node-2", "node-3"):
        rows, runtimes = _nightly("local", host)
        if host == "node-3":
            rows = [replace(v, display="6.19.0-rc1-next-20261201-lab") if v.fact ==
                    "kernel_release" and v.runtime == "host" else v for v in rows]  # fmt: skip
        verdicts += rows
    text = _report(verdicts, runtimes, width)
    _assert_fits(text, _report(verdicts, runtimes, 10_000), width)
    assert "2 hosts: node-1, node-2" in text and "host: node-3" in text
    assert "6.19.0-rc1-next-20261201-lab" in text


def test_facts_alike_on_every_runtime_fold_into_one_line() -> None:
    """seccomp_filter and kernel_machine are the same on all nine runtimes: one line
    each under the grid, not a row of nine identical cells; a fact that differs on
    one runtime keeps its row."""
    verdicts, runtimes = _nightly("local")
    text = _report(verdicts, runtimes, 100)
    assert "· seccomp_filter: true on every runtime" in text
    assert "· kernel_machine: x86_64 on every runtime" in text
    assert not any(re.match(r"│ (seccomp_filter|kernel_machine) ", x) for x in text.splitlines())
    assert any(line.startswith("│ landlock_abi ") for line in text.splitlines())


def test_a_grid_of_facts_that_all_fold_still_names_its_host_and_runtimes() -> None:
    """Only facts, alike everywhere: no table is left to carry the title, so a line
    says whose they are (a reader of the log must still see both cells were reported)."""
    verdicts, runtimes = _nightly("local")
    same = [v for v in verdicts if v.fact in ("seccomp_filter", "kernel_machine")]
    text = _report(same, runtimes, 80)
    first = text.splitlines()[0]
    assert first.startswith("host: localhost, runtimes: " + runtimes[0]), text
    assert all(runtime in " ".join(text.split()) for runtime in runtimes)
    assert "· seccomp_filter: true on every runtime" in text


def test_runtimes_that_do_not_fit_go_to_tables_that_repeat_the_row_labels() -> None:
    """At 100 columns the nine runtimes of the local run are several tables, titled
    with their spans (1-3, 4-6, ... of 9, in matrix order, none left out), each with
    the fact / property column and every row."""
    verdicts, runtimes = _nightly("local")
    lines = _report(verdicts, runtimes, 100).splitlines()
    titles = [line.strip() for line in lines if line.startswith("host: ")]
    spans = [re.fullmatch(r"host: localhost \(runtimes (\d+)-(\d+) of 9\)", t) for t in titles]
    assert all(spans) and len(spans) > 1, titles
    bounds = [(int(m.group(1)), int(m.group(2))) for m in spans if m]
    assert bounds[0][0] == 1 and bounds[-1][1] == 9
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(bounds))
    assert sum(line.startswith("┃ fact / property ") for line in lines) == len(titles)
    assert sum(line.startswith("│ egress_confinement ") for line in lines) == len(titles)


def test_many_runtimes_and_few_properties_go_down() -> None:
    """The mutants run (85 runtimes, 6 properties) reads down: a row per runtime, with
    only the properties it breaks, rather than thirty tables of three runtimes."""
    verdicts, runtimes = _nightly("mutants")
    lines = _report(verdicts, runtimes, 100).splitlines()
    assert any(line.startswith("┃ runtime ") for line in lines)
    assert any(line.startswith("│ bwrap-shared-net ") and "✗ violated" in line for line in lines)
    assert sum(line.startswith(("host: ", "host: localhost")) for line in lines) <= 4


def test_a_long_value_is_cut_at_a_word_and_says_where_the_rest_is() -> None:
    """A value longer than a cell's lines ends at a whole word in "…", and a note
    under the grids says where the whole value is: nothing is dropped unsaid."""
    verdicts, runtimes = _nightly("local")
    long = " ".join(f"word{i}" for i in range(80))
    verdicts = [
        replace(v, display=long) if v.fact == "kernel_release" and v.runtime == "runsc" else v
        for v in verdicts
    ]
    wide = _report(verdicts, runtimes, 10_000)
    for width in WIDTHS:
        text = _report(verdicts, runtimes, width)
        _assert_fits(text, wide, width)
        assert "…" in text and " ".join(CUT_NOTE.split()) in " ".join(text.split())
        assert "word79" not in text


@pytest.mark.parametrize("width", WIDTHS)
def test_harness_report_fits_columns(tmp_path: Path, width: int) -> None:
    """`COLUMNS=N harness report DIR` (no --format) prints the end-of-run report in
    N columns, the fleet summary and the dead host's one line included."""
    _, b = nights(tmp_path)
    done = harness("report", b, env={"COLUMNS": str(width)})
    assert done.code == 0, done.stderr
    assert max(len(line) for line in done.stdout.splitlines()) <= width
    assert "? node-2 unreachable: connection refused (10 verdicts inconclusive)" in done.stdout
    assert f"results: {b}" in " ".join(done.stdout.split())  # folded where the path ends


def test_harness_report_table_takes_one_folder(tmp_path: Path) -> None:
    """The terminal report is of one run: two folders are bad input, exit 2."""
    a, b = nights(tmp_path)
    done = harness("report", a, b)
    assert done.code == 2 and "use --format html" in done.stderr


def test_after_a_run_the_report_names_what_reads_the_folder_again() -> None:
    """The end of `harness run` points at `harness report` and `harness evidence` for
    its folder (quoted for a shell); `harness report` itself does not repeat it."""
    verdicts, runtimes = _nightly("local")
    for width in (200, 40):
        out = io.StringIO()
        console = Console(file=out, width=width, highlight=False, color_system=None)
        print_report(
            console, verdicts, runtimes=runtimes, folder="results/a b", exit_code=1, after_run=True
        )
        said = " ".join(out.getvalue().split())
        assert "read again: harness report 'results/a b' [--format" in said, said
        assert "export: harness evidence 'results/a b'" in said, said
        assert max(len(line) for line in out.getvalue().splitlines()) <= width
    assert "read again" not in _report(verdicts, runtimes, 200)
