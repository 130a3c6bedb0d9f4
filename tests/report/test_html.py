"""The HTML report: self-contained, a readable grid, click-through, and history."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from harness.report.history import mismatch_since, timelines
from harness.report.html import CSS, render_html
from harness.report.symbols import SYMBOL
from harness.results.records import Verdict
from harness.results.store.read import load_run, load_runs
from tests.conftest import ROOT
from tests.lab import require_tool
from tests.report.browser import Chromium
from tests.report.conftest import Runs, harness

ARTIFACTS = ROOT / "tests" / "artifacts"


@pytest.fixture(scope="module")
def history_page(runs: Runs, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`harness report results/* --format html`, as a user would run it."""
    page = tmp_path_factory.mktemp("html") / "history.html"
    folders = sorted(runs.root.iterdir())  # README.md among them, as in results/*
    # The fixture's runs come from two matrices (local.toml's and the mixed one).
    done = harness("report", *folders, "--format", "html", "--mixed", "-o", page)
    assert done.code == 0, done.stderr
    return page


def test_loads_nothing_from_the_network(runs: Runs, history_page: Path) -> None:
    """No URL with a scheme, no src attribute, only in-page links, and a CSP forbidding fetches."""
    for page in (history_page, runs.mixed / "report.html"):
        text = page.read_text()
        assert "http://" not in text and "https://" not in text
        assert not re.search(r"\bsrc\s*=", text)
        assert not re.search(r"url\(", text)
        hrefs = re.findall(r'href="([^"]*)"', text)
        assert hrefs and all(h.startswith("#") for h in hrefs)
        assert "Content-Security-Policy" in text and "default-src 'none'" in text


def test_every_verdict_has_its_own_class_and_symbol(runs: Runs) -> None:
    """Each grid cell carries its verdict as a class and as a distinct symbol."""
    run = load_run(runs.mixed)
    text = render_html([run])
    assert len(set(SYMBOL.values())) == len(Verdict)
    for verdict in Verdict:  # every verdict there is, even one this run lacks, is styled
        assert f".v-{verdict} {{" in CSS
    for verdict in {v.verdict for v in run.verdicts}:
        cell = re.search(
            rf'<td class="cell v-{verdict}" data-verdict="{verdict}".*?</td>', text, re.S
        )
        assert cell, verdict
        assert f'<span class="sym">{SYMBOL[verdict]}</span>' in cell.group(0)


def test_history_marks_where_each_mismatch_first_appeared(runs: Runs) -> None:
    """Clean, then mismatched twice: the mark is on the second run only."""
    loaded = load_runs([runs.clean, runs.mixed, runs.mixed_again])
    lines = timelines(loaded)
    steps = lines[("localhost", "runsc", "landlock_abi")]
    assert [s.verdict.verdict if s.verdict else None for s in steps] == [
        Verdict.PASS,
        Verdict.UNEXPECTED,
        Verdict.UNEXPECTED,
    ]
    assert [s.first for s in steps] == [False, True, False]
    since = mismatch_since(steps)
    assert since is not None and since.index == 1
    bare = lines[("localhost", "bare", "privilege_floor")]  # not in the clean run
    assert [s.verdict is None for s in bare] == [True, False, False]
    assert [s.first for s in bare] == [False, True, False]
    assert not any(s.first for s in lines[("localhost", "runsc", "seccomp_new_listener")])


def test_html_history_view(history_page: Path) -> None:
    """The page lists the runs and draws one step per run, the first mismatch marked."""
    text = history_page.read_text()
    assert 'data-runs="3"' in text
    assert "History: 3 runs" in text
    cell = re.search(
        r'<td class="history" data-runtime="runsc" data-subject="landlock_abi">(.*?)</td>',
        text,
        re.S,
    )
    assert cell
    steps = re.findall(r'<li class="step ([^"]*)" data-run="(\d)"', cell.group(1))
    assert steps == [("v-pass", "0"), ("v-unexpected first", "1"), ("v-unexpected", "2")]
    assert "since run #2" in text


def test_in_chromium_grid_and_click_through(runs: Runs, history_page: Path, tmp_path: Path) -> None:
    """Real headless Chromium, offline: the grid's cells and classes, then click to a check."""
    binary = require_tool("chromium")
    run = load_run(runs.mixed_again)  # the newest run is the grid
    with Chromium(binary, tmp_path) as browser:
        browser.open(history_page)
        cells = browser.evaluate(
            "Array.from(document.querySelectorAll('section.host td.cell[data-subject]'))"
            ".map(td => [td.dataset.runtime, td.dataset.subject, td.dataset.verdict,"
            " td.className, td.querySelector('.sym').textContent])"
        )
        expected = {(v.runtime, v.subject()): v.verdict for v in run.verdicts}
        assert len(cells) == len(expected)
        for runtime, subject, verdict, classes, symbol in cells:
            assert verdict == expected[(runtime, subject)]
            assert f"v-{verdict}" in classes.split()
            assert symbol == SYMBOL[Verdict(verdict)]
        shown = sorted({v.verdict for v in run.verdicts})
        assert len(shown) == 5
        colours = browser.evaluate(
            f"Object.fromEntries({json.dumps(shown)}"
            ".map(v => [v, getComputedStyle(document.querySelector('td.cell.v-' + v))"
            ".backgroundColor]))"
        )
        assert len(set(colours.values())) == len(shown)
        grid_shot = browser.screenshot(tmp_path / "report-grid.png")

        browser.click('td.cell[data-runtime="bare"][data-subject="privilege_floor"] a')
        assert browser.wait_for("document.querySelector('article.detail:target') !== null")
        panel = browser.evaluate(
            "(() => { const p = document.querySelector('article.detail:target');"
            " if (!p) return null;"
            " return {shown: getComputedStyle(p).display, verdict: p.dataset.verdict,"
            " rows: Array.from(p.querySelectorAll('tr.check')).map(r => ["
            " r.dataset.check, r.querySelector('.outcome').textContent,"
            " r.querySelector('.errno').textContent, r.querySelector('.detail').textContent,"
            " r.classList.contains('failing')])}; })()"
        )
        assert panel is not None and panel["shown"] == "block"
        assert panel["verdict"] == "regression"
        rows = {r[0]: r for r in panel["rows"]}
        assert rows["priv-setuid-exec"][1] == "escaped" and rows["priv-setuid-exec"][4]
        assert "euid 0" in rows["priv-setuid-exec"][3]
        assert rows["priv-setuid0"][1:3] == ["blocked", "EPERM"]
        assert not rows["priv-setuid0"][4]
        detail_shot = browser.screenshot(tmp_path / "report-detail.png")

        browser.click("article.detail:target a.raw-link")
        assert browser.wait_for("document.querySelector('article.raw:target') !== null")
        raw = browser.evaluate(
            "(() => { const p = document.querySelector('article.raw:target');"
            " return p && [getComputedStyle(p).display, p.dataset.runtime,"
            " p.querySelector('pre.stdout').textContent]; })()"
        )
        assert raw is not None and raw[:2] == ["block", "bare"]
        assert '"type":"start"' in raw[2] and '"type":"done"' in raw[2]
        assert browser.evaluate("location.hash").startswith("#raw-")
        requests = list(browser.requests)
    assert requests == [history_page.resolve().as_uri()]  # nothing but the file itself
    ARTIFACTS.mkdir(exist_ok=True)
    for shot in (grid_shot, detail_shot):
        assert shot.read_bytes().startswith(b"\x89PNG")
        shutil.copy(shot, ARTIFACTS / shot.name)


def test_properties_come_first_in_each_grid(tmp_path: Path) -> None:
    """The cells report the mechanism facts first; the grid, like the terminal, puts
    the properties (the verdict) on top and the facts (audit detail) below."""
    from harness.report.html import render_html
    from harness.results.store.read import load_run
    from tests.report.fleet import PROPERTIES, nights

    _, b = nights(tmp_path)
    page = render_html([load_run(b)])
    grid = re.search(r'<section class="host" id="grid-0".*?</section>', page, re.S)
    assert grid is not None
    kinds = re.findall(r'<th scope="row" class="subject" data-kind="(\w+)">([^<]*)<', grid.group(0))
    assert kinds == [("property", p) for p in PROPERTIES] + [("fact", "kernel_release")]


def test_a_history_of_unchanged_nights_stays_small(tmp_path: Path) -> None:
    """Thirty nights of a cell that never changed are one square marked x30, not thirty;
    a cell that changed keeps a square where its mismatch first appeared. The page of
    30 nights is then barely bigger than one night's (bench/report_size.py measures a
    real fleet)."""
    from harness.report.html import render_html
    from harness.results.store.read import load_run
    from tests.report.fleet import night

    folders = [night(tmp_path / f"n{i:02d}", second=i == 29) for i in range(30)]
    runs = [load_run(f) for f in folders]
    page = render_html(runs)
    steady = re.search(
        r'<table class="history-grid" data-host="node-3">.*?<td class="history"'
        r' data-runtime="runsc" data-subject="privilege_floor">(.*?)</td>',
        page,
        re.S,
    )
    assert steady is not None
    square = r'<li class="step ([^"]*)" data-run="(\d+)"( data-runs="\d+")?'
    assert re.findall(square, steady.group(1)) == [("v-pass", "0", ' data-runs="30"')]
    changed = re.search(
        r'<table class="history-grid" data-host="node-1">.*?<td class="history"'
        r' data-runtime="runsc" data-subject="egress_confinement">(.*?)</td>',
        page,
        re.S,
    )
    assert changed is not None
    assert re.findall(r'<li class="step ([^"]*)" data-run="(\d+)"', changed.group(1)) == [
        ("v-pass", "0"),
        ("v-regression first", "29"),
    ]
    assert len(page) < 2 * len(render_html(runs[-1:]))
