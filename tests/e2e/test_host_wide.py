"""Runs that change the host for everyone while they last: the helpers' folder on a
nosuid mount, IPv4 forwarding on and a veth routing a namespace out. They run with
nothing beside them (tests/lanes.py's ALONE): another lane's run would stage its
helpers on that mount, or route through that forwarding."""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import harness_cli
from tests.e2e.helpers import cells_of, verdicts_of
from tests.e2e.test_properties import RUNSC, _matrix
from tests.lab import require_tool


@pytest.fixture
def nosuid_helpers() -> Iterator[None]:
    """Put the helpers' folder on a nosuid tmpfs: the setuid bit means nothing there."""
    folder = Path(f"/var/tmp/harness-helpers-{os.getuid()}")
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "nosuid,mode=0755", "tmpfs", str(folder)], check=True
    )
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_helper_that_never_was_setuid_is_inconclusive(tmp_path: Path, nosuid_helpers: None) -> None:
    """A setuid helper that cannot work (nosuid mount) makes privilege inconclusive."""
    require_tool("runsc")
    matrix = _matrix(
        tmp_path, '[runtimes.host]\nkind = "host"\n' + RUNSC, scenarios='["privilege-floor"]'
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 3, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "runsc", "privilege_floor")]
    assert row["observed"] == "inconclusive"
    assert "priv-setuid-exec blocked, but its control did not escape" in row["reason"]


# Unique per test process, so two copies of this file can run at once: the
# namespace, the veth pair and the /30 between them.
_UNIQUE = os.getpid() ^ int.from_bytes(os.urandom(2), "big")
ROUTED_NS = f"harness-t-routed-{os.getpid()}-{_UNIQUE & 0xFFFF:04x}"
VETH_HOST, VETH_NS = f"hv{_UNIQUE & 0xFFFFFF:06x}", f"hc{_UNIQUE & 0xFFFFFF:06x}"
SUBNET = f"10.252.{(_UNIQUE >> 6) & 0xFF}.{(_UNIQUE & 0x3F) * 4}"
FORWARD_LOCK = Path("/run/lock/harness-t-ip-forward")


@contextlib.contextmanager
def _forwarding() -> Iterator[None]:
    """IPv4 forwarding on while any copy of these tests needs it; the first copy in
    saves the machine's setting, the last one out restores it."""
    forward = Path("/proc/sys/net/ipv4/ip_forward")
    saved = FORWARD_LOCK.with_suffix(".saved")
    with open(FORWARD_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not saved.exists():
            saved.write_text(forward.read_text())
        forward.write_text("1\n")
        fcntl.flock(lock, fcntl.LOCK_SH)  # held while the test runs
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pass  # another copy is still running; it restores the setting
            else:
                forward.write_text(saved.read_text())
                saved.unlink()


@pytest.fixture
def routed_netns() -> Iterator[str]:
    """A network namespace for a sandbox, routed out through a veth to the host.

    Only 10.251.0.0/16 (where harness puts its outside-namespace canaries) is
    routed; the sandbox has no other way out. Forwarding is restored afterwards.
    """
    require_tool("ip")
    base = SUBNET.rsplit(".", 1)
    host_ip = f"{base[0]}.{int(base[1]) + 1}"
    ns_ip = f"{base[0]}.{int(base[1]) + 2}"
    inside = ["ip", "netns", "exec", ROUTED_NS]
    steps = [
        ["ip", "netns", "add", ROUTED_NS],
        ["ip", "link", "add", VETH_HOST, "type", "veth", "peer", "name", VETH_NS],
        ["ip", "link", "set", VETH_NS, "netns", ROUTED_NS],
        ["ip", "addr", "add", f"{host_ip}/30", "dev", VETH_HOST],
        ["ip", "link", "set", VETH_HOST, "up"],
        [*inside, "ip", "addr", "add", f"{ns_ip}/30", "dev", VETH_NS],
        [*inside, "ip", "link", "set", VETH_NS, "up"],
        [*inside, "ip", "link", "set", "lo", "up"],
        [*inside, "ip", "route", "add", "10.251.0.0/16", "via", host_ip],
    ]
    try:
        for step in steps:
            subprocess.run(step, check=True, capture_output=True)
        with _forwarding():
            yield ROUTED_NS
    finally:
        subprocess.run(["ip", "netns", "del", ROUTED_NS], capture_output=True)
        subprocess.run(["ip", "link", "del", VETH_HOST], capture_output=True)


# runc rather than runsc: runsc --network=sandbox refuses to start on this machine
# ("cannot run with network enabled in root network namespace") because it
# cannot read /proc/1/ns/net here to tell the namespaces apart.
ROUTED = f"""
[runtimes.runc-routed]
kind = "oci"
binary = "runc"
netns = "{ROUTED_NS}"
expect = {{ egress_confinement = "enforced" }}
"""


def test_routed_sandbox_is_caught_where_real_egress_arrives(
    tmp_path: Path, routed_netns: str
) -> None:
    """A sandbox in its own network namespace, routed out through a veth, reaches the
    outside-namespace canary: a regression. (Mutant: isolated namespace, but a way out.)"""
    require_tool("runc")
    matrix = _matrix(tmp_path, ROUTED, scenarios='["egress-confinement"]')
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 1, result.stdout + result.stderr
    row = verdicts_of(tmp_path / "out")[("localhost", "runc-routed", "egress_confinement")]
    assert (row["observed"], row["verdict"]) == ("violated", "regression")
    assert "escaped" in str(row["reason"])  # the nonce came back, or the canary saw it


def test_loopback_canary_would_pass_the_same_sandbox(tmp_path: Path, routed_netns: str) -> None:
    """Why canaries sit where egress arrives: on loopback, the same routed sandbox
    looks enforced. This documents the false pass the netns canary prevents."""
    require_tool("runc")
    matrix = _matrix(
        tmp_path,
        ROUTED,
        scenarios='["egress-confinement"]',
        canary='[canary]\nmode = "listen"\naddress = "127.0.0.1"\ntcp_port = 18080\n'
        "allowed_port = 18081\ndns_port = 18053\nalt_dns_port = 18054\ndoh_port = 18443\n",
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    row = verdicts_of(tmp_path / "out")[("localhost", "runc-routed", "egress_confinement")]
    assert row["observed"] == "enforced", result.stdout
    # A listen canary has no veth of its own: no frame of packet4's goes anywhere (the
    # host's default route would have taken one to the machine's real gateway).
    for cell in cells_of(tmp_path / "out").values():
        packet = {c["id"]: c for c in cell["checks"]}.get("packet4")
        assert packet is None or "not tried: the canary stands behind no veth" in packet["detail"]
