"""What every runtime shares through the base: where the granted folders (the
allowed folder, the privilege helpers) appear inside the sandbox."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from harness.matrix.models import (
    CommandRuntimeSpec,
    ExecRuntimeSpec,
    HostRuntimeSpec,
    KataRuntimeSpec,
    MicrovmRuntimeSpec,
    OciRuntimeSpec,
    RunscRuntimeSpec,
    RuntimeSpec,
)
from harness.runtimes import RUNTIMES, CellPaths, kata, make_runtime, microvm, oci
from harness.runtimes.base import ALLOWED_INSIDE, HELPERS_INSIDE
from harness.runtimes.initramfs import read_newc

SPECS: dict[str, RuntimeSpec] = {
    "host": HostRuntimeSpec(kind="host"),
    "runsc": RunscRuntimeSpec(kind="runsc"),
    "oci": OciRuntimeSpec(kind="oci", binary="runc"),
    "command": CommandRuntimeSpec(kind="command", argv=["{probe}", "{args}"]),
    "microvm": MicrovmRuntimeSpec(kind="microvm", kernel="/k/vmlinux"),
    "kata": KataRuntimeSpec(kind="kata"),
    "exec": ExecRuntimeSpec(kind="exec", exec=["ctr", "task", "exec", "t"]),
}
FIXED = {"runsc", "oci", "kata", "microvm"}  # runtimes that build the sandbox's root
# A sandbox started elsewhere: the grants are made inside, in the cell's own folder.
STAGED = {"exec": ("/tmp/c1/allowed", "/tmp/c1/helpers")}
PATHS = CellPaths(
    probe="/w/probe/abc", workdir="/w", cell_dir="/w/cells/c1", cell_id="c1",
    allowed="/w/fs/c1/allowed", helpers="/var/tmp/harness-helpers",
)  # fmt: skip


def test_every_runtime_kind_is_covered_here() -> None:
    """A new runtime kind must say here whether its grants sit at fixed paths."""
    assert set(SPECS) == set(RUNTIMES)
    assert {kind for kind, cls in RUNTIMES.items() if cls.fixed_grants} == FIXED | set(STAGED)
    assert all(cls.fixed_grants == cls.own_root for cls in RUNTIMES.values())


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_inside_paths_come_from_the_base_constants(kind: str) -> None:
    """Fixed-path runtimes report the base's ALLOWED_INSIDE and HELPERS_INSIDE, whatever
    the host path; the others (host, a command without *_inside) the host path itself."""
    runtime = make_runtime(kind, SPECS[kind])
    allowed = runtime.inside(PATHS.allowed or "", role="allowed", cell_id=PATHS.cell_id)
    helpers = runtime.inside(PATHS.helpers or "", role="helpers", cell_id=PATHS.cell_id)
    if kind in FIXED:
        assert (allowed, helpers) == (ALLOWED_INSIDE, HELPERS_INSIDE)
    elif kind in STAGED:
        assert (allowed, helpers) == STAGED[kind]
    else:
        assert (allowed, helpers) == (PATHS.allowed, PATHS.helpers)


def test_oci_and_kata_mount_the_grants_at_the_inside_paths() -> None:
    """The bundle's and ctr's bind mounts, and the rootfs mount points the lifecycle
    scripts make, are the paths the probe is told."""
    config = json.loads(make_runtime("r", SPECS["runsc"]).invocation(PATHS, ["run"]).stdin or b"")
    binds = {m["source"]: m["destination"] for m in config["mounts"] if m["type"] == "bind"}
    assert binds == {PATHS.allowed: ALLOWED_INSIDE, PATHS.helpers: HELPERS_INSIDE}
    runtime = make_runtime("k", SPECS["kata"])
    assert isinstance(runtime, kata.KataRuntime)
    argv = runtime.run_argv(PATHS, ["run"])
    mounts = [argv[i + 1] for i, a in enumerate(argv) if a == "--mount"]
    assert any(f"src={PATHS.allowed},dst={ALLOWED_INSIDE}," in m for m in mounts)
    assert any(f"src={PATHS.helpers},dst={HELPERS_INSIDE}," in m for m in mounts)
    for inside in (ALLOWED_INSIDE, HELPERS_INSIDE):
        assert f'"$dir/rootfs{inside}"' in oci.LIFECYCLE
        assert inside.lstrip("/") in kata.LIFECYCLE.split("for d in ")[1].split(";")[0].split()


def test_a_guest_gets_the_grants_at_the_inside_paths() -> None:
    """The microVM's initramfs has the grants' folders where the probe is told they are,
    and the host's cpio writer fills those folders."""
    runtime = make_runtime("vm", SPECS["microvm"])
    assert isinstance(runtime, microvm.MicrovmRuntime)
    folders = {e.name for e in read_newc(runtime.cell_archive(["run"], helpers=True))}
    assert {ALLOWED_INSIDE.lstrip("/"), HELPERS_INSIDE.lstrip("/")} <= folders
    assert f"member {HELPERS_INSIDE.lstrip('/')}/setuid" in microvm.LIFECYCLE
    assert f'"{ALLOWED_INSIDE.lstrip("/")}/$b"' in microvm.LIFECYCLE


def test_the_guest_init_spells_the_helpers_path() -> None:
    """The probe's init (init.c) gives the fcap helper its capability and remounts
    the helpers nosuid at HELPERS_INSIDE: a drift would leave the helpers unguarded."""
    init = resources.files("harness.probe").joinpath("init.c").read_text()
    assert f'stat("{HELPERS_INSIDE}", &st)' in init
    assert f'mount("{HELPERS_INSIDE}", "{HELPERS_INSIDE}", NULL, MS_BIND, NULL)' in init
    assert f'"{HELPERS_INSIDE}/fcap", "security.capability"' in init
