"""The host's own view (boot id, mount table), read once per host."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.hostside.hostfs import parse_mountinfo, read_host_fs
from harness.transport import LocalTransport

pytestmark = pytest.mark.anyio


def test_mountinfo_fields_and_escapes() -> None:
    """Each mount is [dev, type, mount point, root]; optional fields skipped, escapes undone."""
    text = (
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        "42 27 254:0 /run/netns /run/netns rw shared:1 master:2 - ext4 /dev/vda rw\n"
        "50 27 0:44 /a\\040b /mnt/x\\134y rw - tmpfs tmpfs rw\n"
        "garbage line\n"
    )
    assert parse_mountinfo(text) == [
        ["254:0", "ext4", "/", "/"],
        ["254:0", "ext4", "/run/netns", "/run/netns"],
        ["0:44", "tmpfs", "/mnt/x\\y", "/a b"],
    ]


async def test_this_hosts_view_is_read() -> None:
    """The local host's boot id and a mount table holding its root are read."""
    seen = await read_host_fs(LocalTransport())
    assert seen["boot_id"] == Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    mounts = seen["mounts"]
    assert isinstance(mounts, list) and any(m[2] == "/" for m in mounts)


def test_a_declared_policy_widens_the_grants() -> None:
    """What the policy lets the workload read counts as granted, at its own path inside
    too; without a policy only harness's own grants do."""
    from harness.hostside.hostfs import grants
    from harness.matrix.models import CommandRuntimeSpec
    from harness.policy.models import FilesystemPolicy, Policy
    from harness.runtimes import make_runtime
    from harness.runtimes.base import CellPaths

    paths = CellPaths(
        probe="/w/probe/p", workdir="/w", cell_dir="/w/c", cell_id="c", allowed="/w/a"
    )
    argv = ["bwrap", "--", "{probe}", "{args}"]
    plain = make_runtime("b", CommandRuntimeSpec(kind="command", argv=argv))
    policy = Policy(filesystem_policy=FilesystemPolicy(read_only=["/usr"], read_write=["/srv"]))
    declared = make_runtime("b", CommandRuntimeSpec(kind="command", argv=argv, policy=policy))
    assert "/usr" not in grants(plain, paths)["host"]
    assert {"/usr", "/srv"} <= set(grants(declared, paths)["host"])
    assert {"/usr", "/srv"} <= set(grants(declared, paths)["inside"])
