"""The shell harness runs on a host, kept as package files (`harness/hostside/scripts/`)."""

from __future__ import annotations

import subprocess
from importlib.resources import files

import pytest

from harness.hostside.scripts import script

NAMES = sorted(
    p.name for p in files("harness.hostside.scripts").iterdir() if p.name.endswith(".sh")
)


def test_there_are_scripts() -> None:
    """The package data is found (a build that left it out would find none)."""
    assert "envelope.sh" in NAMES and "canary-up.sh" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_each_script_says_what_it_takes_and_parses(name: str) -> None:
    """Each file opens with a header comment that the host is never sent, and its
    body is shell that `sh -n` accepts."""
    text = (files("harness.hostside.scripts") / name).read_text(encoding="utf-8")
    assert text.startswith("# "), name
    body = (
        script(name)
        if "@NO_ACTION@" not in text
        else script(name, PHASE_POLL="0.01", NO_ACTION="x")
    )
    assert body and not body.startswith("#")
    assert subprocess.run(["sh", "-n", "-c", body], capture_output=True).returncode == 0


def test_a_constant_the_script_does_not_name_is_refused() -> None:
    """A misspelt constant is an error, not a placeholder left in the shell."""
    with pytest.raises(KeyError, match="names no @NOPE@"):
        script("alive.sh", NOPE="1")
