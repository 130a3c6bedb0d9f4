"""Real results folders for the report tests, made once per session by real runs.

- `clean`: the shipped local matrix, host and runsc, mechanisms only: no mismatch.
- `mixed` and `mixed_again`: a small matrix (MIXED below) that yields every
  verdict for real: a wrong fact expectation for runsc (`unexpected`), an
  unsandboxed `command` runtime expected to enforce the privilege floor
  (`regression`), a runsc whose binary does not exist (`inconclusive`), and facts
  with no expectation (`skipped`). `mixed` is run with every `--report` format
  and with $GITHUB_STEP_SUMMARY pointing at `summary`.
All three live side by side under `root`, next to a README.md, as in results/.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.lab import require_tool

MIXED = """
name = "mixed"
inventory = "{root}/hosts/local.toml"
hosts = ["localhost"]
scenarios = ["privilege-floor", "mechanisms"]

[settings]
timeout = 30
check_timeout = 5

[runtimes.host]
kind = "host"

# Wrong on purpose: runsc has no Landlock, so landlock_abi = 7 is `unexpected`.
[runtimes.runsc]
kind = "runsc"
binary = "runsc"
flags = ["--network=none"]
facts = {{ landlock_abi = 7, seccomp_new_listener = "unavailable" }}

# No sandbox at all, yet expected to enforce: privilege_floor is a `regression`.
[runtimes.bare]
kind = "command"
argv = ["{{probe}}", "{{args}}"]

# A runtime that is not installed: every verdict of the cell is `inconclusive`.
[runtimes.ghost]
kind = "runsc"
binary = "/nonexistent/runsc"
"""


@dataclass
class Cli:
    code: int
    stdout: str
    stderr: str


def harness(*args: str | Path, env: dict[str, str] | None = None, timeout: float = 120) -> Cli:
    """The real `harness` command in a subprocess, with extra environment if asked."""
    full_env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    full_env.update(env or {})
    done = subprocess.run(
        [sys.executable, "-m", "harness", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=full_env,
        timeout=timeout,
    )
    return Cli(done.returncode, done.stdout, done.stderr)


@dataclass
class Runs:
    root: Path
    clean: Path
    mixed: Path
    mixed_again: Path
    summary: Path
    mixed_stdout: str


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """Three real runs, oldest first: clean, mixed (with every report), mixed again."""
    require_tool("runsc")
    work = tmp_path_factory.mktemp("report-runs")
    root = work / "results"
    root.mkdir()
    (root / "README.md").write_text("Results folders: one per run.\n")
    matrix = work / "mixed.toml"
    matrix.write_text(MIXED.format(root=ROOT))
    summary = work / "step-summary.md"
    summary.write_text("# earlier step\n")

    clean = root / "a-clean"
    done = harness(
        "run", "matrices/local.toml", "--runtime", "host", "--runtime", "runsc",
        "--scenario", "mechanisms", "--out", clean, "--no-progress",
    )  # fmt: skip
    assert done.code == 0, done.stdout + done.stderr

    mixed = root / "b-mixed"
    done = harness(
        "run", matrix, "--out", mixed, "--no-progress",
        "--report", "junit", "--report", "markdown", "--report", "html", "--report", "json",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )  # fmt: skip
    assert done.code == 1, done.stdout + done.stderr
    mixed_stdout = done.stdout

    mixed_again = root / "c-mixed"
    done = harness("run", matrix, "--out", mixed_again, "--no-progress")
    assert done.code == 1, done.stdout + done.stderr
    return Runs(
        root=root,
        clean=clean,
        mixed=mixed,
        mixed_again=mixed_again,
        summary=summary,
        mixed_stdout=mixed_stdout,
    )
