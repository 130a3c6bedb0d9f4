"""The privilege floor in sandboxes made of a user namespace, as started by hand:
`unshare -Ur` and bubblewrap's --unshare-user run by nobody (rootless), and bwrap's
--unshare-user run by root (the host's uid 0 mapped in, alone). Root needed (to
start as nobody); each row here was proven by hand first (see each test)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.probe.copies import runnable_copy

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in ("setpriv", "unshare", "setcap")),
    reason="needs root, setpriv, unshare and setcap",
)
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
# bwrap's user namespace with every capability kept there; /proc read-only.
BWRAP_USERNS = [
    "bwrap", "--unshare-user", "--uid", "0", "--gid", "0", "--cap-add", "ALL",
    "--unshare-net", "--unshare-pid", "--die-with-parent",
    "--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
]  # fmt: skip


@pytest.fixture
def probe(open_folder: Path) -> Path:
    return runnable_copy(open_folder)


def _rows(argv: list[str]) -> dict[str, dict[str, object]]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if "unshare failed" in done.stderr or "bwrap:" in done.stderr:
        pytest.skip(f"no user namespaces here: {done.stderr.strip()}")
    return {row.get("id"): row for row in map(json.loads, done.stdout.splitlines())}


def _bwrap(probe: Path, *helpers: str) -> list[str]:
    if not shutil.which("bwrap"):
        pytest.skip("no bwrap")
    return [*BWRAP_USERNS, "--ro-bind", str(probe), "/probe", "--", "/probe", "run", "--tag", "t",
            *helpers, "privilege-floor"]  # fmt: skip


def test_unshare_ur_a_file_capability_in_the_probes_own_namespace_is_no_gain(
    probe: Path,
) -> None:
    """`unshare -Ur` by nobody: the unprivileged attempts run in a user namespace of
    the probe's own. The fcap helper runs there with CAP_NET_RAW, relative to that
    namespace, which owns no network namespace: by hand, a raw socket is refused
    there (and as the sandbox's root), opened by nobody on the host."""
    fcap = probe.parent / "fcap"
    shutil.copy(probe, fcap)
    subprocess.run(["setcap", "cap_net_raw+ep", str(fcap)], check=True)
    argv = [*AS_NOBODY, "unshare", "--user", "--map-root-user", "--", str(probe), "run"]
    argv += ["--tag", "t", "--fcap-helper", str(fcap), "privilege-floor"]
    row = _rows(argv)["priv-fcap-exec"]
    assert row["outcome"] == "blocked", row
    assert "in the probe's own user namespace" in str(row["detail"]), row


def test_bwrap_userns_a_read_only_proc_still_lets_the_probe_drop(probe: Path) -> None:
    """bwrap --unshare-user --uid 0 by nobody with /proc read-only (as
    matrices/local.toml's bwrap has it): no map could be written, so every
    unprivileged attempt was an error (inconclusive). With the capability, the
    check's own mount namespace gets a writable /proc for the map."""
    rows = _rows([*AS_NOBODY, *_bwrap(probe)])
    for check in ("priv-setuid0", "priv-capset", "priv-ambient"):
        row = rows[check]
        assert row["outcome"] == "blocked", row
        assert row["evidence"]["own_userns"] == 1, row  # type: ignore[index]


def test_bwrap_userns_a_handle_opened_in_a_child_namespace_is_no_escape(probe: Path) -> None:
    """bwrap --unshare-user --uid 0 --cap-add ALL by nobody: open_by_handle_at of
    bwrap's own tmpfs root succeeds (kernel 6.10's relaxed rule), but by hand the
    handle of the ext4 root behind a host folder bound in is stale there (it opens
    the host's / on the host): nothing beyond the mount's own subtree."""
    row = _rows([*AS_NOBODY, *_bwrap(probe)])["priv-root-handle"]
    assert row["outcome"] == "blocked", row


@pytest.mark.parametrize("as_nobody", [False, True])
def test_bwrap_userns_the_hosts_root_mapped_in_writes_a_sysctl_through_its_own_proc(
    probe: Path, as_nobody: bool
) -> None:
    """bwrap --unshare-user run by root maps the host's uid 0 in: with every
    capability in that namespace, a proc mounted in a mount namespace of its own
    writes the host's kernel settings, whatever the sandbox's read-only /proc (by
    hand: printk_ratelimit written back). Run by nobody, the same write is refused."""
    row = _rows([*(AS_NOBODY if as_nobody else []), *_bwrap(probe)])["priv-root-mount"]
    if as_nobody:
        assert row["outcome"] == "blocked", row
    else:
        assert row["outcome"] == "escaped", row
        assert "printk_ratelimit through a proc mounted there" in str(row["detail"]), row


def test_bwrap_rootless_an_ambient_capability_of_its_own_namespace_is_no_gain(
    probe: Path,
) -> None:
    """bwrap --unshare-user by uid 4242, keeping CAP_NET_BIND_SERVICE there (a server
    that binds port 80 in its own network namespace): bwrap hands it over ambient.
    Raising it again is no raise, and any raise there holds only in that namespace
    (by hand: CapAmb 0x400 at start, uid_map "4242 0 1"). It was `escaped`, the one
    row of a correct sandbox."""
    argv = ["setpriv", "--reuid=4242", "--regid=4242", "--clear-groups", "--", "bwrap"]
    argv += ["--unshare-user", "--unshare-net", "--unshare-pid", "--die-with-parent"]
    argv += ["--cap-add", "CAP_NET_BIND_SERVICE", "--ro-bind", str(probe), "/probe"]
    argv += ["--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    argv += ["--", "/probe", "run", "--tag", "t", "privilege-floor"]
    if not shutil.which("bwrap"):
        pytest.skip("no bwrap")
    row = _rows(argv)["priv-ambient"]
    assert row["outcome"] == "blocked", row
    assert row["evidence"]["raised"] == "0000000000000000", row  # type: ignore[index]
