"""The filesystem checks' targets are one table (harness/probe/targets.def) that the
probe, the host-side setup, the scenarios and the catalogue read."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from harness.probe import targets
from harness.scenarios import SCENARIOS


def test_every_row_parses_and_names_a_filesystem_check() -> None:
    """Each target belongs to a check the filesystem scenario declares."""
    checks = {c.id for c in SCENARIOS["filesystem-confinement"].checks}
    rows = targets.targets()
    assert rows
    for target in rows:
        assert target.check in checks, target


def test_a_write_checks_host_fact_is_its_targets() -> None:
    """A write check's host fact comes from its target's row, not a second list."""
    by_check = {c.id: c.host_fact for c in SCENARIOS["filesystem-confinement"].checks}
    for target in targets.targets():
        if target.host_fact:
            assert by_check[target.check] == target.host_fact, target


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('TARGET(a, "a-me", FILE, OUTSIDE, "fs-x", "y")\nnot a row\n', "targets.def:2"),
        ('TARGET(a, "a-me", NOPE, OUTSIDE, "fs-x", "y")\n', "targets.def:1"),
        (
            'TARGET(a, "a-me", FILE, OUTSIDE, "fs-x", "y")\n'
            'TARGET(b, "a-me", DIR, OUTSIDE, "c", "")',
            "twice",
        ),
    ],
)
def test_a_bad_row_is_an_error_naming_its_line(text: str, error: str) -> None:
    """A row the parser cannot read is an error, never a target silently left out."""
    with pytest.raises(ValueError, match=error):
        targets.parse(text)


def test_the_host_side_script_makes_and_inspects_every_target() -> None:
    """fs-sentinels.sh spells the targets in shell: each FILE target is made outside,
    and in each read-only grant where targets.def says so; each MADE one is looked for
    after the cell. A row added to targets.def and not to the script fails here."""
    script = (resources.files("harness.hostside.scripts") / "fs-sentinels.sh").read_text()
    made_outside = re.search(r"for f in ([\w\- \\\n]+); do", script)
    granted = re.search(r"for f in (overwrite-me [\w\- ]+); do\n\s+printf", script)
    inspected = re.search(r"for k in ([\w ]+); do", script)
    assert made_outside and granted and inspected
    outside_names = set(made_outside.group(1).replace("\\", " ").split())
    for t in targets.targets():
        if t.kind == "FILE":
            assert t.name in outside_names, t.name
        if t.granted:
            assert t.name in granted.group(1).split(), t.name
        if t.kind == "MADE":
            assert t.name in inspected.group(1).split(), t.name
