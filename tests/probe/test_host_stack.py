"""A probe whose network stack is the host's, though its namespace's inode is not the
host's (gVisor's --network=host: the sentry's namespace of its own over the host's
stack), knows it by the host's end of the canary's link among its own addresses.
Taken for a namespace of its own, it swept the host's routing table, every other
harness run's canary link in it, at the proxy ports: their canaries logged arrivals
none of their attempts explained, and their verdicts came out inconclusive; and it
would have made its route in the host's table."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.probe.build import build_probe

# A namespace of its own holding 10.252.254.1 (the host's end, as the probe is told
# in the first run), with a link-local route and no gateway.
SCRIPT = """set -e
ip link set lo up
ip link add hs0 type veth peer name hs1
ip addr add 10.252.254.1/30 dev hs0
ip link set hs0 up
ip link set hs1 up
exec "$@"
"""
HELD, NOT_HELD = "10.252.254.1", "10.252.254.9"


def _egress(probe: Path, host4: str) -> dict[str, dict[str, object]]:
    dst = "10.252.0.9"
    host_ns = os.stat("/proc/self/ns/net").st_ino  # the real host's: not the probe's
    args = [
        "run", "--tag", "harness-t-00001", "--check-timeout-ms", "3000", "--nonce", "ab" * 8,
        "--canary-tcp", f"{dst}:8080", "--resolver", f"{dst}:53", "--alt-dns", f"{dst}:5353",
        "--doh", f"{dst}:443", "--denied-name", "denied.harness.test", "--allowed-tcp",
        f"{dst}:8081", "--canary4", dst, "--high-port", "40000", "--host4", host4,
        "--host-ns", str(host_ns), "egress-confinement",
    ]  # fmt: skip
    done = subprocess.run(
        ["unshare", "-n", "sh", "-c", SCRIPT, "sh", str(probe), *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return {str(o["id"]): o for o in lines if o.get("type") == "check"}


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"),
    reason="needs root, unshare and ip (a network namespace of its own)",
)
def test_the_host_end_of_the_link_among_its_addresses_is_the_hosts_stack() -> None:
    probe = build_probe().path
    shared = _egress(probe, HELD)
    for row in ("route-made", "firewall-opened", "tcp-proxy"):
        said = str(shared[row]["detail"])
        assert "may stand in the host's network namespace" in said, shared[row]
    own = _egress(probe, NOT_HELD)  # the twin: the same namespace, the host's end elsewhere
    for row in ("route-made", "firewall-opened", "tcp-proxy"):
        assert "may stand in the host's" not in str(own[row]["detail"]), own[row]
