"""The suite's own arrangement (tests/conftest.py)."""

from __future__ import annotations

from tests.conftest import BESIDE_THE_BACKGROUND, ROOT


def test_the_folders_said_to_run_beside_the_mutants_run_exist() -> None:
    """These run beside the background mutants run: a renamed one would silently move
    its tests after it (slower, never wrong)."""
    assert sorted(n for n in BESIDE_THE_BACKGROUND if not (ROOT / "tests" / n).exists()) == []
