"""The README is a front page and the reference lives in docs/: every relative link
between them resolves (files and headings), the README stays about a page long and
keeps the two commands CI depends on, and docs/results.md names every field harness
writes."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from harness.results import records, store

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub makes of a page's headings (duplicates numbered)."""
    found: set[str] = set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        if heading := re.match(r"#{1,6} (.+)", line):
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
            candidate, n = slug, 0
            while candidate in found:
                n += 1
                candidate = f"{slug}-{n}"
            found.add(candidate)
    return found


def _links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    """A relative link names a file that exists and, into a Markdown page, a heading
    it has: moving a section must not leave a dead link behind."""
    dead = []
    for target in _links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists() or (anchor and file.suffix == ".md" and anchor not in _anchors(file)):
            dead.append(target)
    assert dead == []


def test_the_readme_is_a_front_page() -> None:
    """About 200 lines, with the two commands exactly as CI (.ci/run) runs the second."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 220
    assert "scripts/setup && .venv/bin/harness run matrices/local.toml\n" in text
    assert "scripts/setup --dev && .venv/bin/python -m pytest\n" in text
    assert "scripts/setup --dev && .venv/bin/python -m pytest" in (ROOT / ".ci" / "run").read_text()


def test_the_results_page_names_every_field() -> None:
    """docs/results.md names every key of the manifest, a host entry, a cell line and
    a verdict line, nested records included: a new field is documented or fails here."""
    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z_0-9]+)`", text))
    keys = {store.BLOCK}
    for model in (
        store.Manifest,
        store.HostEntry,
        store.SshInfo,
        store.CanaryInfo,
        store.HelpersInfo,
        store.SupervisorInfo,
        store.HostRuntime,
        store.RuntimeBuild,
    ):
        keys |= set(model.model_fields)
    for cls in (
        records.CellRecord,
        records.FactObservation,
        records.ProbeCheck,
        records.HostEvidence,
        records.VerdictRecord,
        records.CheckResult,
    ):
        keys |= {f.name for f in fields(cls)}
    assert keys - named == set()
