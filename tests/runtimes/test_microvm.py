"""microVM runtime: the VMM command line, the initramfs the host builds, and real
boots under qemu (TCG) through the CLI: properties, mechanisms, a user-net mutant
that escapes, and a hung guest killed at the cell timeout."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.matrix.models import MicrovmRuntimeSpec
from harness.runtimes import CellPaths, make_runtime
from harness.runtimes.initramfs import LNK, read_newc
from harness.runtimes.microvm import LIFECYCLE, MicrovmRuntime
from tests.conftest import harness_cli
from tests.e2e.helpers import cells_of, leftovers, verdicts_of
from tests.guest import KERNEL, MODULES, require_guest

PROPERTIES = ("egress_confinement", "filesystem_confinement", "privilege_floor")
PATHS = CellPaths(
    probe="/w/probe/abc",
    workdir="/w",
    cell_dir="/w/cells/harness-1-00001",
    cell_id="harness-1-00001",
    allowed="/w/fs/allowed",
    helpers="/var/tmp/helpers",
)


def _runtime(**spec: Any) -> MicrovmRuntime:
    runtime = make_runtime("vm", MicrovmRuntimeSpec(kind="microvm", kernel="/k/vmlinux", **spec))
    assert isinstance(runtime, MicrovmRuntime)
    return runtime


def test_qemu_argv_under_tcg_has_no_network_and_names_the_cell() -> None:
    """Default: microvm machine, TCG with the host's TSC rate, serial on stdout, no NIC."""
    argv = _runtime().vmm_argv(PATHS)
    assert argv[:5] == ("qemu-system-x86_64", "-name", PATHS.cell_id, "-M", "microvm")
    assert argv[argv.index("-accel") + 1] == "tcg"
    assert {"-nodefaults", "-no-reboot", "-serial"} <= set(argv)
    assert "-nographic" not in argv
    assert not {"-netdev", "-device", "-nic"} & set(argv)
    cmdline = argv[argv.index("-append") + 1]
    assert cmdline.startswith("console=ttyS0 reboot=t panic=-1 tsc_early_khz=@KHZ@")
    assert cmdline.endswith(" -- init")


def test_forced_kvm_and_user_network() -> None:
    """accel = "kvm" drops the TSC hint; network = "user" adds one virtio NIC on slirp."""
    runtime = _runtime(accel="kvm", network="user", kernel_cmdline_extra=["quiet"])
    argv = runtime.vmm_argv(PATHS)
    assert argv[argv.index("-accel") + 1] == "kvm"
    assert argv[argv.index("-netdev") + 1] == "user,id=net0"
    assert argv[argv.index("-device") + 1] == "virtio-net-device,netdev=net0"
    assert "tsc_early_khz" not in runtime.kernel_cmdline()
    assert runtime.kernel_cmdline().endswith(" quiet -- init")
    archive = {e.name: e.data for e in read_newc(runtime.cell_archive(["run"], helpers=True))}
    assert archive["harness/net"] == b"eth0 10.0.2.15 24 10.0.2.2\n"
    assert {"harness/nnp", "harness/nosuid"} <= set(archive)


def test_firecracker_uses_a_config_file() -> None:
    """firecracker: --no-api with a config naming the kernel, the initrd and boot args."""
    runtime = _runtime(vmm="firecracker", memory_mb=512)
    assert runtime.binary == "firecracker" and runtime.accel == "kvm"
    assert runtime.vmm_argv(PATHS)[-2:] == ("--config-file", "@DIR@/vm.json")
    config = json.loads(runtime.vmm_config())
    assert config["boot-source"]["kernel_image_path"] == "@KERNEL@"
    assert config["boot-source"]["initrd_path"] == "@DIR@/initrd"
    assert "reboot=k" in config["boot-source"]["boot_args"]
    assert config["machine-config"] == {"vcpu_count": 1, "mem_size_mib": 512}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"vmm": "firecracker", "accel": "tcg"}, "firecracker needs KVM"),
        ({"vmm": "firecracker", "network": "user"}, "network 'user' needs vmm 'qemu'"),
        ({"kernel_cmdline_extra": ["a b"]}, "is not one command-line word"),
        ({"kernel_cmdline_extra": ["--"]}, "is not one command-line word"),
    ],
)
def test_impossible_entries_are_refused(extra: dict[str, Any], message: str) -> None:
    """Combinations that cannot boot are spec errors, not failed cells."""
    with pytest.raises(ValueError, match=message):
        MicrovmRuntimeSpec(kind="microvm", kernel="/k", **extra)


def test_filter_keeps_only_probe_lines() -> None:
    """Kernel log and init's messages are dropped; CRs from the serial line too."""
    console = (
        "[    0.1] Linux version 6.1\r\n"
        '{"type":"start","probe":"harness-probe"}\r\n'
        "[    1.2] random: crng init done\r\n"
        '{"type":"done","count":0}\r\n'
        "harness-init: probe exited with status 0\r\n"
    )
    assert _runtime().filter_output(console) == (
        '{"type":"start","probe":"harness-probe"}\n{"type":"done","count":0}\n'
    )


def test_identify_records_the_fingerprint_or_why_it_cannot_run() -> None:
    """The manifest gets VMM version, accelerator and guest release; no kernel: unavailable."""
    seen = _runtime().identify(
        "vmm_version=QEMU emulator version 7.2.22\nkernel_release=6.1.0-57-cloud-amd64\n"
    )
    assert seen.unavailable is None
    assert seen.version == "QEMU emulator version 7.2.22"
    assert seen.fingerprint["accel"] == "tcg"
    assert seen.fingerprint["accel_reason"].startswith("auto:")
    assert seen.fingerprint["kernel_release"] == "6.1.0-57-cloud-amd64"
    missing = _runtime().identify("vmm_version=x\nmissing=kernel image not readable: /k\n")
    assert missing.unavailable == "kernel image not readable: /k"


def test_host_builds_the_initramfs_with_modules_in_dependency_order(tmp_path: Path) -> None:
    """The lifecycle script appends the probe as /init, the helpers (setuid), the
    allowed folder's links and the NIC modules, dependencies first."""
    probe = tmp_path / "probe"
    probe.write_bytes(b"\x7fELF-probe")
    helpers = tmp_path / "helpers"
    helpers.mkdir()
    (helpers / "setuid").write_bytes(b"setuid")
    (helpers / "fcap").write_bytes(b"fcap")
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "planted-link").symlink_to("/outside/sentinel")
    mods = tmp_path / "mods"
    for rel in ("a/virtio", "a/virtio_ring", "a/virtio_mmio", "b/virtio_net", "b/net_failover"):
        (mods / rel).parent.mkdir(parents=True, exist_ok=True)
        (mods / f"{rel}.ko").write_bytes(rel.encode())
    (mods / "c").mkdir()
    (mods / "c/failover.ko").write_bytes(b"failover")
    (mods / "modules.dep").write_text(
        "a/virtio_mmio.ko: a/virtio.ko a/virtio_ring.ko\n"
        "b/virtio_net.ko: b/net_failover.ko c/failover.ko a/virtio.ko a/virtio_ring.ko\n"
    )
    runtime = _runtime(network="user")
    cell = tmp_path / "cell"
    vmm = ["sh", "-c", 'cp "$1" "$2"; printf %s "$3" > "$4"', "fake-vmm"]
    vmm += ["@DIR@/initrd", str(tmp_path / "initrd"), "khz=@KHZ@", str(tmp_path / "arg")]
    archive = runtime.cell_archive(["run", "--tag", "x y", "mechanisms"], helpers=True)
    argv = ["sh", "-c", LIFECYCLE, "t", str(cell), str(probe), str(probe), str(mods)]
    argv += ["virtio_mmio virtio_net", str(allowed), str(helpers), "", *vmm]
    done = subprocess.run(argv, input=archive, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert not cell.exists()
    assert (tmp_path / "arg").read_text().startswith("khz=")
    entries = {e.name: e for e in read_newc((tmp_path / "initrd").read_bytes())}
    assert entries["init"].data == b"\x7fELF-probe" and entries["init"].mode == 0o100755
    assert entries["helpers/setuid"].mode == 0o104755
    assert entries["allowed/planted-link"].mode == LNK | 0o777
    assert entries["allowed/planted-link"].data == b"/outside/sentinel"
    assert entries["dev/console"].rdev == (5, 1)
    assert entries["harness/args"].data == b"run\0--tag\0x y\0mechanisms\0"
    order = entries["harness/modules"].data.decode().split()
    assert [Path(p).stem for p in order] == [
        "virtio_ring", "virtio", "virtio_mmio", "failover", "net_failover", "virtio_net",
    ]  # fmt: skip
    assert all(entries[p.lstrip("/")].data for p in order)


def test_a_missing_module_fails_the_cell_before_booting(tmp_path: Path) -> None:
    """A NIC driver absent from modules.dep (and not built in) is an error, with its name."""
    (tmp_path / "modules.dep").write_text("")
    (tmp_path / "modules.builtin").write_text("kernel/drivers/virtio/virtio_mmio.ko\n")
    argv = ["sh", "-c", LIFECYCLE, "t", str(tmp_path / "cell"), "/bin/sh", "/bin/sh"]
    argv += [str(tmp_path), "virtio_mmio virtio_net", "", "", "", "true"]
    done = subprocess.run(argv, input=b"", capture_output=True, text=False)
    assert done.returncode == 1
    assert b"module virtio_net is not in" in done.stderr


def _matrix(tmp: Path, body: str, *, scenarios: str, timeout: int = 120) -> Path:
    (tmp / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{tmp}/work"\n'
    )
    path = tmp / "m.toml"
    path.write_text(
        f'name = "vm"\ninventory = "inv.toml"\nscenarios = {scenarios}\n'
        f"[settings]\ntimeout = {timeout}\n{body}"
    )
    return path


@pytest.fixture(scope="module")
def booted(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, Path]:
    """One run, two guests booted at once: no network (enforcing), and user-net (a mutant)."""
    require_guest()
    tmp = tmp_path_factory.mktemp("microvm")
    matrix = _matrix(
        tmp,
        f"""
[runtimes.vm]
kind = "microvm"
kernel = "{KERNEL}"
facts = {{ landlock_abi = "available" }}

[runtimes.vm-user-net]
kind = "microvm"
kernel = "{KERNEL}"
modules = "{MODULES}"
network = "user"
expect = {{ egress_confinement = "violated" }}
""",
        scenarios='["mechanisms", "egress-confinement", "filesystem-confinement", '
        '"privilege-floor"]',
    )
    result = harness_cli("run", matrix, "--out", tmp / "out", timeout=170)
    return result.code, result.stdout + result.stderr, tmp / "out"


def test_guest_enforces_every_property(booted: tuple[int, str, Path]) -> None:
    """No network device: egress, filesystem and privilege enforced, against a host control."""
    code, output, out = booted
    assert code == 0, output
    v = verdicts_of(out)
    assert cells_of(out)[("localhost", "host")]["status"] == "complete"  # the added control
    for prop in PROPERTIES:
        row = v[("localhost", "vm", prop)]
        assert (row["observed"], row["verdict"]) == ("enforced", "pass"), (prop, row)
    egress = v[("localhost", "vm", "egress_confinement")]["checks"]
    # unix-proxy has no host control ("n/a"): nothing on a plain host proxies.
    assert all(c["outcome"] == "blocked" and c["control"] in ("escaped", "n/a") for c in egress)


def test_guest_reports_its_own_kernel_and_mechanisms(booted: tuple[int, str, Path]) -> None:
    """kernel_release is the guest's, not the host's; mechanism facts are measured there."""
    _, _, out = booted
    v = verdicts_of(out)
    release = v[("localhost", "vm", "kernel_release")]
    assert release["observed"] != os.uname().release
    assert release["verdict"] == "pass"
    abi = v[("localhost", "vm", "landlock_abi")]
    assert isinstance(abi["observed"], int) or abi["observed"] == "unavailable"
    assert abi["verdict"] == "pass"
    listener = v[("localhost", "vm", "seccomp_new_listener")]["observed"]
    assert listener is True or listener == "unavailable"
    cell = cells_of(out)[("localhost", "vm")]
    assert cell["status"] == "complete"
    assert "Linux version" in cell["stdout"]  # the raw console is kept in the record


def test_manifest_records_the_vmm_and_the_accelerator(booted: tuple[int, str, Path]) -> None:
    """The fingerprint: qemu and its version, TCG and why, the guest's release."""
    _, _, out = booted
    manifest = json.loads((out / "manifest.json").read_text())
    entry = manifest["hosts"]["localhost"]["runtimes"]["vm"]
    assert entry["available"] and "QEMU" in entry["version"]
    fingerprint = entry["fingerprint"]
    assert (fingerprint["vmm"], fingerprint["accel"]) == ("qemu", "tcg")
    assert fingerprint["accel_reason"].startswith("auto:")
    facts = verdicts_of(out)[("localhost", "vm", "kernel_release")]
    assert fingerprint["kernel_release"] == facts["observed"]
    assert list((Path(manifest["hosts"]["localhost"]["workdir"]) / "cells").iterdir()) == []
    assert leftovers(manifest["run_id"]) == []


def test_user_network_mutant_escapes_to_the_canary(booted: tuple[int, str, Path]) -> None:
    """qemu user-mode networking leaves through the host's stack: the canary sees it."""
    _, _, out = booted
    v = verdicts_of(out)
    row = v[("localhost", "vm-user-net", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("violated", "pass"), row
    assert any(c["outcome"] == "escaped" for c in row["checks"])
    assert v[("localhost", "vm-user-net", "privilege_floor")]["observed"] == "enforced"


def test_hung_guest_is_killed_at_the_timeout(tmp_path: Path) -> None:
    """A guest that never finishes booting is killed at the cell timeout; no qemu is left."""
    require_guest()
    matrix = _matrix(
        tmp_path,
        f"""
[runtimes.hangs]
kind = "microvm"
kernel = "{KERNEL}"
kernel_cmdline_extra = ["rdinit=/nonexistent", "panic=0"]
""",
        scenarios='["mechanisms"]',
        timeout=5,
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out", timeout=60)
    assert result.code == 3, result.stdout + result.stderr
    cell = cells_of(tmp_path / "out")[("localhost", "hangs")]
    assert cell["status"] == "timeout", cell
    assert "exceeded the 5s cell timeout" in cell["reason"]
    assert cell["elapsed"] < 5 + 10
    assert leftovers(str(tmp_path / "work")) == []
    assert list((tmp_path / "work" / "cells").iterdir()) == []


def test_a_network_that_cannot_be_set_up_is_an_error_not_confinement(tmp_path: Path) -> None:
    """network = "user" without the NIC's modules: init says so and the cell is an error."""
    require_guest()
    matrix = _matrix(
        tmp_path,
        f'[runtimes.no-driver]\nkind = "microvm"\nkernel = "{KERNEL}"\nnetwork = "user"\n',
        scenarios='["egress-confinement"]',
        timeout=60,
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out", timeout=90)
    assert result.code == 3, result.stdout + result.stderr
    cell = cells_of(tmp_path / "out")[("localhost", "no-driver")]
    assert cell["status"] == "error", cell
    assert "init: the guest network could not be set up: eth0" in cell["reason"]
    row = verdicts_of(tmp_path / "out")[("localhost", "no-driver", "egress_confinement")]
    assert row["verdict"] == "inconclusive"
