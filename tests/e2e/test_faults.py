"""Faults injected for real: each is recorded with a reason, the rest goes on,
the run ends within its timeouts, and nothing is left running."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import Lab, harness_cli
from tests.e2e.helpers import cells_of, leftovers, verdicts_of
from tests.lab import CuttableProxy, SilentServer, require_tool, start_sshd


def _local_matrix(tmp: Path, runtimes: str, *, top: str = "", settings: str = "") -> Path:
    (tmp / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{tmp}/work"\n'
    )
    path = tmp / "m.toml"
    path.write_text(
        f'name = "f"\ninventory = "inv.toml"\n{top}\n[settings]\n{settings}\n{runtimes}'
    )
    return path


HOST = '[runtimes.host]\nkind = "host"\nfacts = { landlock_abi = ">= 1" }\n'


@pytest.mark.parametrize(
    ("name", "argv", "reason"),
    [
        (
            "garbage",
            '["sh", "-c", "echo \'<<garbage>>\'; exec \\"$0\\" \\"$@\\"", "{probe}", "{args}"]',
            "probe output line 1 unusable",
        ),
        (
            "crash-half-way",
            '["sh", "-c", "\\"$0\\" \\"$@\\" | head -n 3; kill -SEGV $$", "{probe}", "{args}"]',
            "probe output ended without its completion line",
        ),
    ],
)
def test_bad_probe_output_is_inconclusive_and_others_complete(
    tmp_path: Path, name: str, argv: str, reason: str
) -> None:
    """A probe that prints garbage or dies half way: that cell is inconclusive with a
    reason; the host cell in the same run still passes."""
    matrix = _local_matrix(
        tmp_path,
        HOST + f'[runtimes.{name}]\nkind = "command"\nargv = {argv}\n'
        'facts = { landlock_abi = ">= 1" }\n',
        top='scenarios = ["mechanisms"]',
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 3, result.stdout + result.stderr
    cells = cells_of(tmp_path / "out")
    assert cells[("localhost", name)]["status"] == "error"
    assert reason in cells[("localhost", name)]["reason"]
    v = verdicts_of(tmp_path / "out")
    assert v[("localhost", name, "landlock_abi")]["verdict"] == "inconclusive"
    assert v[("localhost", "host", "landlock_abi")]["verdict"] == "pass"


def _lab_inventory(lab: Lab, tmp: Path, hosts: str) -> None:
    (tmp / "inv.toml").write_text(
        f'[defaults]\nuser = "root"\nidentity_file = "{lab.client_key}"\n'
        f'known_hosts = "{lab.known_hosts}"\nconnect_timeout = 3\nconnect_retries = 0\n'
        f'[hosts.trusted]\naddress = "{lab.trusted.address}"\nport = {lab.trusted.port}\n'
        f'workdir = "{tmp}/work-trusted"\n{hosts}'
    )


def test_host_that_never_speaks_ssh(lab: Lab, tmp_path: Path) -> None:
    """A host that accepts TCP but never sends a banner times out; the others complete."""
    silent = SilentServer("127.0.0.6")
    try:
        _lab_inventory(
            lab, tmp_path, f'[hosts.mute]\naddress = "127.0.0.6"\nport = {silent.port}\n'
        )
        (tmp_path / "m.toml").write_text(
            'name = "f"\ninventory = "inv.toml"\nscenarios = ["mechanisms"]\n' + HOST
        )
        started = time.monotonic()
        result = harness_cli("run", tmp_path / "m.toml", "--out", tmp_path / "out")
        elapsed = time.monotonic() - started
    finally:
        silent.close()
    assert result.code == 3, result.stdout + result.stderr
    cells = cells_of(tmp_path / "out")
    assert cells[("mute", "host")]["status"] == "unreachable"
    assert "timed out" in cells[("mute", "host")]["reason"]
    assert cells[("trusted", "host")]["status"] == "complete"
    # Bounded by the connect timeout and its retries, not left to hang: a generous
    # bound, since a loaded machine stretches every step (speed lives in bench/).
    assert elapsed < 120


def _hang_matrix(tmp: Path) -> Path:
    path = tmp / "m.toml"
    path.write_text(
        'name = "f"\ninventory = "inv.toml"\nscenarios = ["selftest"]\n'
        "[settings]\ntimeout = 8\ncheck_timeout = 600\n" + '[runtimes.host]\nkind = "host"\n'
    )
    return path


def _start(matrix: Path, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(matrix), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(marker: str, count: int = 1, limit: float = 20) -> None:
    deadline = time.monotonic() + limit
    while len(leftovers(marker, wait=0)) < count and time.monotonic() < deadline:
        time.sleep(0.1)


def test_sshd_killed_mid_run(lab: Lab, tmp_path: Path) -> None:
    """Killing a host's sshd mid-cell records that cell with a reason; the run ends
    well before its timeouts would and the other host completes."""
    doomed = start_sshd(
        tmp_path, name="doomed", address="127.0.0.7", authorized=lab.folder / "authorized_keys"
    )
    known = tmp_path / "known"
    known.write_text(lab.known_hosts.read_text() + doomed.known_hosts_line() + "\n")
    _lab_inventory(
        lab,
        tmp_path,
        f'[hosts.doomed]\naddress = "127.0.0.7"\nport = {doomed.port}\n'
        f'workdir = "{tmp_path}/work-doomed"\nknown_hosts = "{known}"\n',
    )
    process = _start(_hang_matrix(tmp_path), tmp_path / "out")
    try:
        _wait_for(f"{tmp_path}/work-doomed/probe/[0-9a-f]+ run", 1)  # the probe itself
        time.sleep(0.5)
        started = time.monotonic()
        # The daemon and its per-connection session processes, as when the host's
        # sshd dies (killing only the listener would leave sessions running).
        subprocess.run(["pkill", "-KILL", "-P", str(doomed.process.pid)])
        doomed.process.kill()
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
        doomed.stop()
    cells = cells_of(tmp_path / "out")
    assert cells[("doomed", "host")]["status"] == "unreachable", {
        k: v
        for k, v in cells[("doomed", "host")].items()
        if k in ("status", "reason", "exit_status", "signal", "stderr")
    }
    assert "transport failed during the cell" in cells[("doomed", "host")]["reason"]
    assert cells[("trusted", "host")]["status"] == "timeout"  # the hang, killed at 8 s
    assert time.monotonic() - started < 8 + 40  # killed at 8 s, not waited out (generous: load)
    # The orphaned probe ends at its own deadline: nothing outlives the cell timeout.
    assert leftovers(f"{tmp_path}/work-doomed", wait=12) == []
    assert process.returncode == 3, out + err


def test_connection_cut_mid_run(lab: Lab, tmp_path: Path) -> None:
    """A connection cut through a proxy: the cell is recorded with the reason."""
    proxy = CuttableProxy("127.0.0.8", (lab.trusted.address, lab.trusted.port))
    try:
        known = tmp_path / "known"
        kind, key = lab.trusted.host_pub.split()[:2]
        known.write_text(f"[127.0.0.8]:{proxy.port} {kind} {key}\n")
        _lab_inventory(
            lab,
            tmp_path,
            f'[hosts.flaky]\naddress = "127.0.0.8"\nport = {proxy.port}\n'
            f'workdir = "{tmp_path}/work-flaky"\nknown_hosts = "{known}"\n',
        )
        process = _start(_hang_matrix(tmp_path), tmp_path / "out")
        try:
            _wait_for(f"{tmp_path}/work-flaky/probe/[0-9a-f]+ run", 1)
            time.sleep(0.5)
            proxy.cut()
            out, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
    finally:
        proxy.close()
    cells = cells_of(tmp_path / "out")
    assert cells[("flaky", "host")]["status"] == "unreachable", cells[("flaky", "host")]
    assert "transport failed during the cell" in cells[("flaky", "host")]["reason"]
    assert leftovers(f"{tmp_path}/work-flaky", wait=12) == []
    assert process.returncode == 3, out + err


def test_results_folder_becomes_unwritable(tmp_path: Path) -> None:
    """When the results folder stops taking writes mid-run (disk full), the run finishes, reports
    every verdict on stdout, says what was lost, and exits 3."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], check=True)
    try:
        go = tmp_path / "go"  # the slow cell waits for the disk to be full, however loaded
        matrix = _local_matrix(
            tmp_path,
            HOST + '[runtimes.slow]\nkind = "command"\n'
            f'argv = ["sh", "-c", "until [ -e {go} ]; do sleep 0.1; done; exec \\"$0\\" \\"$@\\"",'
            ' "{probe}", "{args}"]\n'
            'facts = { landlock_abi = ">= 1" }\n',
            top='scenarios = ["mechanisms"]',
        )
        process = _start(matrix, mount / "run")
        deadline = time.monotonic() + 20
        cells = mount / "run" / "cells.jsonl"
        while (not cells.exists() or not cells.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
        # Fill the filesystem: the next append fails as on a full disk.
        subprocess.run(["dd", "if=/dev/zero", f"of={mount}/filler", "bs=64k"], capture_output=True)
        go.touch()
        out, err = process.communicate(timeout=60)
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
    assert process.returncode == 3, out + err
    said = " ".join(err.split())  # as a terminal would fold it: where the path ends
    assert "cannot append results" in said and "not all saved" in said
    assert "slow" in out and "host" in out  # both cells still reported
    assert "Traceback" not in err


def test_manifest_is_replaced_atomically(tmp_path: Path) -> None:
    """manifest.json is complete JSON at every moment: written to a temp file, renamed."""
    matrix = _local_matrix(tmp_path, HOST, top='scenarios = ["mechanisms"]')
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["ended"]
    assert not list((tmp_path / "out").glob(".manifest-*"))


def test_reruns_report_flaky_apart_from_regression(tmp_path: Path) -> None:
    """`--reruns 1`: a mismatch that does not repeat is flaky; one that repeats
    stays a regression; neither is ever silently a pass."""
    require_tool("bwrap")
    state = tmp_path / "state"
    flip = (
        # Confined for real the second time: its own PID namespace and no capability (root
        # with them, in the host's PID namespace, enters the host's network by setns).
        # --die-with-parent, as the other tests' bwrap: without it bwrap waits out the
        # probe's lingerer (execution.LINGER_S, 10 s) before it exits.
        f"if [ -e {state} ]; then exec bwrap --unshare-net --unshare-ipc --unshare-pid"
        ' --die-with-parent --cap-drop ALL --ro-bind "$0" "$0" --dev /dev --proc /proc'
        f' -- "$0" "$@"; else touch {state}; exec "$0" "$@"; fi'
    )
    runtimes = (
        # A short settle window for each of the two runs: the leaky one's arrivals are
        # at once, and what is judged is how reruns are told apart, not lateness.
        "[canary]\nsettle = 0.5\n"
        f'[runtimes.flip]\nkind = "command"\n'
        f'argv = ["sh", "-c", {json.dumps(flip)}, "{{probe}}", "{{args}}"]\n'
        '[runtimes.leaky]\nkind = "command"\nargv = ["{probe}", "{args}"]\n'
    )
    matrix = _local_matrix(tmp_path, runtimes, top='scenarios = ["egress-confinement"]')
    result = harness_cli("run", matrix, "--reruns", "1", "--out", tmp_path / "out")
    assert result.code == 1, result.stdout + result.stderr
    v = verdicts_of(tmp_path / "out")
    assert v[("localhost", "flip", "egress_confinement")]["verdict"] == "flaky"
    assert "outcomes disagree across 2 runs: regression, pass" in str(
        v[("localhost", "flip", "egress_confinement")]["reason"]
    )
    leaky = v[("localhost", "leaky", "egress_confinement")]
    assert leaky["verdict"] == "regression" and "(same in all 2 runs)" in leaky["reason"]
    rows = (tmp_path / "out" / "verdicts.jsonl").read_text().splitlines()
    assert len(rows) == len({(json.loads(r)["runtime"], json.loads(r)["property"]) for r in rows})
    attempts = [
        c["attempt"]
        for c in map(json.loads, (tmp_path / "out" / "cells.jsonl").read_text().splitlines())
        if c["runtime"] == "flip"
    ]
    assert sorted(attempts) == [1, 2]


def test_runtime_binary_that_cannot_start_is_unavailable(tmp_path: Path) -> None:
    """A runsc that exits non-zero even for --version is unavailable, never run."""
    broken = tmp_path / "runsc-broken"
    broken.write_text("#!/bin/sh\necho 'runsc: cannot execute' >&2\nexit 1\n")
    broken.chmod(0o755)
    matrix = _local_matrix(
        tmp_path,
        HOST + f'[runtimes.broken]\nkind = "runsc"\nbinary = "{broken}"\n',
        top='scenarios = ["mechanisms"]',
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 3, result.stdout + result.stderr
    cell = cells_of(tmp_path / "out")[("localhost", "broken")]
    assert cell["status"] == "unavailable"
    assert "its version command exited 1: runsc: cannot execute" in cell["reason"]


def test_a_long_host_error_is_kept_short_in_every_record(tmp_path: Path) -> None:
    """A host whose preparation fails with a very long message: each cell and
    verdict carries one short line, never a copy of the whole message."""
    (tmp_path / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "/proc/{"x" * 3000}"\n'
    )
    runtimes = "".join(
        f'[runtimes.r{i}]\nkind = "command"\nargv = ["{{probe}}", "{{args}}"]\n' for i in range(4)
    )
    (tmp_path / "m.toml").write_text(
        f'name = "m"\ninventory = "inv.toml"\nscenarios = ["mechanisms"]\n{runtimes}'
    )
    result = harness_cli("run", tmp_path / "m.toml", "--out", tmp_path / "out")
    assert result.code == 3, result.stdout + result.stderr
    for name in ("cells.jsonl", "verdicts.jsonl"):
        for line in (tmp_path / "out" / name).read_text().splitlines():
            row = json.loads(line)
            assert row["reason"] and len(row["reason"]) <= 400, row["reason"][:100]
            assert "\n" not in row["reason"]
