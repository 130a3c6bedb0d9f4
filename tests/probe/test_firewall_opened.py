"""firewall-opened run for real: a network namespace of the test's own whose nftables
firewall drops the canary, with the probe holding CAP_NET_ADMIN over it (root in a new
namespace). The probe opens the firewall for the canary alone, gets the nonce back,
and leaves the ruleset as it found it. Loopback addresses only: nothing leaves."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.lab import require_tool
from tests.probe.egress_args import ALONE, canary_script, egress_argv

# 10.77.0.0/24 on the namespace's own lo; the canary answers on 10.77.0.9:9, and the
# firewall drops everything to it (and, on the way in, everything from it).
RULES = """table inet sandbox {
  chain out {
    type filter hook output priority 0; policy accept;
    ip daddr 10.77.0.9 drop
  }
  chain in {
    type filter hook input priority 0; policy accept;
    ip saddr 10.77.0.9 drop
  }
}
table ip other {
  chain post {
    type filter hook postrouting priority 10; policy drop;
    oif "lo" ip daddr != 10.77.0.9 accept
  }
}
"""
CANARY = canary_script("10.77.0.9")
SCRIPT = """set -e
canary=
trap 'kill $canary 2>/dev/null' EXIT
ip link set lo up
ip addr add 10.77.0.1/24 dev lo
ip addr add 10.77.0.9/32 dev lo
"$PY" -c "$CANARY" > "$OUT/canary.log" 2>&1 &
canary=$!
while ! grep -q up "$OUT/canary.log"; do sleep 0.05; done
nft -f "$OUT/rules.nft"
nft list ruleset > "$OUT/before"
[ -z "$LEGACY" ] || $LEGACY
set +e
"$@"
nft list ruleset > "$OUT/after"
"""


def _run(tmp_path: Path, rules: str, legacy: str = "") -> dict[str, dict[str, object]]:
    """The egress scenario in a namespace of its own behind `rules` (nft) and `legacy`
    (an iptables-legacy command line, if any): its check lines by id."""
    require_tool("unshare")
    require_tool("ip")
    require_tool("nft")
    (tmp_path / "rules.nft").write_text(rules)
    args = egress_argv("10.77.0.9", 9)
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PY": sys.executable, "CANARY": CANARY}
    env |= {"OUT": str(tmp_path), "LEGACY": legacy}
    done = subprocess.run(
        [*ALONE, "-n", "sh", "-c", SCRIPT, "sh", *args],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    got = {x["id"]: x for x in lines if x.get("type") == "check"}
    assert "firewall-opened" in got, done.stdout[-2000:] + done.stderr[-2000:]
    return got


def test_a_firewall_of_its_own_is_opened_and_closed_again(tmp_path: Path) -> None:
    got = _run(tmp_path, RULES)
    # The firewall holds for the sweep: the raw-IP attempt to the canary is dropped.
    assert got["tcp-raw-ip"]["outcome"] == "blocked", got["tcp-raw-ip"]
    opened = got["firewall-opened"]
    assert opened["outcome"] == "escaped", json.dumps(opened)
    assert "at the head of 3 base chains, and the nonce came back" in opened["detail"], opened
    # inet's two chains get a rule for each family (--canary6 is given), ip's one.
    assert opened["evidence"] == {"chains": 3, "owned_chains": 0, "rules_taken_back": 5}, opened
    # Every rule it put in is gone: the ruleset is the one it found.
    before, after = (tmp_path / "before").read_text(), (tmp_path / "after").read_text()
    assert "10.77.0.9 drop" in before and after == before


def test_an_iptables_legacy_firewall_is_an_error_not_blocked(tmp_path: Path) -> None:
    """A legacy table that may drop is read, not opened: the line is an error (the
    verdict inconclusive), never blocked; one that cannot drop changes nothing."""
    require_tool("iptables-legacy")
    got = _run(tmp_path, "", legacy="iptables-legacy -P OUTPUT DROP")
    opened = got["firewall-opened"]
    assert opened["outcome"] == "error", json.dumps(opened)
    assert "iptables-legacy tables that may drop" in str(opened["detail"]), opened
    assert str(opened["detail"]).endswith(": filter"), opened
    got = _run(tmp_path, "", legacy="iptables-legacy -L -n")  # the table, nothing in it
    assert got["firewall-opened"]["outcome"] == "blocked", got["firewall-opened"]
