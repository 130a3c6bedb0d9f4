"""Kata runtime adapter, run for real through a private containerd with the runc
shim (Kata itself cannot run on this machine: only the shim name goes unexercised)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.matrix.models import KataRuntimeSpec
from harness.runtimes import CellPaths, make_runtime
from harness.runtimes.kata import KataRuntime
from tests.conftest import harness_cli
from tests.e2e.helpers import cells_of, leftovers, verdicts_of
from tests.lab import require_tool
from tests.runtimes.conftest import NAMESPACE, Containerd

PROPERTIES = ("egress_confinement", "filesystem_confinement", "privilege_floor")


def test_ctr_run_grants_only_the_rootfs_and_the_scenario_folders() -> None:
    """The shim is named; helpers are bound read-only and nosuid; the probe's args follow."""
    spec = KataRuntimeSpec(kind="kata", address="/s.sock", flags=["--allow-new-privs"])
    runtime = make_runtime("k", spec)
    assert isinstance(runtime, KataRuntime)
    paths = CellPaths(
        probe="/w/p", workdir="/w", cell_dir="/w/cells/c1", cell_id="c1",
        allowed="/w/fs/allowed", helpers="/var/tmp/h",
    )  # fmt: skip
    argv = runtime.run_argv(paths, ["run", "mechanisms"])
    assert argv[:7] == ["ctr", "--address", "/s.sock", "--namespace", "harness", "run", "--rm"]
    assert argv[argv.index("--runtime") + 1] == "io.containerd.kata.v2"
    assert {"--rootfs", "--read-only", "--allow-new-privs"} <= set(argv)
    mounts = [argv[i + 1] for i, a in enumerate(argv) if a == "--mount"]
    assert "type=bind,src=/w/fs/allowed,dst=/allowed,options=rbind:rw" in mounts
    assert "type=bind,src=/var/tmp/h,dst=/helpers,options=rbind:ro:nosuid:nodev" in mounts
    assert argv[-5:] == ["/w/cells/c1/rootfs", "c1", "/probe", "run", "mechanisms"]
    assert runtime.inside("/w/fs/allowed", role="allowed", cell_id="c1") == "/allowed"


def _matrix(tmp: Path, body: str, *, scenarios: str) -> Path:
    (tmp / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{tmp}/work"\n'
    )
    path = tmp / "m.toml"
    path.write_text(
        f'name = "kata"\ninventory = "inv.toml"\nscenarios = {scenarios}\n'
        + ("" if "[settings]" in body else "[settings]\ntimeout = 60\n")
        + body
    )
    return path


@pytest.fixture(scope="module")
def kata_run(
    containerd: Containerd, tmp_path_factory: pytest.TempPathFactory
) -> tuple[int, str, Path]:
    """One run: the adapter with the runc shim, and a --net-host mutant."""
    tmp = tmp_path_factory.mktemp("kata")
    matrix = _matrix(
        tmp,
        f"""
[runtimes.kata-runc]
kind = "kata"
runtime = "io.containerd.runc.v2"
address = "{containerd.address}"
namespace = "{NAMESPACE}"

[runtimes.kata-net-host]
kind = "kata"
runtime = "io.containerd.runc.v2"
address = "{containerd.address}"
namespace = "{NAMESPACE}"
flags = ["--net-host"]
# The host's network namespace brings the host's sysfs (and ctr binds the host's
# /etc/hosts and /etc/resolv.conf): host filesystems beyond the grants.
expect = {{ egress_confinement = "violated", filesystem_confinement = "violated" }}
""",
        scenarios='["mechanisms", "egress-confinement", "filesystem-confinement", '
        '"privilege-floor"]',
    )
    result = harness_cli("run", matrix, "--out", tmp / "out")
    return result.code, result.stdout + result.stderr, tmp / "out"


def test_runc_shim_cell_is_complete_and_enforces(kata_run: tuple[int, str, Path]) -> None:
    """Through containerd: a complete cell, every property enforced against the control."""
    _, output, out = kata_run
    cell = cells_of(out)[("localhost", "kata-runc")]
    assert cell["status"] == "complete", (cell["reason"], output)
    v = verdicts_of(out)
    for prop in PROPERTIES:
        row = v[("localhost", "kata-runc", prop)]
        assert (row["observed"], row["verdict"]) == ("enforced", "pass"), (prop, row)
    mutant = v[("localhost", "kata-net-host", "egress_confinement")]
    assert (mutant["observed"], mutant["verdict"]) == ("violated", "pass"), mutant
    shared = v[("localhost", "kata-net-host", "filesystem_confinement")]
    assert shared["verdict"] == "pass" and "mount /sys (sysfs" in shared["reason"], shared


def test_runc_shim_is_caught_by_runtime_identity(kata_run: tuple[int, str, Path]) -> None:
    """Kata promises a guest kernel; runc's shim shows the host's, so that row is unexpected."""
    code, output, out = kata_run
    assert code == 1, output
    row = verdicts_of(out)[("localhost", "kata-runc", "kernel_release")]
    assert row["verdict"] == "unexpected"
    assert "sandbox reports the host kernel" in row["reason"]
    bad = {k for k, r in verdicts_of(out).items() if r["verdict"] not in ("pass", "skipped")}
    assert bad == {("localhost", rt, "kernel_release") for rt in ("kata-runc", "kata-net-host")}


def test_manifest_names_the_shim(kata_run: tuple[int, str, Path]) -> None:
    """The fingerprint records the shim, its binary and containerd's version."""
    _, _, out = kata_run
    manifest = json.loads((out / "manifest.json").read_text())
    entry = manifest["hosts"]["localhost"]["runtimes"]["kata-runc"]
    assert entry["available"] and entry["version"].startswith("containerd ")
    assert entry["fingerprint"]["shim"] == "io.containerd.runc.v2"
    assert entry["fingerprint"]["shim_binary"].endswith("containerd-shim-runc-v2")


def test_nothing_is_left_in_containerd(
    containerd: Containerd, kata_run: tuple[int, str, Path]
) -> None:
    """No task, no container, no process and no cell folder survive the run."""
    _, _, out = kata_run
    assert containerd.ctr("tasks", "ls", "-q").split() == []
    assert containerd.ctr("containers", "ls", "-q").split() == []
    manifest = json.loads((out / "manifest.json").read_text())
    assert leftovers(manifest["run_id"]) == []
    assert list((Path(manifest["hosts"]["localhost"]["workdir"]) / "cells").iterdir()) == []


def test_unreachable_containerd_is_unavailable(tmp_path: Path) -> None:
    """No containerd at the address: the runtime is unavailable (inconclusive, exit 3)."""
    require_tool("ctr")
    matrix = _matrix(
        tmp_path,
        f'[runtimes.kata]\nkind = "kata"\naddress = "{tmp_path}/none.sock"\n',
        scenarios='["mechanisms"]',
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 3, result.stdout + result.stderr
    cell = cells_of(tmp_path / "out")[("localhost", "kata")]
    assert cell["status"] == "unavailable"
    assert "containerd is not reachable at" in cell["reason"]


def test_hung_cell_is_killed_and_removed(containerd: Containerd, tmp_path: Path) -> None:
    """A task that hangs is killed at the cell timeout; its task and container are gone."""
    matrix = _matrix(
        tmp_path,
        f"""
[settings]
timeout = 3
check_timeout = 600
[runtimes.kata-runc]
kind = "kata"
runtime = "io.containerd.runc.v2"
address = "{containerd.address}"
namespace = "{NAMESPACE}"
""",
        scenarios='["selftest"]',
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out", timeout=60)
    assert result.code == 3, result.stdout + result.stderr
    cell = cells_of(tmp_path / "out")[("localhost", "kata-runc")]
    assert cell["status"] == "timeout", cell
    assert containerd.ctr("tasks", "ls", "-q").split() == []
    assert containerd.ctr("containers", "ls", "-q").split() == []
    assert leftovers(str(tmp_path / "work")) == []
