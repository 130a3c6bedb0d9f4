"""Whole runs of `harness run` on this machine (local transport), real runtimes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, harness_cli
from tests.e2e.helpers import cells_of, leftovers, runsc_containers, verdicts_of
from tests.lab import require_tool
from tests.results.schemas import folder_problems


@pytest.fixture
def shipped_run(local_matrix_run: tuple[int, str, Path]) -> tuple[int, str, Path]:
    """The session's one run of the shipped default matrix (tests/conftest.py)."""
    return local_matrix_run


def test_local_matrix_passes(shipped_run: tuple[int, str, Path]) -> None:
    """README's default demo exits 0 and prints the facts x runtimes table."""
    code, output, _ = shipped_run
    assert code == 0, output
    assert "host: localhost" in output
    # Seven runtimes wrap the table's cells: the value and its errno may be on two lines.
    assert "unavailable" in output and "(ENOSYS)" in output
    assert "results:" in output


def test_local_matrix_reproduces_the_seed_measurement(shipped_run: tuple[int, str, Path]) -> None:
    """Host: a Landlock ABI number and a listener fd; runsc: ENOSYS and EINVAL."""
    _, _, out = shipped_run
    v = verdicts_of(out)
    host_abi = v[("localhost", "host", "landlock_abi")]
    assert isinstance(host_abi["observed"], int) and host_abi["observed"] >= 1
    assert v[("localhost", "host", "seccomp_new_listener")]["observed"] is True
    runsc_abi = v[("localhost", "runsc", "landlock_abi")]
    assert (runsc_abi["observed"], runsc_abi["errno"], runsc_abi["verdict"]) == (
        "unavailable",
        "ENOSYS",
        "pass",
    )
    listener = v[("localhost", "runsc", "seccomp_new_listener")]
    assert (listener["observed"], listener["errno"], listener["verdict"]) == (
        "unavailable",
        "EINVAL",
        "pass",
    )
    assert v[("localhost", "runsc", "kernel_release")]["verdict"] == "pass"
    assert v[("localhost", "bwrap", "landlock_abi")]["observed"] == host_abi["observed"]


def test_results_folder_follows_the_contract(shipped_run: tuple[int, str, Path]) -> None:
    """manifest.json, cells.jsonl (raw output included) and verdicts.jsonl are written."""
    _, _, out = shipped_run
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["matrix"]["path"].endswith("matrices/local.toml")
    assert len(manifest["matrix"]["sha256"]) == 64
    assert manifest["started"] and manifest["ended"] and manifest["exit_code"] == 0
    host = manifest["hosts"]["localhost"]
    assert host["kernel_release"] == os.uname().release
    assert "runsc version" in host["runtimes"]["runsc"]["version"]
    cells = cells_of(out)
    runtimes = (
        "host", "runsc", "bwrap", "runc", "bwrap-supervised", "runsc-supervised",
        "bwrap-colocated", "landlock-colocated", "jail", "microvm",
    )  # fmt: skip
    assert set(cells) == {("localhost", r) for r in runtimes}
    assert all(c["status"] == "complete" for c in cells.values())
    assert '"type":"done"' in cells[("localhost", "runsc")]["stdout"]
    for row in verdicts_of(out).values():
        assert {"host", "runtime", "expected", "observed", "verdict", "checks"} <= set(row)


def test_results_folder_matches_the_schemas(shipped_run: tuple[int, str, Path]) -> None:
    """A real run's manifest.json and every line of cells.jsonl and verdicts.jsonl
    validate against docs/schemas/ (host entries with canary, helpers, supervisors)."""
    _, _, out = shipped_run
    manifest = json.loads((out / "manifest.json").read_text())
    host = manifest["hosts"]["localhost"]
    assert {"canary", "helpers", "supervisors", "runtimes"} <= set(host)
    assert folder_problems(out) == []


def _matrix(tmp: Path, body: str, *, top: str = "") -> Path:
    """A matrix on this machine with a private workdir; `top` adds top-level keys."""
    (tmp / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{tmp}/work"\n'
    )
    path = tmp / "m.toml"
    path.write_text(f'name = "t"\ninventory = "inv.toml"\n{top}\n{body}')
    return path


def test_impostor_runtime_exits_1(tmp_path: Path) -> None:
    """A 'gvisor' that is really the host kernel is caught by runtime identity: exit 1."""
    require_tool("bwrap")
    matrix = _matrix(
        tmp_path,
        """
[runtimes.gvisor]
kind = "command"
own_kernel = true
argv = ["bwrap", "--ro-bind", "/", "/", "--unshare-net", "--unshare-ipc", "--dev", "/dev",
        "--proc", "/proc", "--", "{probe}", "{args}"]
facts = { landlock_abi = "unavailable" }
""",
        top='scenarios = ["mechanisms"]',  # the facts judged here: the properties add nothing
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 1, result.stderr
    v = verdicts_of(tmp_path / "out")
    identity = v[("localhost", "gvisor", "kernel_release")]
    assert identity["verdict"] == "unexpected"
    assert "sandbox reports the host kernel" in identity["reason"]
    assert v[("localhost", "gvisor", "landlock_abi")]["verdict"] == "unexpected"
    assert "runtime identity: sandbox reports the host kernel" in result.stdout


def test_missing_runtime_is_inconclusive_exit_3(tmp_path: Path) -> None:
    """A runtime binary missing on the host: inconclusive with a reason, exit 3."""
    matrix = _matrix(
        tmp_path,
        """
[runtimes.host]
kind = "host"
[runtimes.runsc-missing]
kind = "runsc"
binary = "/nonexistent/runsc"
facts = { landlock_abi = "unavailable" }
""",
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out", "--format", "json")
    assert result.code == 3, result.stderr
    rows = json.loads(result.stdout)
    missing = [r for r in rows if r["runtime"] == "runsc-missing"]
    # Every scenario runs by default; attribution has no decision source here, and the
    # outer fence's guarantees no supervisor to lose or revoke: skipped.
    unjudged = ("attribution", "controller_loss_fails_closed", "revocation_verified")
    judged = [r for r in missing if r.get("property") not in unjudged]
    assert len(judged) == len(missing) - len(unjudged)
    assert judged and all(r["verdict"] == "inconclusive" for r in judged)
    assert all(r["verdict"] == "skipped" for r in missing if r.get("property") in unjudged)
    assert "runtime unavailable on the host: /nonexistent/runsc: not found" in missing[0]["reason"]
    host = [r for r in rows if r["runtime"] == "host"]
    assert all(r["verdict"] == "skipped" for r in host if r.get("fact"))  # no expectations
    violated = {r["property"]: r["verdict"] for r in host if r.get("observed") == "violated"}
    assert violated == dict.fromkeys(
        ["egress_confinement", "filesystem_confinement", "privilege_floor"], "pass"
    )  # the positive control, judged now that every scenario runs by default
    # Each verdict whole, as saved: the run's outcome keeps check results for this only.
    saved = [json.loads(x) for x in (tmp_path / "out" / "verdicts.jsonl").read_text().splitlines()]
    assert rows == [{k: v for k, v in r.items() if k != "cell_verdicts"} for r in saved]
    assert any(r.get("checks") for r in host)


def test_invalid_matrix_exits_2_without_running(tmp_path: Path) -> None:
    """A bad matrix: exit 2, one line naming file and key, and no results folder."""
    matrix = _matrix(tmp_path, '[runtimes.x]\nkind = "runc"\n')
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 2
    assert result.stderr.count("\n") == 1
    assert "runtimes.x.kind: unknown kind 'runc'" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_unknown_filter_name_exits_2(tmp_path: Path) -> None:
    """`--runtime` naming no runtime of the matrix is bad input."""
    result = harness_cli("run", "matrices/local.toml", "--runtime", "kata", "--out", tmp_path / "o")
    assert result.code == 2
    assert result.stderr.strip() == (
        "harness: error: --runtime: unknown runtime 'kata' (known: host, runsc, bwrap,"
        " runc, bwrap-supervised, runsc-supervised, bwrap-colocated, landlock-colocated,"
        " jail, microvm)"
    )


def test_filters_narrow_the_run(tmp_path: Path) -> None:
    """`--runtime` runs only the named runtime's cell (of the mechanisms scenario alone:
    which runtimes ran is what is asked, and each property's canary and sentinels cost
    seconds)."""
    result = harness_cli(
        "run",
        "matrices/local.toml",
        "--runtime",
        "host",
        "--scenario",
        "mechanisms",
        "--out",
        tmp_path / "o",
        "--format",
        "json",
    )
    assert result.code == 0, result.stderr
    assert {r["runtime"] for r in json.loads(result.stdout)} == {"host"}


def test_hung_cells_are_killed_at_the_timeout(tmp_path: Path) -> None:
    """A sandbox that hangs is killed at the cell timeout; nothing is left running."""
    require_tool("runsc")
    matrix = _matrix(
        tmp_path,
        """
[settings]
timeout = 3
check_timeout = 600
[runtimes.host]
kind = "host"
[runtimes.runsc]
kind = "runsc"
flags = ["--network=none"]
""",
        top='scenarios = ["selftest"]',
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out", timeout=60)
    assert result.code == 3, result.stdout + result.stderr
    cells = cells_of(tmp_path / "out")
    for runtime in ("host", "runsc"):
        cell = cells[("localhost", runtime)]
        assert cell["status"] == "timeout", cell
        assert cell["elapsed"] < 3 + 10
        assert "exceeded the 3s cell timeout" in cell["reason"]
    assert leftovers(str(tmp_path / "work")) == []
    assert runsc_containers(tmp_path / "work" / "runsc-root") == []
    assert list((tmp_path / "work" / "cells").iterdir()) == []


def test_help_explains_the_verbs() -> None:
    """`harness --help` and `harness run --help` describe what they do."""
    top = harness_cli("--help")
    assert top.code == 0
    assert "run" in top.stdout and "validate" in top.stdout
    sub = harness_cli("run", "--help")
    assert "--out" in sub.stdout and "Exit 0" in sub.stdout


def test_root_is_the_repository() -> None:
    """The tests run against this checkout's matrices."""
    assert (ROOT / "matrices" / "local.toml").is_file()


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_stops_cleanly_and_keeps_results(
    tmp_path: Path, signum: signal.Signals, code: int
) -> None:
    """SIGINT/SIGTERM mid-run: sandboxes torn down, records kept, manifest marked."""
    require_tool("runsc")
    matrix = _matrix(
        tmp_path,
        """
[settings]
timeout = 120
check_timeout = 600
[runtimes.host]
kind = "host"
[runtimes.runsc]
kind = "runsc"
flags = ["--network=none"]
""",
        top='scenarios = ["selftest"]',
    )
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(matrix), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        # This run's two cells (the other lane may run selftest cells of its own).
        while (
            len([p for p in leftovers("selftest", wait=0) if str(tmp_path) in p]) < 2
            and time.monotonic() < deadline
        ):
            time.sleep(0.2)
        time.sleep(1.0)  # let runsc get the probe going
        started = time.monotonic()
        process.send_signal(signum)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == code, stdout + stderr
    assert time.monotonic() - started < 45  # torn down promptly, not after the cell timeout
    assert "interrupted" in stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["interrupted"] is True and manifest["ended"]
    statuses = {c["status"] for c in cells_of(out).values()}
    assert statuses == {"cancelled"}
    assert leftovers(str(tmp_path / "work")) == []
    assert runsc_containers(tmp_path / "work" / "runsc-root") == []


def test_a_matrix_without_scenarios_judges_all_four_properties(tmp_path: Path) -> None:
    """No `scenarios` key: the run judges egress, filesystem, privilege and attribution
    (with the canary, sentinels and helpers), the outer fence's guarantees (skipped
    without a supervisor), and records the mechanism facts."""
    require_tool("runsc")
    (tmp_path / "inv.toml").write_text('[hosts.localhost]\ntransport = "local"\n')
    (tmp_path / "m.toml").write_text(
        'name = "defaults"\ninventory = "inv.toml"\n[settings]\ntimeout = 60\n'
        '[runtimes.host]\nkind = "host"\n'
        '[runtimes.runsc]\nkind = "runsc"\nflags = ["--network=none"]\n'
    )
    result = harness_cli("run", tmp_path / "m.toml", "--out", tmp_path / "out", "--no-progress")
    v = verdicts_of(tmp_path / "out")
    properties = {k[2]: r for k, r in v.items() if k[1] == "runsc" and r.get("property")}
    assert set(properties) == {
        "egress_confinement", "filesystem_confinement", "privilege_floor", "attribution",
        "controller_loss_fails_closed", "revocation_verified",
    }, result.stdout + result.stderr  # fmt: skip
    for name in ("egress_confinement", "filesystem_confinement", "privilege_floor"):
        assert properties[name]["verdict"] == "pass", properties[name]
    assert v[("localhost", "runsc", "landlock_abi")]["observed"] == "unavailable"


def test_two_entries_on_one_machine_and_work_folder_are_refused(tmp_path: Path) -> None:
    """Two inventory entries for this machine with one work folder would share a
    canary and cells: a run refuses the one that came second (unreachable, naming
    the other and the fix) and runs the first."""
    (tmp_path / "inv.toml").write_text(
        f'[hosts.first]\ntransport = "local"\nworkdir = "{tmp_path}/work"\n'
        f'[hosts.second]\ntransport = "local"\nworkdir = "{tmp_path}/work"\n'
    )
    (tmp_path / "m.toml").write_text(
        'name = "t"\ninventory = "inv.toml"\nscenarios = ["mechanisms"]\n'
        '[runtimes.host]\nkind = "host"\n'
    )
    result = harness_cli("run", tmp_path / "m.toml", "--out", tmp_path / "out")
    assert result.code == 3, result.stdout + result.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    errors = {name: entry.get("error") for name, entry in manifest["hosts"].items()}
    refused = [name for name, error in errors.items() if error]
    assert len(refused) == 1, errors
    (other,) = set(errors) - set(refused)
    assert f"work folder {tmp_path}/work as host {other!r}" in errors[refused[0]]
    assert "give one of them its own `workdir` in the inventory" in errors[refused[0]]
    cells = cells_of(tmp_path / "out")
    assert cells[(refused[0], "host")]["status"] == "unreachable"
    assert cells[(other, "host")]["status"] == "complete"
