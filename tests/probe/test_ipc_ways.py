"""The IPC attempts' other way in (harness/probe/ipc386.c): where a deny-list refuses
x86_64's IPC calls, the i386 entry's own calls, its ipc multiplexer and its time64
mq_timedsend are tried, each named; a deny-list that checks the architecture keeps
every line blocked."""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.probe.build import build_probe
from tests.lab import free_port
from tests.probe.seccomp import deny_list

ROOT = Path(__file__).resolve().parents[2]
IPC = (
    "msgget,msgsnd,msgrcv,msgctl,semget,semop,semctl,semtimedop,shmget,shmat,shmdt,shmctl,"
    "mq_open,mq_unlink,mq_timedsend,mq_timedreceive,mq_notify,mq_getsetattr"
)
I386_NO_MULTIPLEXER = IPC + ",semtimedop_time64,mq_timedsend_time64,mq_timedreceive_time64"

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64" or os.geteuid() != 0, reason="the i386 entry, as root"
)


@pytest.fixture(scope="module")
def probe() -> Path:
    return build_probe().path


def _deny_list(any_arch: bool, i386: list[str] | None) -> Callable[[], None]:
    """scripts/mutant-seccomp's deny-list of the IPC calls (what the bwrap-shared-ipc-*
    mutants' bwrap loads), as a preexec."""
    return deny_list(IPC, any_arch=any_arch, i386=i386)


def _arrived(log: Path) -> set[str]:
    """The lines the canary's IPC objects received (its `ipc` events)."""
    events = [json.loads(x) for x in log.read_text().splitlines() if x.startswith("{")]
    return {str(e.get("line", "")).strip() for e in events if e.get("event") == "ipc"}


@pytest.mark.parametrize(
    ("any_arch", "i386", "ways"),
    [
        (
            True,
            None,
            {
                "ipc-sysv-msg": "(sent by msgget and msgsnd (i386): ",
                "ipc-sysv-shm": "(sent by shmget and shmat (i386): ",
                "ipc-posix-mq": "(sent by mq_open and mq_timedsend (i386): ",
            },
        ),
        (
            False,
            I386_NO_MULTIPLEXER.split(","),
            {
                "ipc-sysv-msg": "(sent by the ipc multiplexer's MSGGET and MSGSND (i386): ",
                "ipc-sysv-shm": "(sent by the ipc multiplexer's SHMGET and SHMAT (i386): ",
                "ipc-posix-mq": None,
            },
        ),
        (False, None, dict.fromkeys(("ipc-sysv-msg", "ipc-sysv-shm", "ipc-posix-mq"))),
    ],
    ids=["any-arch", "multiplexer", "checked"],
)
def test_each_ipc_way_a_deny_list_leaves_is_taken_and_named(
    probe: Path, tmp_path: Path, any_arch: bool, i386: list[str] | None, ways: dict[str, str | None]
) -> None:
    """In the host's IPC namespace behind a deny-list of x86_64's IPC calls: the one the
    list leaves (the i386 entry's own calls where it checks no architecture, its ipc
    multiplexer where its i386 list is x86_64's names) reaches the canary's objects and
    is named; where the list checks the architecture, each line is blocked (EPERM)."""
    key, name = hex(0x7B000000 + os.getpid() % 0x10000 * 4), f"/harness-test-ipc-{os.getpid()}"
    log = tmp_path / "canary.log"
    canary = [str(probe), "canary", "--tcp", f"127.0.0.1:{free_port('127.0.0.1')}",
              "--sysv", key, "--mqueue", name, "--nonce", "n0nce",
              "--daemon", str(log)]  # fmt: skip
    done = subprocess.run(canary, capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.strip().removeprefix("pid="))
    try:
        argv = [str(probe), "run", "--tag", "t", "--nonce", "n", "--denied-name", "d.test",
                "--canary-tcp", "127.0.0.1:9", "--high-port", "40000", "--canary-sysv", key,
                "--canary-mq", name, "egress-confinement"]  # fmt: skip
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
            preexec_fn=_deny_list(any_arch, i386),
        )
        lines = {x.get("id"): x for x in map(json.loads, done.stdout.splitlines())}
        sent = {f"HARNESS t {check_id}" for check_id, way in ways.items() if way is not None}
        deadline = time.monotonic() + 3  # the canary drains its objects ten times a second
        while sent - _arrived(log) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sent <= _arrived(log), log.read_text()
    finally:
        os.kill(pid, signal.SIGTERM)
    for check_id, way in ways.items():
        line = lines[check_id]
        if way is None:
            assert line["outcome"] == "blocked" and line["errno"] == "EPERM", line
        else:
            assert line["outcome"] == "succeeded" and way in json.dumps(line), line
