"""The run's lock holder (lease.HOLD): held while its output is read, free within a
moment once nobody reads it (the controller died or its connection went), and idle
while it waits: no process started again and again, no output to carry."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from harness.hostside.lease import HOLD
from tests.lab import require_tool


def _held(lock: Path) -> bool:
    return subprocess.run(["flock", "-n", str(lock), "true"], check=False).returncode != 0


def _start(lock: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    holder = subprocess.Popen(
        ["sh", "-c", HOLD, "harness-hold", str(lock)], stdout=subprocess.PIPE, env=env
    )
    deadline = time.monotonic() + 10
    while not _held(lock):
        assert time.monotonic() < deadline, "the lock was never taken"
        time.sleep(0.05)
    return holder


def _released_at_once(holder: subprocess.Popen[bytes], lock: Path) -> float:
    """Stop reading its output; how long until it ended and the lock was free."""
    assert holder.stdout is not None
    t0 = time.monotonic()
    holder.stdout.close()
    holder.wait(timeout=5)
    while _held(lock):
        assert time.monotonic() - t0 < 5, "the lock stayed held"
        time.sleep(0.01)
    return time.monotonic() - t0


def test_gnu_tail_holds_the_lock_idle_and_lets_go_once_unread(tmp_path: Path) -> None:
    require_tool("flock")
    version = subprocess.run(["tail", "--version"], capture_output=True, text=True, check=False)
    if "GNU coreutils" not in version.stdout:
        pytest.skip("no GNU tail here")
    lock = tmp_path / "run.lock"
    holder = _start(lock)
    try:
        time.sleep(1.0)
        children = subprocess.run(
            ["pgrep", "-P", str(holder.pid), "-a"], capture_output=True, text=True, check=False
        ).stdout
        # flock and one `tail -f`, for as long as it holds: no `sleep` started each time
        cmdline = Path(f"/proc/{holder.pid}/cmdline").read_bytes().split(b"\0")
        assert cmdline[0] == b"flock", cmdline
        assert "tail -f -s 0.2 /dev/null" in children and "sleep" not in children, children
        assert holder.stdout is not None
        os.set_blocking(holder.stdout.fileno(), False)
        assert holder.stdout.read() is None  # nothing written: no output to carry
    finally:
        assert _released_at_once(holder, lock) < 0.6  # looks every 0.2 s


def test_without_gnu_tail_the_byte_writer_holds_it(tmp_path: Path) -> None:
    """A host whose tail is not GNU's (BusyBox): five bytes a second, and the write that
    fails ends it, as before."""
    require_tool("flock")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "tail").write_text("#!/bin/sh\necho 'tail (BusyBox v1.36)'\nexit 0\n")
    (fake / "tail").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    lock = tmp_path / "run.lock"
    holder = _start(lock, env)
    try:
        assert holder.stdout is not None
        assert holder.stdout.read(2) == b".."
    finally:
        assert _released_at_once(holder, lock) < 1.5
