"""Nothing outlives a run: after `kill -9` of harness, `harness clean` (or the next
run on the host) removes the canary, its namespace and veth, the hung sandbox,
the cell and sentinel folders, the log, the stand-ins' and its veth's routing rules;
a canary cancelled while starting is torn down at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from harness.hostside.canary_setup import canary_ipc, start_canary, stop_canary
from harness.matrix.models import Canary
from harness.probe import build_probe
from harness.transport import LocalTransport
from tests.conftest import ROOT, harness_cli
from tests.e2e.helpers import leftovers
from tests.lab import require_tool


def _matrix(tmp: Path, flag: Path) -> Path:
    (tmp / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{tmp}/work"\n'
    )
    slow = (
        '[runtimes.slow]\nkind = "command"\n'
        f'argv = ["sh", "-c", "[ -e {flag} ] || sleep 600; exec \\"$0\\" \\"$@\\"",'
        ' "{probe}", "{args}"]\n'
    )
    path = tmp / "m.toml"
    path.write_text(
        'name = "left"\ninventory = "inv.toml"\n'
        'scenarios = ["egress-confinement", "filesystem-confinement"]\n'
        '[settings]\ntimeout = 600\n[canary]\nmode = "netns"\n'
        '[runtimes.host]\nkind = "host"\n' + slow
    )
    return path


def _namespaces(run_id: str) -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if f"harness-{run_id}-" in line]


def _metadata_rules(*, dead: bool) -> list[str]:
    """The canaries' metadata rules (priority 90, a lease table), those whose table is
    empty (their canary's veth gone) if `dead`: a live canary's table holds its route."""
    found = []
    for family in ("-4", "-6"):
        out = subprocess.run(["ip", family, "rule", "show"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            table = line.rsplit(" lookup ", 1)[-1].strip()
            if not line.startswith("90:") or not table.isdigit() or int(table) >> 28 != 1:
                continue
            routes = subprocess.run(
                ["ip", family, "route", "show", "table", table], capture_output=True, text=True
            ).stdout.strip()
            if not dead or not routes:
                found.append(line)
    return found


def _veth_rules(run_id: str) -> list[str]:
    """The rules that keep what the run's canaries send on the host (priority 91 and 92,
    iif a canary's host-side veth), whether the veth is there or gone."""
    return [
        line
        for family in ("-4", "-6")
        for line in subprocess.run(
            ["ip", family, "rule", "show"], capture_output=True, text=True
        ).stdout.splitlines()
        if line.startswith(("91:", "92:")) and f" iif hv{run_id[:8]}" in line
    ]


def _killed_run(tmp: Path) -> tuple[Path, str]:
    """A run killed with SIGKILL while its slow cell hangs; its matrix and run id."""
    require_tool("ip")
    flag = tmp / "go"
    matrix = _matrix(tmp, flag)
    out = tmp / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(matrix), "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    run_id = ""
    while time.monotonic() < deadline:  # the canary is up and the slow cell hangs
        if not run_id and (out / "manifest.json").exists():
            run_id = json.loads((out / "manifest.json").read_text())["run_id"]
        fs = tmp / "work" / "fs"
        ready = run_id and _namespaces(run_id) and fs.exists() and list(fs.iterdir())
        if ready and leftovers("sleep 600", wait=0):
            break
        time.sleep(0.2)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert _namespaces(run_id), "the canary's namespace should be left behind by kill -9"
    assert leftovers(f"harness-{run_id}-", wait=0)  # the hung cell and the canary
    assert _ipc_left(run_id), "the canary's IPC objects should be there while it runs"
    assert _metadata_rules(dead=False), "the canary's metadata rules should be there too"
    assert len(_veth_rules(run_id)) == 4, "and the rules for its veth, both families"
    assert _sentinels_outside(tmp, run_id), "the hung cell's sentinels should be there"
    flag.touch()
    return matrix, run_id


def _ipc_left(run_id: str) -> list[str]:
    """The canary's IPC objects of the run still there: its SysV queue and segment (by
    key) and its POSIX queue (listed where a queue file system of our own shows it)."""
    key, name = canary_ipc(run_id, 0)
    sysv = subprocess.run(["ipcs", "-q", "-m"], capture_output=True, text=True).stdout
    listing = 'd=$(mktemp -d) && mount -t mqueue none "$d" && ls "$d"; umount "$d"; rmdir "$d"'
    queues = subprocess.run(["unshare", "-m", "sh", "-c", listing], capture_output=True, text=True)
    found = [f"sysv {key}" for line in sysv.splitlines() if line.startswith(key)]
    return found + [q for q in queues.stdout.split() if q == name.lstrip("/")]


def _sentinels_outside(tmp: Path, run_id: str) -> list[Path]:
    """The run's sentinels outside its fixtures: in /tmp, /var/tmp and the work folder."""
    name = f"harness-sentinel-harness-{run_id}-*"
    return [p for d in (Path("/tmp"), Path("/var/tmp"), tmp / "work") for p in d.glob(name)]


def _assert_clean(tmp: Path, run_id: str) -> None:
    work = tmp / "work"
    assert _sentinels_outside(tmp, run_id) == []
    assert _namespaces(run_id) == []
    assert _ipc_left(run_id) == []  # a canary killed outright leaves them: it is asked first
    assert _metadata_rules(dead=True) == []  # its veth gone, its rules with it
    assert _veth_rules(run_id) == []
    assert leftovers(f"harness-{run_id}-") == []
    assert leftovers(f"canary-{run_id}-") == []
    assert not any(p.name.startswith(f"harness-{run_id}-") for p in (work / "cells").iterdir())
    assert not any(p.name.startswith(f"harness-{run_id}-") for p in (work / "fs").iterdir())
    assert not list(work.glob(f"canary-{run_id}-*"))
    assert not (work / "runs" / f"{run_id}.lease").exists()


def test_clean_removes_what_a_killed_run_left(tmp_path: Path) -> None:
    """`harness clean MATRIX` right after kill -9: everything of that run is gone."""
    matrix, run_id = _killed_run(tmp_path)
    result = harness_cli("clean", matrix)
    assert result.code == 0, result.stdout + result.stderr
    assert f"cleaned runs {run_id}" in result.stdout
    _assert_clean(tmp_path, run_id)
    again = harness_cli("clean", matrix, "--host", "localhost")
    assert again.code == 0 and "nothing to clean" in again.stdout


def test_next_run_cleans_its_host_first(tmp_path: Path) -> None:
    """The next run on the host removes a killed run's leftovers before it starts,
    and says so in its manifest."""
    matrix, run_id = _killed_run(tmp_path)
    result = harness_cli("run", matrix, "--out", tmp_path / "again")
    assert result.code == 1, result.stdout + result.stderr  # `slow` has no sandbox
    manifest = json.loads((tmp_path / "again" / "manifest.json").read_text())
    assert manifest["hosts"]["localhost"]["cleaned_runs"] == [run_id]
    _assert_clean(tmp_path, run_id)


@pytest.mark.anyio
async def test_canary_cancelled_while_starting_is_torn_down(tmp_path: Path) -> None:
    """SIGTERM while the canary starts (a cancelled start): no namespace, veth,
    canary process or IPC object of it remains, at whichever moment the start was cut."""
    require_tool("ip")
    probe = build_probe()
    transport = LocalTransport()
    cut = 0
    for n in range(16):
        run_id = f"{os.getpid() % 0xFFFF:04x}{n:04x}"
        with anyio.move_on_after(0.003 * n) as scope:
            running = await start_canary(
                transport, probe=str(probe.path), workdir=str(tmp_path),
                canary=Canary(mode="netns"), run_id=run_id, host_index=0, nonce="n",
                high_port=42424,
            )  # fmt: skip
        if not scope.cancelled_caught:
            await stop_canary(transport, running)  # started in time: stopped as a run does
        cut += scope.cancelled_caught
        assert _namespaces(run_id) == []
        assert leftovers(f"harness-{run_id}-") == []
        assert _ipc_left(run_id) == [], n
    assert cut  # at least one start was cut short
