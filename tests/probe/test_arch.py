"""The probe for every host architecture: cross-built static for aarch64, cached by
(source hash, architecture), run for real under qemu-user (qemu-aarch64-static),
and chosen by the host's `uname -m` when a host is prepared."""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import struct
import subprocess
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import ProbeBuildError
from harness.probe import Probes, build_probe
from harness.probe.build import check_static_elf
from harness.probe.protocol import parse_output
from harness.scenarios import SCENARIOS
from harness.staging import prepare_host
from harness.transport import LocalTransport
from tests.lab import free_port, require_tool
from tests.probe.copies import seed_probe_cache

QEMU = "qemu-aarch64-static"
CROSS = "aarch64-linux-gnu-gcc"
ELF_AARCH64 = 183

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="cross-builds aarch64 from an x86_64 controller"
)


@pytest.fixture(scope="module")
def arm_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build cache for the module: each build (a cross-build is seconds of CPU) is
    made once, and a second ask of it is the cache's own test. Both probes are the
    default cache's builds (made there first if need be: `harness probe build --arch
    aarch64` below builds there too), copied in at their places, so that neither is
    compiled twice in a session, nor the cross-build again in every session."""
    cache = tmp_path_factory.mktemp("arm")
    seed_probe_cache(cache)
    if shutil.which(CROSS):
        seed_probe_cache(cache, arch="aarch64")
    return cache


@pytest.fixture(scope="module")
def arm_probe(arm_cache: Path) -> Path:
    require_tool(CROSS)
    return build_probe(arch="aarch64", cache=arm_cache).path


def _under_qemu(probe: Path, *args: str) -> subprocess.CompletedProcess[str]:
    qemu = require_tool(QEMU)
    return subprocess.run([qemu, str(probe), *args], capture_output=True, text=True, timeout=120)


def test_aarch64_build_is_a_static_aarch64_elf_cached_per_arch(arm_cache: Path) -> None:
    """--arch aarch64 gives an aarch64 ELF with no interpreter, cached apart from x86_64."""
    require_tool(CROSS)
    arm = build_probe(arch="arm64", cache=arm_cache)  # the Debian spelling names the same arch
    header = arm.path.read_bytes()[:64]
    assert header[:4] == b"\x7fELF" and struct.unpack_from("<H", header, 18)[0] == ELF_AARCH64
    assert arm.arch == "aarch64" and arm.path.parent.parent.name == "aarch64"
    native = build_probe(cache=arm_cache)
    assert native.arch == "x86_64" and native.sha256 != arm.sha256
    assert build_probe(arch="aarch64", cache=arm_cache).path == arm.path  # cached
    with pytest.raises(ProbeBuildError, match="expected aarch64"):
        check_static_elf(native.path, arch="aarch64")


def test_a_dynamic_binary_is_refused(tmp_path: Path) -> None:
    """A binary that needs a loader (here /bin/sh) is never accepted as a probe."""
    with pytest.raises(ProbeBuildError, match="dynamically linked"):
        check_static_elf(Path("/bin/sh"), arch="x86_64")


def test_an_unknown_machine_gets_no_probe(tmp_path: Path) -> None:
    """A machine harness cannot build for is an error naming it, never another arch's probe."""
    with pytest.raises(ProbeBuildError, match="riscv64"):
        build_probe(arch="riscv64", cache=tmp_path)


def test_cli_prints_the_path_of_a_probe_that_runs_under_qemu(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`harness probe build --arch aarch64` prints a path; that binary runs under qemu."""
    require_tool(CROSS)
    with pytest.raises(SystemExit) as info:
        main(["probe", "build", "--arch", "aarch64"])
        raise SystemExit(0)
    assert info.value.code == 0
    path = Path(capsys.readouterr().out.strip())
    done = _under_qemu(path, "version")
    assert json.loads(done.stdout) == {"type": "version", "probe": "harness-probe", "protocol": 1}


def test_aarch64_mechanism_facts_under_qemu(arm_probe: Path) -> None:
    """Every mechanisms fact comes out of the aarch64 probe, and it says it is aarch64."""
    done = _under_qemu(arm_probe, "run", "--tag", "t", "--deadline-ms", "60000", "mechanisms")
    output = parse_output(done.stdout)
    assert output.complete, done.stdout + done.stderr
    facts = {f.id: f for f in output.facts}
    assert set(SCENARIOS["mechanisms"].facts) <= set(facts)
    assert facts["kernel_machine"].value == "aarch64"
    # qemu-user does not pass landlock through: measured as refused, not guessed.
    assert facts["landlock_abi"].status == "unavailable"


def test_aarch64_attempts_of_each_scenario_under_qemu(arm_probe: Path, tmp_path: Path) -> None:
    """Unconfined (no sandbox), the aarch64 probe's attempts escape as the x86_64 one's do:
    egress reaches a loopback canary, the sentinel is read, the unprivileged setuid(0) fails."""
    port = free_port("127.0.0.1")
    canary = [str(build_probe().path), "canary", "--tcp", f"127.0.0.1:{port}", "--nonce", "n0nce"]
    started = subprocess.run(
        [*canary, "--daemon", str(tmp_path / "canary.log")], capture_output=True, text=True
    )
    assert started.returncode == 0, started.stderr
    pid = int(started.stdout.strip().removeprefix("pid="))  # printed once it listens
    outside = tmp_path / "outside"
    allowed = tmp_path / "allowed"
    outside.mkdir()
    allowed.mkdir()
    (outside / "sentinel").write_text("tok123\n")
    for name in ("overwrite-me", "rename-me"):
        (outside / name).write_text("x\n")
    try:
        done = _under_qemu(
            arm_probe, "run", "--tag", "t1", "--check-timeout-ms", "5000",
            "--deadline-ms", "100000", "--canary-tcp", f"127.0.0.1:{port}",
            "--allowed-tcp", f"127.0.0.1:{port}", "--nonce", "n0nce",
            "--allowed-dir", str(allowed), "--sentinel", str(outside / "sentinel"),
            "--token", "tok123", "--outside-dir", str(outside),
            "--overwrite", str(outside / "overwrite-me"), "--rename", str(outside / "rename-me"),
            "--planted-link", str(allowed / "planted-link"),
            "egress-confinement", "filesystem-confinement", "privilege-floor", "attribution",
        )  # fmt: skip
    finally:
        os.kill(pid, signal.SIGKILL)
    output = parse_output(done.stdout)
    assert output.complete, done.stdout + done.stderr
    checks = {c.id: c for c in output.checks}
    assert checks["tcp-raw-ip"].outcome == "escaped"
    assert checks["fs-read-outside"].outcome == "escaped"
    assert checks["fs-allowed-write"].outcome == "ok"
    assert checks["priv-setuid0"].outcome == "blocked" and checks["priv-setuid0"].errno == "EPERM"
    assert {c.scenario for c in output.checks} == {
        "egress-confinement", "filesystem-confinement", "privilege-floor", "attribution",
    }  # fmt: skip


@pytest.mark.anyio
async def test_a_host_gets_the_probe_of_its_own_architecture(
    tmp_path: Path, arm_cache: Path
) -> None:
    """A run whose first build is aarch64 (an aarch64 controller) stages the x86_64 probe
    on this x86_64 host, and says so in the host's state."""
    require_tool(CROSS)
    probes = Probes(build_probe(arch="aarch64", cache=arm_cache), cache=arm_cache)
    state = await prepare_host(LocalTransport(), probes, workdir=str(tmp_path / "wd"), runtimes=[])
    native = build_probe(cache=arm_cache)
    assert state.arch == "x86_64" and state.probe_sha256 == native.sha256
    assert Path(state.probe_path).read_bytes() == native.path.read_bytes()
    assert set(probes.manifest()) == {"aarch64", "x86_64"}
    again = await prepare_host(LocalTransport(), probes, workdir=str(tmp_path / "wd"), runtimes=[])
    assert not again.probe_uploaded  # found by its sha256, not sent twice
