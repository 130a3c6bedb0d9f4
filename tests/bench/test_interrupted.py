"""A bench stopped with `kill` (a CI job cancelled, an operator's SIGTERM) removes what
it made, as it does on Ctrl-C: here the supervisor bench, which makes the most that
`harness clean` cannot see (a daemon, its network namespace, a folder in /tmp)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.lab import require_tool

ROOT = Path(__file__).resolve().parents[2]
SUPERVISOR_NS = re.compile(r"^(harness-[0-9a-f]{8}-0-sup\d+)", re.M)


def _supervisor_namespaces() -> set[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return set(SUPERVISOR_NS.findall(listed))


def test_a_killed_supervisor_bench_leaves_no_daemon_namespace_or_folder() -> None:
    require_tool("ip")
    if os.geteuid() != 0:
        pytest.skip("the bench makes network namespaces: root only")
    before = _supervisor_namespaces()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # Many starts, so that it is surely still running when it is signalled.
    bench = subprocess.Popen(
        [sys.executable, "bench/supervisor.py", "--starts", "200", "--connections", "5"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    work = Path(f"/tmp/harness-bench-supervisor-{bench.pid}")
    try:
        deadline = time.monotonic() + 60
        while not (_supervisor_namespaces() - before) and time.monotonic() < deadline:
            assert bench.poll() is None, bench.communicate()[1][-2000:]
            time.sleep(0.05)
        made = _supervisor_namespaces() - before
        assert made and work.is_dir(), "the bench never started a supervisor"
        assert bench.poll() is None
        bench.send_signal(signal.SIGTERM)
        _, err = bench.communicate(timeout=60)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
    assert bench.returncode != 0, err[-2000:]  # stopped, not finished
    assert not (_supervisor_namespaces() & made), made
    daemons = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert not any(f"/run/netns/{ns} --daemon" in daemons for ns in made), daemons
    assert not work.exists()
