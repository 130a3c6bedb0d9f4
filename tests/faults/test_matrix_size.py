"""A matrix too large to plan is refused when it is validated, in one line, at
once: it never reaches `run` to spend minutes and gigabytes planning."""

from __future__ import annotations

import time
from pathlib import Path

from harness.matrix.load import MAX_CELLS
from tests.conftest import harness_cli


def _matrix(tmp: Path, hosts: int, runtimes: int) -> Path:
    (tmp / "inv.toml").write_text(
        "".join(f'[hosts.h{i}]\ntransport = "local"\n' for i in range(hosts))
    )
    (tmp / "m.toml").write_text(
        'name = "big"\ninventory = "inv.toml"\nscenarios = ["mechanisms"]\n'
        + "".join(f'[runtimes.r{i}]\nkind = "host"\n' for i in range(runtimes))
    )
    return tmp / "m.toml"


def test_a_matrix_over_the_cell_limit_is_refused_by_validate_and_run(tmp_path: Path) -> None:
    hosts, runtimes = 2_000, MAX_CELLS // 2_000 + 1
    matrix = _matrix(tmp_path, hosts, runtimes)
    for argv in (("validate", matrix), ("run", matrix, "--shard", "1/100000")):
        started = time.monotonic()
        done = harness_cli(*argv, timeout=120)
        assert done.code == 2, done.stdout + done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert (
            f"runtimes: {hosts} hosts x {runtimes} runtimes = {hosts * runtimes} cells" in lines[0]
        )
        assert f"more than the {MAX_CELLS}" in lines[0]
        assert time.monotonic() - started < 30


def test_a_matrix_at_the_limit_validates(tmp_path: Path) -> None:
    matrix = _matrix(tmp_path, 2_000, MAX_CELLS // 2_000)
    done = harness_cli("validate", matrix, timeout=120)
    assert done.code == 0, done.stderr
    assert f"= {MAX_CELLS} cells" in done.stdout
