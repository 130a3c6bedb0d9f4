"""One real local run, made once per session, that the fault tests copy and break."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import harness_cli


@pytest.fixture(scope="session")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished results folder of the shipped local matrix (host runtime, mechanisms)."""
    out = tmp_path_factory.mktemp("faults") / "run"
    done = harness_cli(
        "run", "matrices/local.toml", "--runtime", "host", "--scenario", "mechanisms",
        "--out", out, "--no-progress",
    )  # fmt: skip
    assert done.code in (0, 1), done.stdout + done.stderr
    return out


@pytest.fixture
def run_copy(local_run: Path, tmp_path: Path) -> Path:
    """A private copy of the session's run, free to break."""
    return Path(shutil.copytree(local_run, tmp_path / "run"))
