"""Special files where a regular file is expected: one line, exit 2, promptly.

`/dev/zero` read without bound, a FIFO blocking the open forever and a symlink
loop raising from path resolution were each a traceback or a hang."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import CliResult, harness_cli

INVENTORY = '[hosts.localhost]\ntransport = "local"\n'
MATRIX = (
    'name = "m"\ninventory = "{inventory}"\nscenarios = ["mechanisms"]\n'
    '[runtimes.native]\nkind = "native"\n'
)


def _special(path: Path, kind: str) -> None:
    """Make `path` the special file `kind` names."""
    if kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "urandom":
        path.symlink_to("/dev/urandom")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "loop":
        path.symlink_to(path.name + ".b")
        path.with_name(path.name + ".b").symlink_to(path.name)
    else:  # a folder
        path.mkdir()


KINDS = ["zero", "urandom", "fifo", "loop", "dir"]
WHY = {
    "zero": "is a device, expected a regular file",
    "urandom": "is a device, expected a regular file",
    "fifo": "is a FIFO, expected a regular file",
    "loop": "a symlink loop",
    "dir": "is a directory",
}


def _one_line(result: CliResult, expected: str) -> None:
    code, err = result.code, result.stderr
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("harness: error: ") and expected in lines[0], lines[0]


@pytest.mark.parametrize("kind", KINDS)
def test_validate_refuses_a_special_inventory(tmp_path: Path, kind: str) -> None:
    """`inventory = "/dev/zero"` (a FIFO, a symlink loop, ...): exit 2, one line
    naming the inventory, within seconds."""
    _special(tmp_path / "hosts.toml", kind)
    (tmp_path / "m.toml").write_text(MATRIX.format(inventory="hosts.toml"))
    result = harness_cli("validate", tmp_path / "m.toml", timeout=60)
    _one_line(result, f"hosts.toml: {WHY[kind]}")


@pytest.mark.parametrize("kind", ["zero", "urandom", "fifo", "loop"])
def test_validate_refuses_a_special_matrix(tmp_path: Path, kind: str) -> None:
    """The matrix itself a special file: the same one line."""
    _special(tmp_path / "m.toml", kind)
    result = harness_cli("validate", tmp_path / "m.toml", timeout=60)
    _one_line(result, f"m.toml: {WHY[kind]}")


@pytest.mark.parametrize("name", ["manifest.json", "cells.jsonl", "verdicts.jsonl"])
@pytest.mark.parametrize("kind", ["zero", "fifo", "loop"])
def test_report_refuses_a_special_results_file(tmp_path: Path, name: str, kind: str) -> None:
    """A results folder whose file is a device, a FIFO or a loop: not a results
    folder, in one line."""
    folder = tmp_path / "run"
    folder.mkdir()
    for other in ("manifest.json", "cells.jsonl", "verdicts.jsonl"):
        if other != name:
            (folder / other).write_text("{}\n" if other == "manifest.json" else "")
    _special(folder / name, kind)
    result = harness_cli("report", folder, "--format", "json", timeout=60)
    _one_line(result, f"not a results folder ({name}: {WHY[kind]}")
