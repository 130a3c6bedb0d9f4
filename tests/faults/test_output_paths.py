"""Every verb that writes answers a broken output path with one line and exit 2,
and leaves no file half written: a read-only folder, a path under a regular file,
a full disk (a file-size cap, which fails writes as a full disk does)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.faults.test_outputs import _capped
from tests.lab import require_tool

HOW = ["read-only", "file's child", "full disk"]


def _harness(how: str, out: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run harness with `out` broken the way `how` says."""
    argv = [sys.executable, "-m", "harness", *map(str, args)]
    if how == "read-only":  # root ignores modes: a read-only bind mount, in its own namespace
        require_tool("unshare")
        out.mkdir(parents=True, exist_ok=True)
        script = f"mount --bind -o ro {shlex.quote(str(out))} {shlex.quote(str(out))} && exec "
        argv = ["unshare", "-m", "sh", "-c", script + shlex.join(argv)]
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        preexec_fn=(lambda: _capped(200)) if how == "full disk" else None,
    )


def _target(tmp_path: Path, how: str) -> Path:
    if how == "file's child":
        (tmp_path / "plain").write_text("x")
        return tmp_path / "plain" / "out"
    return tmp_path / "out"


def _no_torn_files(out: Path) -> None:
    if out.is_dir():
        for path in out.rglob("*"):
            assert not path.is_file() or path.stat().st_size > 0, path
            assert not path.name.endswith(".tmp"), path


def _one_line(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("harness: error: "), done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("how", HOW)
def test_evidence_to_a_broken_folder(run_copy: Path, tmp_path: Path, how: str) -> None:
    """`evidence --out` that cannot be written: one line, exit 2, no 0-byte document."""
    out = _target(tmp_path, how)
    done = _harness(how, out, "evidence", run_copy, "--out", out)
    _one_line(done)
    _no_torn_files(out)


@pytest.mark.parametrize("how", HOW)
def test_report_to_a_broken_path(run_copy: Path, tmp_path: Path, how: str) -> None:
    out = _target(tmp_path, how)
    done = _harness(how, out, "report", run_copy, "--format", "html", "-o", out / "r.html")
    _one_line(done)
    _no_torn_files(out)


@pytest.mark.parametrize("how", HOW)
def test_merge_to_a_broken_folder(run_copy: Path, tmp_path: Path, how: str) -> None:
    out = _target(tmp_path, how)
    done = _harness(how, out, "merge", run_copy, "--out", out / "merged")
    _one_line(done)


@pytest.mark.parametrize("how", ["read-only", "file's child"])
def test_run_to_a_broken_folder(tmp_path: Path, how: str) -> None:
    out = _target(tmp_path, how)
    done = _harness(
        how, out, "run", "matrices/local.toml", "--runtime", "host", "--scenario", "mechanisms",
        "--out", out / "run", "--no-progress",
    )  # fmt: skip
    _one_line(done)
