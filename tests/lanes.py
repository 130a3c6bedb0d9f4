"""The suite in two lanes (pytest-xdist's `-n 2`, whole modules per lane) and what keeps
them apart.

Most of the suite's time is waiting (sandboxes starting, settle windows, deadlines run
out on purpose): one lane kept these 2-core machines about half busy. Two lanes run
two modules at once, except where that would change what a test sees:

- a module that asserts of the whole host (no sentinel, namespace or leftover of any
  run's left; `harness clean` has nothing to clean), that changes it for everyone
  while it runs (a mount over the helpers' folder, IPv4 forwarding), or that stands up
  listeners and
  relays in the host's own network namespace (a co-located sandbox in the other lane's
  cell would be right to reach them, and their canaries would log its arrivals), runs
  ALONE: it takes the lanes' lock exclusively, from its first test to its last;
- every other module takes the lock shared, likewise for the whole module, so that an
  alone module starts only once the other lane's module is over, and a module's
  fixtures never outlive its hold. Two harness runs at once on one host are what a
  fleet does too (a nightly beside a bisect): each leases its own canary link and
  tags what it sends, and what one run's canary logs of another's is no crossing of
  its own (harness/judge/arrivals.py). (The one case seen where they did not keep
  apart, a probe in gVisor's --network=host sweeping the host's routing table with
  every other run's canary link in it, was fixed in the probe: egress.c's
  host_end_here.)

A waiting exclusive taker goes first (a turnstile), so alone modules are not starved.
With `-n 0` the one process takes the same locks, alone.

The run-wide things the lanes share (the background mutants run, the one run of the
default matrix) live in FOLDER, named after xdist's run id, one per suite run.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# Modules (paths under tests/) that run with nothing beside them.
ALONE = frozenset(
    {
        # assert of the whole host (sentinels, supervisor namespaces, `clean`), or change
        # it for everyone (a nosuid mount over the helpers, IPv4 forwarding)
        "bench/test_smoke.py",
        "bench/test_interrupted.py",
        "e2e/test_host_wide.py",
        "e2e/test_leftovers.py",
        "faults/test_lease_owner.py",
        # listeners, relays and canaries in the host's own network namespace
        "hostside/test_listeners.py",
        "probe/test_canary.py",
        "probe/test_concurrent_rows.py",
        "probe/test_firewall_opened.py",
        "probe/test_held_readers.py",
        "probe/test_own_resolver.py",
        "probe/test_rules_stepped_around.py",
        "probe/test_taken_sockets.py",
        "probe/test_tcp_proxy.py",
        "probe/test_udp_listeners.py",
        "probe/test_unix_walk.py",
    }
)

RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"solo-{os.getpid()}"
FOLDER = Path(os.environ.get("TMPDIR", "/tmp")) / f"harness-suite-{RUN[:16]}"


def is_worker(config: Any) -> bool:
    return hasattr(config, "workerinput")


def name_the_run(config: Any) -> None:
    """In xdist's controller: choose the run id it hands its workers (which they see as
    PYTEST_XDIST_TESTRUNUID), so that it knows their FOLDER and removes it at the end."""
    global RUN, FOLDER
    if is_worker(config) or not hasattr(config.option, "testrunuid"):
        return
    if config.option.testrunuid is None:
        config.option.testrunuid = uuid.uuid4().hex
    RUN = config.option.testrunuid
    FOLDER = FOLDER.with_name(f"harness-suite-{RUN[:16]}")


@contextlib.contextmanager
def locked(path: Path, how: int = fcntl.LOCK_EX) -> Iterator[int]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, how)
        yield fd
    finally:
        os.close(fd)  # closing drops the lock


class ModuleLock:
    """The lanes' lock, held by one process from a module's first test to its last:
    exclusively for an ALONE module and shared for any other."""

    def __init__(self) -> None:
        self.module: str | None = None
        self.fds: list[int] = []

    def enter(self, module: str, alone: bool) -> None:
        if module == self.module:
            return
        self.leave()
        FOLDER.mkdir(exist_ok=True)
        fd = os.open(FOLDER / "lanes.lock", os.O_RDWR | os.O_CREAT, 0o600)
        with locked(FOLDER / "turnstile.lock", fcntl.LOCK_EX):
            if alone:  # hold the turnstile while the other lane's module ends
                fcntl.flock(fd, fcntl.LOCK_EX)
        if not alone:
            fcntl.flock(fd, fcntl.LOCK_SH)
        self.fds = [fd]
        self.module = module

    def leave(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.module, self.fds = None, []


def once(name: str, make: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`make()`'s answer (JSON), made by whichever lane asks first, read by the other."""
    FOLDER.mkdir(exist_ok=True)
    answer = FOLDER / f"{name}.json"
    with locked(FOLDER / f"{name}.lock", fcntl.LOCK_EX):
        if answer.exists():
            return json.loads(answer.read_text())
        made = make()
        answer.write_text(json.dumps(made))
        return made
