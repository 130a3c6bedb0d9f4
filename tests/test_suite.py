"""The suite's own arrangement (tests/conftest.py)."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from tests import lanes
from tests.conftest import BESIDE_THE_BACKGROUND, ROOT


def test_the_folders_said_to_run_beside_the_mutants_run_exist() -> None:
    """These run beside the background mutants run: a renamed one would silently move
    its tests after it (slower, never wrong)."""
    assert sorted(n for n in BESIDE_THE_BACKGROUND if not (ROOT / "tests" / n).exists()) == []


def test_the_modules_said_to_run_alone_exist() -> None:
    """A renamed alone module would run beside the other lane: what it asserts of the
    whole host could then see that lane's runs."""
    assert sorted(n for n in lanes.ALONE if not (ROOT / "tests" / n).is_file()) == []


def _hold(module: str, alone: bool, folder: Path, log: Path, seconds: float) -> None:
    """In a process of its own: take the lanes' locks as a lane does, note when."""
    lanes.FOLDER = folder
    lock = lanes.ModuleLock()
    lock.enter(module, alone=alone)
    with log.open("a") as out:
        out.write(f"{module} in {time.monotonic():.3f}\n")
    time.sleep(seconds)
    with log.open("a") as out:
        out.write(f"{module} out {time.monotonic():.3f}\n")
    lock.leave()


def _spans(log: Path) -> dict[str, tuple[float, float]]:
    marks: dict[str, dict[str, float]] = {}
    for line in log.read_text().splitlines():
        module, what, at = line.split()
        marks.setdefault(module, {})[what] = float(at)
    return {m: (t["in"], t["out"]) for m, t in marks.items()}


def test_an_alone_module_runs_with_nothing_beside_it_and_is_not_starved(tmp_path: Path) -> None:
    """Two shared holders overlap; an exclusive taker waits for the one holding, and a
    shared taker that comes after it waits for it in turn (the turnstile)."""
    log = tmp_path / "log"
    context = multiprocessing.get_context("fork")
    order = [("a", False, 0.0, 1.0), ("b", False, 0.1, 0.6), ("alone", True, 0.3, 0.4),
             ("late", False, 0.5, 0.1)]  # fmt: skip
    procs = []
    for module, alone, delay, seconds in order:
        time.sleep(delay - (order[len(procs) - 1][2] if procs else 0.0))
        proc = context.Process(target=_hold, args=(module, alone, tmp_path, log, seconds))
        proc.start()
        procs.append(proc)
    for proc in procs:
        proc.join(10)
        assert proc.exitcode == 0
    spans = _spans(log)
    assert spans["b"][0] < spans["a"][1]  # shared holders overlap
    alone = spans["alone"]
    for other in ("a", "b", "late"):
        start, end = spans[other]
        assert end <= alone[0] or start >= alone[1], spans
    assert spans["late"][0] >= alone[1], spans  # came while it waited: after it


def test_a_shared_answer_is_made_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lanes, "FOLDER", tmp_path)
    made: list[int] = []
    for _ in range(2):
        assert lanes.once("x", lambda: made.append(1) or {"n": len(made)}) == {"n": 1}
    assert made == [1]
