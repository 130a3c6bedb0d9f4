"""Mutation testing of the judging modules (scripts/mutate.py, docs/testing.md)."""

from __future__ import annotations

import importlib.util
import io
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "mutate.py"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("harness_mutate", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(900)
def test_no_dangerous_mutant_survives() -> None:
    """Every mutant of the judging modules is killed by the fast tests, or reviewed as
    equivalent or harmless in docs/testing.md; any other survivor fails the suite. Run
    for the modules whose fingerprint left tests/mutation-record.json (nothing that can
    change a mutant's fate changed for the others: the next test holds that)."""
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--changed", "--jobs", str(os.cpu_count() or 2)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=850,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "; 0 dangerous" in done.stdout


def test_a_survivor_nobody_reviewed_is_dangerous() -> None:
    """An unreviewed survivor counts as dangerous; a reviewed one is shown with its reason,
    and an equivalent one leaves the kill rate."""
    tool = _tool()
    module = "harness/judge/verdicts.py"
    mutants = [m for m in tool.find_mutants(module) if m.function == "default_expectation"][:3]
    results = [
        tool.Result(mutants[0], True, "survived", 1),
        tool.Result(mutants[1], True, "survived", 1),
        tool.Result(mutants[2], False, "killed", 1),
    ]
    out = io.StringIO()
    assert tool.report(results, {}, out) == 2
    assert out.getvalue().count("[DANGEROUS]") == 2
    assert " 33.3%" in out.getvalue()
    known = {mutants[0].id: ("equivalent", "no input tells them apart")}
    out = io.StringIO()
    assert tool.report(results, known, out) == 1
    assert "[equivalent]" in out.getvalue() and "no input tells them apart" in out.getvalue()
    assert " 50.0%" in out.getvalue()


def test_the_reviewed_survivors_are_read_from_the_docs() -> None:
    """docs/testing.md's table is the list of reviewed survivors, each a real mutant."""
    tool = _tool()
    known = tool.reviewed()
    assert known
    for mutant_id, (kind, why) in known.items():
        assert kind in ("equivalent", "harmless") and why
        module = mutant_id.split("::")[0]
        assert mutant_id in {m.id for m in tool.find_mutants(module)}, mutant_id


def test_a_mutant_reaches_every_holder_of_the_function() -> None:
    """A mutant swaps the function's code, so a module that imported it by name runs
    the mutant too (here: judge/cell.py's `default_expectation`)."""
    program = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import importlib.util as u;"
        "s = u.spec_from_file_location('m', sys.argv[2]); t = u.module_from_spec(s);"
        "sys.modules['m'] = t; s.loader.exec_module(t);"
        "import harness.judge.cell as j;"
        "[m] = [m for m in t.find_mutants('harness/judge/verdicts.py')"
        " if m.function == 'default_expectation'"
        " and m.what == 'Observed.VIOLATED -> Observed.ENFORCED'];"
        "t.apply(m); print(j.default_expectation('host'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, str(ROOT), str(SCRIPT)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "enforced"


def test_the_fingerprint_follows_what_can_change_a_mutants_fate(tmp_path: Path) -> None:
    """A module's fingerprint changes with the module, its tests, a data file beside
    them, and a harness module they import; not with one they do not. (On a copy of
    the tree: nothing of the repository is touched.)"""
    import shutil

    tool = _tool()
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("harness", "tests"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=skip)
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "testing.md", tmp_path / "docs" / "testing.md")
    tool.ROOT, tool.DOC = tmp_path, tmp_path / "docs" / "testing.md"
    module = "harness/results/merge.py"
    base = tool.fingerprint(module)
    assert base == tool.fingerprint(module)
    for name in (
        module,
        "tests/results/test_resume_merge.py",
        "harness/results/records.py",  # imported by both
        "tests/results/data.toml",  # a data file beside the tests
    ):
        path = tmp_path / name
        text = path.read_bytes() if path.exists() else b""
        path.write_bytes(text + b"\n# touched\n")
        assert tool.fingerprint(module) != base, name
        path.write_bytes(text) if text else path.unlink()
        assert tool.fingerprint(module) == base, name
    (tmp_path / "harness/report/console.py").write_text("# touched\n")  # imported by none
    assert tool.fingerprint(module) == base
