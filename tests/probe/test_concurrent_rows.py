"""Concurrent rows (checks.def's `KIND_NET`): the egress attempts run at once, each in
its own child with its own time limit, and print in table order. Where packets vanish
(a route to a neighbour pinned to a MAC nobody has, in a network namespace this test
makes), each attempt still waits its whole limit before it is called blocked, but the
scenario costs that limit once, not once per row (issue 27's budget: 2.5 s)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from harness.probe import table
from harness.probe.build import build_probe

# In a namespace of its own: a veth whose gateway resolves to a MAC that no interface
# has, so every frame leaves and is dropped by the peer as not its own.
SCRIPT = """set -e
ip link set lo up
ip link add va type veth peer name vb
ip addr add 10.252.253.1/30 dev va
ip link set va up
ip link set vb up
ip neigh add 10.252.253.2 lladdr 02:00:5e:00:53:98 dev va nud permanent
ip route add default via 10.252.253.2
exec "$@"
"""
ROWS = ["tcp-denied-name", "tcp-raw-ip", "dns-alt-udp", "dns-alt-tcp", "doh-port"]


def test_the_egress_rows_are_concurrent() -> None:
    """Every egress row runs at once with the others, but route-made and firewall-opened:
    the route one makes and the rule the other puts in would let the others out, so they
    run alone, after them, last."""
    egress = [r for r in table.rows() if r.scenario == "egress-confinement"]
    alone = egress[-2:]
    assert [r.id for r in alone] == ["route-made", "firewall-opened"], alone
    assert not any(r.concurrent for r in alone), alone
    assert all(r.concurrent and not r.light for r in egress[:-2]), egress
    assert {r.kind for r in table.rows() if r.concurrent} <= {"attempt", "control", "sweep"}
    with pytest.raises(ValueError, match="cannot be _NET"):
        table.rows('CHECK("mechanisms", "kernel_release", chk_kernel_release, FACT_NET)\n')


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"),
    reason="needs root, unshare and ip (a network namespace of its own)",
)
def test_where_packets_vanish_each_waits_its_limit_once_for_all(tmp_path: Path) -> None:
    probe = build_probe().path
    other = tmp_path / "other"
    shutil.copy(probe, other)
    with other.open("ab") as f:
        f.write(b"\nharness: another binary\n")
    dst = "10.252.0.9"
    args = [
        "run", "--tag", "harness-t-00001", "--check-timeout-ms", "5000", "--nonce", "ab" * 8,
        "--canary-tcp", f"{dst}:8080", "--resolver", f"{dst}:53", "--alt-dns", f"{dst}:5353",
        "--doh", f"{dst}:443", "--denied-name", "denied.harness.test", "--allowed-tcp",
        f"{dst}:8081", "--canary4", dst, "--high-port", "40000", "--other-binary", str(other),
        "egress-confinement",
    ]  # fmt: skip
    t0 = time.monotonic()
    done = subprocess.run(
        ["unshare", "-n", "sh", "-c", SCRIPT, "sh", str(probe), *args],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    wall = time.monotonic() - t0
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1]["type"] == "done", lines[-1]
    got = {str(o["id"]): o for o in lines if o.get("type") == "check"}
    order = [str(o["id"]) for o in lines if o.get("type") == "check"]
    # Table order: the named attempts first, the sweep's lines, then the binaries'.
    assert order[: len(ROWS)] == ROWS, order
    assert order[-4:] == [
        "egress-policy-binary", "egress-other-binary", "route-made", "firewall-opened"
    ], order  # fmt: skip
    # No route is made: the default one takes the only next hop in view, or, without
    # --host-ns where pid 1's namespace cannot be read, the probe may stand in the host's.
    made = got["route-made"]
    assert made["outcome"] == "blocked" and not made.get("errno"), made
    why = ("takes the only next hop in view", "may stand in the host's")
    assert any(w in made["detail"] for w in why), made
    for row in [*ROWS, "egress-other-binary"]:
        assert got[row]["outcome"] == "blocked", got[row]
        assert got[row].get("errno") == "ETIMEDOUT", got[row]
        assert float(got[row]["elapsed_ms"]) >= 1900, got[row]  # its whole limit
    assert got["egress-policy-binary"]["outcome"] == "failed", got["egress-policy-binary"]
    # Seven rows of 2 s each, one after another, would take 14 s.
    assert wall < 4.5, f"{wall:.2f} s: the rows did not run at once"
