"""The own-resolver attempt (dns-own) run for real in a namespace of the test's own,
with the sandbox's /etc/resolv.conf naming a resolver harness may not query."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from harness.probe.build import build_probe
from tests.lab import require_tool
from tests.probe.egress_args import TAG, egress_argv, far_listener, run_across, unhurried

# Loopback-only addresses; 10.77.0.0/24 lives on the namespace's own lo, so a route
# exists and no packet can leave this machine.
SCRIPT = """set -e
ip link set lo up
ip addr add 10.77.0.1/24 dev lo
mount --bind "$1" /etc/resolv.conf
shift
exec "$@"
"""


def test_a_resolver_outside_the_ranges_says_how_to_fix_it(tmp_path: Path) -> None:
    """A sandbox that binds the host's /etc sees the host's nameserver, outside
    `resolver_ranges`: the attempt is not tried, and its detail says to bind a
    resolv.conf (naming the canary's resolver) into the sandbox instead."""
    require_tool("unshare")
    require_tool("ip")
    conf = tmp_path / "resolv.conf"
    conf.write_text("nameserver 10.77.0.53\n")
    probe = str(build_probe().path)
    args = [
        probe, "run", "--tag", TAG, "--nonce", "n1", "--resolver-ranges", "127.0.0.0/8",
        "--denied-name", "denied.example", "--resolver", "127.0.0.1:53",
        "--canary-tcp", "127.0.0.1:9", "--alt-dns", "127.0.0.1:5353",
        "--doh", "127.0.0.1:443", "--canary4", "127.0.0.1", "--canary6", "::1",
        "--high-port", "40000", "--allowed-tcp", "127.0.0.1:1",
        "--check-timeout-ms", "2000", "egress-confinement",
    ]  # fmt: skip
    done = subprocess.run(
        ["unshare", "-rnm", "sh", "-c", SCRIPT, "sh", str(conf), *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    own = next(x for x in lines if x.get("id") == "dns-own")
    assert own["outcome"] == "error", own
    assert "10.77.0.53:53 (own resolver) is outside the resolver ranges" in own["detail"]
    assert "bind a resolv.conf" in own["detail"], own["detail"]


def test_a_link_local_nameserver_with_its_scope_is_asked(tmp_path: Path) -> None:
    """resolv.conf as router-advertised DNS writes it (`nameserver fe80::1%v0`), the
    link carrying link-local IPv6 alone to a second namespace the test makes, where a
    forwarding resolver answers. Before, the scope made the line unparsable and the
    probe asked libc's default (127.0.0.1) in silence: a false enforced. Outside
    --resolver-ranges, it is asked: link-local goes no further than the far end of
    the sandbox's own link."""
    require_tool("unshare")
    require_tool("ip")
    conf = tmp_path / "resolv.conf"
    conf.write_text("nameserver fe80::1%v0\n")
    serve = "tests.probe.test_udp_listeners:stand_in_resolver"
    code = far_listener("SOCK_DGRAM", "fe80::1%v1", 53, serve)
    argv = unhurried(egress_argv("127.0.0.1", 9))
    done = run_across(code, "fe80::2/64", "fe80::1/64", argv, resolv=str(conf))
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    own = next((x for x in lines if x.get("id") == "dns-own"), None)
    assert own, done.stdout[-2000:] + done.stderr[-2000:]
    assert own["outcome"] == "escaped", own
    assert "TXT answer from [fe80::1%v0]:53 (own resolver) carries the nonce" in own["detail"], own


def test_a_nameserver_that_cannot_be_parsed_is_an_error(tmp_path: Path) -> None:
    """A nameserver whose scope names no link here: dns-own is an error that names it,
    never libc's default asked in its place."""
    require_tool("unshare")
    conf = tmp_path / "resolv.conf"
    conf.write_text("nameserver fe80::1%nosuchlink0\n")
    argv = egress_argv("127.0.0.1", 9)
    script = 'ip link set lo up; mount --bind "$1" /etc/resolv.conf; shift; exec "$@"'
    done = subprocess.run(
        ["unshare", "-rnm", "sh", "-c", script, "sh", str(conf), *argv],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    own = next((x for x in lines if x.get("id") == "dns-own"), None)
    assert own, done.stdout[-2000:] + done.stderr[-2000:]
    assert own["outcome"] == "error", own
    assert "cannot parse resolv.conf's nameserver fe80::1%nosuchlink0" in own["detail"], own
    assert "libc default" not in own["detail"], own
