"""route-made steps around the sandbox's own policy routing, for real, over IPv4 and
over IPv6: a network namespace of the test's own (root in it: CAP_NET_ADMIN) whose
rules prohibit everything ahead of the main table, a veth to a second namespace the
test made where the canary listens. The probe puts a rule of its own ahead of theirs,
gets the nonce back by the route in place, and leaves the rules as it found them.
Addresses of the test's own namespaces only; both are removed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.lab import require_tool
from tests.probe.egress_args import ALONE, canary_script, egress_argv

CANARY6 = "fd5e:7a78::2"
SCRIPT = """set -e
ns=harness-rules-test-$$ canary=
trap 'kill $canary 2>/dev/null; ip netns del "$ns" 2>/dev/null' EXIT
ip link set lo up
ip netns add "$ns"
ip link add v0 type veth peer name v1 netns "$ns"
ip $FAMILY addr add $NEAR dev v0 nodad
ip link set v0 up
ip -n "$ns" $FAMILY addr add $FAR dev v1 nodad
ip -n "$ns" link set v1 up
ip -n "$ns" link set lo up
ip netns exec "$ns" "$PY" -c "$CANARY" > "$OUT/canary.log" 2>&1 &
canary=$!
while ! grep -q up "$OUT/canary.log"; do sleep 0.05; done
ip $FAMILY rule add $RULE
ip $FAMILY rule > "$OUT/before"
set +e
"$@"
ip $FAMILY rule > "$OUT/after"
"""


def _run(tmp_path: Path, rule: str, *, ipv6: bool = False) -> dict[str, dict[str, object]]:
    """The egress scenario in a namespace whose rules (`ip rule add RULE`, or `ip -6`)
    stand ahead of the main table; the canary over IPv4 alone, or IPv6 alone."""
    require_tool("unshare")
    require_tool("ip")
    if ipv6:  # no IPv4 address at all: the IPv4 half has nothing to try
        args = egress_argv("10.78.0.2", 9, canary6=CANARY6)
        addrs = {"FAMILY": "-6", "NEAR": "fd5e:7a78::1/64", "FAR": f"{CANARY6}/64"}
    else:
        args = egress_argv("10.78.0.2", 9)
        addrs = {"FAMILY": "-4", "NEAR": "10.78.0.1/30", "FAR": "10.78.0.2/30"}
    canary = canary_script(CANARY6 if ipv6 else "10.78.0.2")
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PY": sys.executable, "CANARY": canary}
    env |= {"OUT": str(tmp_path), "RULE": rule, **addrs}
    done = subprocess.run(
        [*ALONE, "-n", "sh", "-c", SCRIPT, "sh", *args],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    got = {x["id"]: x for x in lines if x.get("type") == "check"}
    assert "route-made" in got, done.stdout[-2000:] + done.stderr[-2000:]
    return got


def test_rules_ahead_of_the_main_table_are_stepped_around_and_left_as_they_were(
    tmp_path: Path,
) -> None:
    got = _run(tmp_path, "prohibit pref 100")
    assert got["tcp-raw-ip"]["outcome"] == "blocked", got["tcp-raw-ip"]  # the rule holds
    made = got["route-made"]
    assert made["outcome"] == "escaped", json.dumps(made)
    assert "put a rule of its own ahead of the sandbox's" in str(made["detail"]), made
    evidence = {"hops": 1, "route_in_place": 1, "rules_ahead": 1, "rule_pref": 1}
    assert made["evidence"] == evidence, made
    before, after = (tmp_path / "before").read_text(), (tmp_path / "after").read_text()
    assert "prohibit" in before and after == before


def test_a_rule_at_priority_0_is_an_error_not_blocked(tmp_path: Path) -> None:
    """None can precede a rule at priority 0: with the capability to make rules, the
    line is an error (no proof), never blocked."""
    got = _run(tmp_path, "prohibit pref 0")
    made = got["route-made"]
    assert made["outcome"] == "error", json.dumps(made)
    assert "one at priority 0, which no rule of the workload's can precede" in str(made["detail"])
    before, after = (tmp_path / "before").read_text(), (tmp_path / "after").read_text()
    assert after == before


def test_ipv6_rules_ahead_of_the_main_table_are_stepped_around(tmp_path: Path) -> None:
    """The same over IPv6 alone: an `ip -6 rule prohibit` ahead of the main table, the
    canary on the link's prefix. Stepped around by an IPv6 rule of the probe's own
    (before it, route-made's IPv6 half added routes in the main table the rule still
    overrode: blocked, a false enforced)."""
    got = _run(tmp_path, "prohibit pref 100", ipv6=True)
    made = got["route-made"]
    assert made["outcome"] == "escaped", json.dumps(made)
    assert "ahead of the sandbox's IPv6 rules" in str(made["detail"]), made
    evidence = made["evidence"]
    assert isinstance(evidence, dict)
    assert (evidence["rules_ahead6"], evidence["rule_pref6"]) == (1, 1), evidence
    before, after = (tmp_path / "before").read_text(), (tmp_path / "after").read_text()
    assert "prohibit" in before and after == before
