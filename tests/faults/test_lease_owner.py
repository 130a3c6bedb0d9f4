"""A live run is never taken for dead: `harness clean` from another PID namespace
(two CI containers sharing a hostname and a work folder on the target) leaves it
alone, because liveness is the lock the run holds on the host, not a pid lookup;
a killed run is still cleaned at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT, harness_cli
from tests.e2e.helpers import leftovers
from tests.lab import require_tool


def _matrix(tmp: Path, flag: Path) -> Path:
    (tmp / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{tmp}/work"\n'
    )
    (tmp / "m.toml").write_text(
        'name = "lease"\ninventory = "inv.toml"\nscenarios = ["mechanisms"]\n'
        "[settings]\ntimeout = 600\n"
        '[runtimes.slow]\nkind = "command"\n'
        f'argv = ["sh", "-c", "[ -e {flag} ] || sleep 600; exec \\"$0\\" \\"$@\\"",'
        ' "{probe}", "{args}"]\n'
    )
    return tmp / "m.toml"


def _start(tmp: Path, matrix: Path, argv_prefix: list[str]) -> tuple[subprocess.Popen[bytes], Path]:
    """A run whose one cell hangs; returns once its lease and the hung cell exist."""
    process = subprocess.Popen(
        [*argv_prefix, sys.executable, "-m", "harness", "run", str(matrix), "--out",
         str(tmp / "out"), "--no-progress"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
    )  # fmt: skip
    runs = tmp / "work" / "runs"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        leases = list(runs.glob("*.lease")) if runs.is_dir() else []
        if leases and list(runs.glob("*.lock")) and leftovers("sleep 600", wait=0):
            return process, leases[0]
        time.sleep(0.2)
    process.kill()
    raise AssertionError("the run never got going")


def test_clean_from_another_pid_namespace_spares_a_live_run(tmp_path: Path) -> None:
    require_tool("unshare")
    flag = tmp_path / "go"
    matrix = _matrix(tmp_path, flag)
    # The live run in its own PID namespace: its pid means nothing to our /proc.
    process, lease = _start(
        tmp_path, matrix, ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
    )
    run_id = lease.name.removesuffix(".lease")
    try:
        done = harness_cli("clean", matrix)
        assert done.code == 0, done.stdout + done.stderr
        assert "nothing to clean" in done.stdout, done.stdout
        assert lease.exists()
        assert leftovers(f"harness-{run_id}-", wait=0), "the live run's cell was killed"
    finally:
        flag.touch()
        process.kill()  # unshare, and with it (--kill-child) everything in its namespace
        process.wait()
    done = harness_cli("clean", matrix)  # now it is dead: cleaned
    assert f"cleaned runs {run_id}" in done.stdout, done.stdout + done.stderr


def test_a_killed_run_is_cleaned_at_once(tmp_path: Path) -> None:
    """`kill -9` of the controller: its lock is free within a moment, and clean
    takes its leftovers without waiting for the lease to end."""
    flag = tmp_path / "go"
    matrix = _matrix(tmp_path, flag)
    process, lease = _start(tmp_path, matrix, [])
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    run_id = lease.name.removesuffix(".lease")
    done = harness_cli("clean", matrix)
    flag.touch()
    assert done.code == 0, done.stdout + done.stderr
    assert f"cleaned runs {run_id}" in done.stdout, done.stdout
    assert not lease.exists() and not lease.with_suffix(".lock").exists()
    assert leftovers(f"harness-{run_id}-") == []
    # and what the cell's launcher started, whose command line names no run
    assert leftovers("sleep 600") == [], "a child of the killed run's cell was left"
