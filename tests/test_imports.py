"""Import hygiene: reading results never drags in the runner, asyncssh or the CLI."""

from __future__ import annotations

import subprocess
import sys

import pytest

READERS = [
    "harness",
    "harness.report.runs",
    "harness.report.render",
    "harness.report.diff",
    "harness.results.store",
    "harness.evidence",
    "harness.evidence.source",
    "harness.evidence.openshell",
]
HEAVY = ("harness.runner", "asyncssh", "click", "harness.transport.ssh")


@pytest.mark.parametrize("module", READERS)
def test_readers_never_import_the_runner(module: str) -> None:
    """A report, diff or evidence read loads neither the runner nor asyncssh nor click."""
    probe = (
        f"import sys, {module}; print(','.join(m for m in sys.modules if m.startswith({HEAVY!r})))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "", f"{module} imports {loaded}"


def test_package_root_holds_only_the_version() -> None:
    """`import harness` gives the version and nothing that would import the runner."""
    import harness

    assert harness.__all__ == ["__version__"]


def test_cli_verbs_never_import_one_another() -> None:
    """Each verb module imports only the app and shared helpers, never another verb."""
    import ast
    from pathlib import Path

    import harness.cli

    shared = {"harness.cli.app", "harness.cli.signals", "harness.cli"}
    folder = Path(harness.cli.__file__).parent
    for path in folder.glob("*.py"):
        if path.name in {"__init__.py", "app.py", "signals.py"}:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness.cli"):
                assert node.module in shared, f"{path.name} imports {node.module}"
