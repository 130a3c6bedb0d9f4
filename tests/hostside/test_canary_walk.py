"""The canary's subnets are picked per run from its configured ranges (issue 27): the
shell's arithmetic gives the range's own /30s and /64s, a walk visits every one, and
what the walk skips (a live lease, an address some interface holds) is never handed
out. Run against a stand-in `ip` that makes nothing: no namespace, no address."""

from __future__ import annotations

import ipaddress
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.hostside import canary_setup as canary_module
from harness.hostside.canary_setup import NETNS_UP, subnet_walk
from harness.matrix.models import Canary

# `ip` as NETNS_UP calls it: addresses listed in $HELD are "held" by an interface,
# namespaces listed in $LIVE have a process in them; everything else does nothing.
FAKE_IP = r"""#!/bin/sh
echo "$*" >> "$CALLS"
case "$*" in
  "netns pids "*) grep -qxF -- "$3" "$LIVE" && echo 1; exit 0 ;;
  "-o addr show to "*) grep -qxF -- "$5" "$HELD" && echo "held $5"; exit 0 ;;
  "-4 route show default") echo "default via 198.18.9.1 dev eth9 proto static"; exit 0 ;;
  -batch*|"-n "*" -batch -") cat >> "$CALLS" ;;
esac
exit 0
"""


def _fake_ip(tmp: Path) -> Path:
    """A folder with the stand-in `ip`, nothing held and no namespace alive."""
    folder = tmp / "bin"
    folder.mkdir()
    (folder / "ip").write_text(FAKE_IP)
    (folder / "ip").chmod(0o755)
    (tmp / "held").write_text("")
    (tmp / "live").write_text("")
    return folder


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    return _fake_ip(tmp_path)


def _env(tmp: Path, bin_dir: Path) -> dict[str, str]:
    return {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HELD": str(tmp / "held"),
        "LIVE": str(tmp / "live"),
        "CALLS": str(tmp / "calls"),
    }


def _up(
    tmp: Path,
    bin_dir: Path,
    walk: list[str],
    ns: str = "harness-t-0",
    meta: str = "",
    elsewhere: tuple[str, str, str] = ("", "", ""),
) -> dict[str, str]:
    """Run NETNS_UP with `walk` (its $6-$16), high port 40000 and the metadata
    addresses `meta` ($17, $18), the stand-ins elsewhere `elsewhere` ($19-$21); the
    subnet line it printed."""
    leases = tmp / "leases"
    argv = ["sh", "-c", NETNS_UP, "up", ns, "hv", "cv", str(tmp / "log"), str(leases), *walk]
    argv += ["40000", meta, *elsewhere]
    done = subprocess.run(
        [*argv, "true"], capture_output=True, text=True, env=_env(tmp, bin_dir), timeout=60
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("subnet="))
    return dict(f.split("=", 1) for f in line.split())


def _fixed(canary: Canary, i4: int, i6: int, step4: int = 1, step6: int = 1) -> list[str]:
    """subnet_walk with the walk's start and step chosen here."""
    walk = subnet_walk(canary)
    walk[3:5] = [str(i4), str(step4)]
    walk[8:10] = [str(i6), str(step6)]
    return walk


ranges4 = st.builds(
    lambda block, plen, offset: ipaddress.IPv4Network(
        (int(block.network_address) + offset % block.num_addresses, max(plen, block.prefixlen)),
        strict=False,
    ),
    st.sampled_from(
        [ipaddress.IPv4Network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")]
    ),
    st.integers(min_value=8, max_value=22),
    st.integers(min_value=0, max_value=(1 << 24) - 1),
)
ranges6 = st.builds(
    lambda top, plen: ipaddress.IPv6Network(((0xFC << 120) | top << 64, plen), strict=False),
    st.integers(min_value=0, max_value=(1 << 56) - 1),
    st.integers(min_value=7, max_value=56),
)


@given(r4=ranges4, r6=ranges6, data=st.data())
def test_the_shell_picks_the_ranges_own_subnets(
    r4: ipaddress.IPv4Network,
    r6: ipaddress.IPv6Network,
    data: st.DataObject,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Subnet i of the walk is the range's i-th /30 (and /64): the same as Python's
    `ipaddress` says, wherever the range sits and however wide it is."""
    tmp = tmp_path_factory.mktemp("walk")
    folder = _fake_ip(tmp)
    canary = Canary(range4=r4, range6=r6)
    i4 = data.draw(st.integers(min_value=0, max_value=r4.num_addresses // 4 - 1))
    i6 = data.draw(st.integers(min_value=0, max_value=(1 << (64 - r6.prefixlen)) - 1))
    got = _up(tmp, folder, _fixed(canary, i4, i6))
    net4 = ipaddress.IPv4Network((int(r4.network_address) + 4 * i4, 30))
    net6 = ipaddress.IPv6Network((int(r6.network_address) + (i6 << 64), 64))
    assert got["subnet"] == str(net4)
    assert ipaddress.IPv6Network(got["subnet6"]) == net6
    assert got["host4"] == str(net4.network_address + 1)
    assert got["addr4"] == str(net4.network_address + 2)
    assert ipaddress.IPv6Address(got["addr6"]) == net6.network_address + 2
    assert (tmp / "leases" / str(net4.network_address)).read_text() == "harness-t-0\n"


def test_a_walk_skips_live_leases_and_held_addresses(tmp_path: Path, bin_dir: Path) -> None:
    """From the same start: a subnet whose lease names a live namespace, or whose
    host address an interface holds, is passed over; a dead run's lease is not."""
    canary = Canary(range4="192.168.0.0/22", range6="fd00:1:2:300::/56")
    first = _up(tmp_path, bin_dir, _fixed(canary, 5, 9))
    assert (first["subnet"], first["subnet6"]) == ("192.168.0.20/30", "fd00:1:2:309::/64")
    # Its namespace is alive: the same walk moves on, each family on its own.
    (tmp_path / "live").write_text("harness-t-0\n")
    second = _up(tmp_path, bin_dir, _fixed(canary, 5, 9), ns="harness-t-1")
    assert (second["subnet"], second["subnet6"]) == ("192.168.0.24/30", "fd00:1:2:30a::/64")
    # Someone else's interface holds the next ones' host addresses.
    (tmp_path / "live").write_text("harness-t-0\nharness-t-1\n")
    (tmp_path / "held").write_text("192.168.0.29/30\nfd00:1:2:30b::/64\n")
    third = _up(tmp_path, bin_dir, _fixed(canary, 5, 9), ns="harness-t-2")
    assert (third["subnet"], third["subnet6"]) == ("192.168.0.32/30", "fd00:1:2:30c::/64")
    # The first run died: its subnets are free again.
    (tmp_path / "live").write_text("harness-t-1\nharness-t-2\n")
    fourth = _up(tmp_path, bin_dir, _fixed(canary, 5, 9), ns="harness-t-3")
    assert (fourth["subnet"], fourth["subnet6"]) == (first["subnet"], first["subnet6"])
    assert (tmp_path / "leases" / "192.168.0.20").read_text() == "harness-t-3\n"


def test_a_full_range_is_an_error_not_a_shared_subnet(tmp_path: Path, bin_dir: Path) -> None:
    """With every /30 of a range leased to a live namespace, the start fails."""
    canary = Canary(range4="10.9.0.0/22")
    (tmp_path / "leases").mkdir()
    for i in range(256):
        (tmp_path / "leases" / f"10.9.{i // 64}.{i % 64 * 4}").write_text("harness-live\n")
    (tmp_path / "live").write_text("harness-live\n")
    argv = ["sh", "-c", NETNS_UP, "up", "ns", "hv", "cv", "log", str(tmp_path / "leases")]
    argv += [*subnet_walk(canary), "40000", "", "", "", "", "true"]
    done = subprocess.run(argv, capture_output=True, text=True, env=_env(tmp_path, bin_dir))
    assert done.returncode == 1
    assert "no free canary subnet in the IPv4 range (tried 256)" in done.stderr


def test_the_walk_starts_anywhere_and_visits_every_subnet() -> None:
    """Start and step are random; an odd step over a power of two visits them all."""
    starts = {canary_module.walk(1 << 14)[0] for _ in range(50)}
    assert len(starts) > 40  # not the lowest free index
    for count in (256, 1 << 14):
        start, step = canary_module.walk(count)
        assert step % 2 == 1
        assert len({(start + k * step) % count for k in range(count)}) == count


def test_a_fixed_canary_address_walks_its_own_subnet_only() -> None:
    """`address` in netns mode: the walk is that one /30, the host at the address below."""
    walk = subnet_walk(Canary(address="10.251.7.2"))
    assert walk[:3] == ["10.251.7.2,10.251.7.1", str(int(ipaddress.IPv4Address("10.251.7.0"))), "1"]


def test_the_metadata_addresses_are_routed_to_the_canary_for_the_high_port_alone(
    tmp_path: Path, bin_dir: Path
) -> None:
    """With $18, the canary's namespace takes the metadata addresses on its lo, the
    lease's own table routes them to the canary, and the only rules that send traffic
    there match the run's high port (a real metadata service's port 80 is untouched);
    the subnet line names them for the probe."""
    fields = _up(tmp_path, bin_dir, subnet_walk(Canary()), meta="169.254.169.254,fd00:ec2::254")
    assert (fields["meta4"], fields["meta6"]) == ("169.254.169.254", "fd00:ec2::254")
    calls = (tmp_path / "calls").read_text().splitlines()
    assert "addr add 169.254.169.254/32 dev lo" in calls
    assert "addr add fd00:ec2::254/128 dev lo nodad" in calls
    rules = [c for c in calls if c.startswith(("rule add", "-6 rule add")) and " iif " not in c]
    assert len(rules) == 2 and all(" dport 40000 " in f"{r} " for r in rules), rules
    table = rules[0].rsplit(" ", 1)[1]
    assert f"route add 169.254.169.254/32 via {fields['addr4']} dev hv table {table}" in calls


def test_without_metadata_nothing_is_routed(tmp_path: Path, bin_dir: Path) -> None:
    """$18 empty (`metadata = false`): no rule, no route, no metadata in the line; only
    the rules that keep what the canary's veth sends on the host (both families)."""
    fields = _up(tmp_path, bin_dir, subnet_walk(Canary()))
    assert "meta4" not in fields
    rules = [c for c in (tmp_path / "calls").read_text().splitlines() if "rule" in c]
    assert rules == [
        f"{f}rule add prio {p} iif hv {then}"
        for f in ("-4 ", "-6 ")
        for p, then in (("91", "lookup main suppress_prefixlength 0"), ("92", "blackhole"))
    ], rules


def test_stand_ins_from_ranges_take_the_webs_ports_and_the_hosts_own_the_high_port_alone(
    tmp_path: Path, bin_dir: Path
) -> None:
    """A stand-in picked from a range gets a rule for the high port and one each for 443
    and 80 (the web's ports: a sandbox that lets out one alone is seen); the
    host's own gateway (the stand-in `ip` names 198.18.9.1) the high port alone, since its
    real services keep their ports; each is named in the line by its kind."""
    fields = _up(tmp_path, bin_dir, subnet_walk(Canary()), elsewhere=("198.18.4.4", "", "gateway"))
    assert (fields["else4"], fields["own4"]) == ("198.18.4.4", "198.18.9.1")
    rules = [c for c in (tmp_path / "calls").read_text().splitlines() if " prio 90 " in c]
    ports = {(r.split(" to ")[1].split()[0], r.split(" dport ")[1].split()[0]) for r in rules}
    assert ports == {
        ("198.18.4.4", "40000"),
        ("198.18.4.4", "443"),
        ("198.18.4.4", "80"),
        ("198.18.9.1", "40000"),
    }
