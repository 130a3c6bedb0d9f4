"""The canary's stand-ins elsewhere (`[canary] elsewhere`): an address of each range
picked per run, never one harness must not use, and the host's own gateways and
resolvers found on the host. The host-side tests make their own namespaces, veth
links and canaries (real `ip`, real rules), and remove them; no packet leaves the
machine: every address tried is the test's canary's."""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from harness.hostside.canary_setup import HOST_STAND_INS, start_canary, stop_canary
from harness.hostside.elsewhere import NEVER, pick, stand_ins
from harness.matrix.models import DEFAULT_ELSEWHERE, Canary
from harness.probe.build import build_probe
from harness.transport.local import LocalTransport
from tests.lab import require_tool


def test_a_pick_lies_in_its_range_and_never_where_harness_must_not_aim() -> None:
    """Each default range, many times: inside it, outside the canary's own ranges, no
    documentation or metadata address, no IPv4 address ending in .0 or a range's
    broadcast address."""
    canary = Canary(range4="10.251.0.0/16")
    for text in DEFAULT_ELSEWHERE:
        net = ipaddress.ip_network(text)
        for _ in range(300):
            address = pick(net, canary)
            assert address is not None and address in net
            assert address not in (canary.range4 if address.version == 4 else canary.range6)
            assert not any(address in n for n in NEVER if n.version == address.version)
            if address.version == 4:
                assert int(address) & 255 and address != net.broadcast_address


def test_a_wide_range_stands_for_the_internet_and_gives_a_global_address() -> None:
    canary = Canary()
    for text in ("0.0.0.0/0", "2000::/3"):
        picks = {pick(ipaddress.ip_network(text), canary) for _ in range(200)}
        assert None not in picks and len(picks) > 150
        assert all(a is not None and a.is_global for a in picks), picks


def test_an_address_given_alone_is_taken_as_it_is_unless_harness_may_not_aim_there() -> None:
    canary = Canary()
    assert str(pick(ipaddress.ip_network("198.18.7.9/32"), canary)) == "198.18.7.9"
    assert pick(ipaddress.ip_network("192.0.2.7/32"), canary) is None  # documentation
    assert pick(ipaddress.ip_network("10.251.3.4/32"), canary) is None  # the canary's own


def test_the_stand_ins_are_split_by_family_and_the_words_left_to_the_host() -> None:
    canary = Canary(elsewhere=["198.18.0.0/15", "gateway", "2001:2::/48", "resolvers"])
    four, six, words = stand_ins(canary)
    assert len(four) == 1 and ipaddress.ip_address(four[0]) in ipaddress.ip_network("198.18.0.0/15")
    assert len(six) == 1 and ipaddress.ip_address(six[0]) in ipaddress.ip_network("2001:2::/48")
    assert words == ["gateway", "resolvers"]
    assert stand_ins(Canary(elsewhere=[])) == ([], [], [])


@pytest.fixture
def namespace() -> Iterator[str]:
    """A network namespace of the test's own, with a veth, default routes and a
    resolv.conf of its own (`ip netns exec` binds /etc/netns/NAME/resolv.conf)."""
    require_tool("ip")
    name = f"harness-test-gw-{os.getpid()}"
    conf = Path("/etc/netns") / name
    made_parent = not conf.parent.exists()
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        batch = [
            "link add d0 type veth peer name d1", "addr add 198.18.5.2/24 dev d0",
            "addr add 2001:2::2/64 dev d0 nodad", "link set d0 up",
            "route add default via 198.18.5.1", "route add default via 2001:2::1",
        ]  # fmt: skip
        subprocess.run(["ip", "-n", name, "-batch", "-"], input="\n".join(batch), text=True,
                       check=True)  # fmt: skip
        conf.mkdir(parents=True)
        (conf / "resolv.conf").write_text(
            "# a comment\nnameserver 198.18.5.53\nnameserver\t127.0.0.53\n"
            "  nameserver 2001:2::53\nnameserver fe80::1%d0\nsearch example\n"
        )
        yield name
    finally:
        (conf / "resolv.conf").unlink(missing_ok=True)
        if conf.exists():
            conf.rmdir()
        if made_parent and conf.parent.exists() and not any(conf.parent.iterdir()):
            conf.parent.rmdir()
        subprocess.run(["ip", "netns", "del", name], check=False)


def _host_own(namespace: str, words: str) -> list[str]:
    done = subprocess.run(
        ["ip", "netns", "exec", namespace, "sh", "-c", f'{HOST_STAND_INS}\nhost_own "$1"', "-",
         words],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.split()


def test_the_host_names_its_gateways_and_resolvers_where_asked(namespace: str) -> None:
    """Its default gateways of both families, and every resolver its resolv.conf names
    (the canary's script leaves out loopback and link-local ones); nothing unasked."""
    assert _host_own(namespace, "gateway") == ["198.18.5.1", "2001:2::1"]
    assert _host_own(namespace, "resolvers") == [
        "198.18.5.53",
        "127.0.0.53",
        "2001:2::53",
        "fe80::1",
    ]
    assert _host_own(namespace, "") == []


def _rules() -> str:
    return "".join(
        subprocess.run(["ip", f, "rule", "show"], capture_output=True, text=True).stdout
        for f in ("-4", "-6")
    )


def test_the_canary_answers_at_its_stand_ins_and_takes_its_rules_away(tmp_path: Path) -> None:
    """A real netns canary with three stand-ins and one the host holds itself (on a veth
    of the test's): the held one is left out; at each other one a TCP connect on
    the high port from the host's namespace reaches the canary (the rule sends that port
    alone there); what the canary sends beyond the host's own links is dropped; after the
    canary stops, no rule of its is left."""
    require_tool("ip")
    held = f"hsi{os.getpid() % 100000}"  # a veth pair of the test's: no dummy module here
    subprocess.run(["ip", "link", "add", held, "type", "veth", "peer", "name", f"{held}p"],
                   check=True)  # fmt: skip
    try:
        subprocess.run(["ip", "addr", "add", "198.19.77.1/32", "dev", held], check=True)
        canary = Canary(
            elsewhere=["198.19.77.1/32", "198.18.0.0/15", "172.16.0.0/12", "2001:2::/48"],
            metadata=False,
        )
        port = 40000 + secrets.randbelow(20000)

        async def main() -> None:
            c = await start_canary(
                LocalTransport(), probe=str(build_probe().path), workdir=str(tmp_path),
                canary=canary, run_id=secrets.token_hex(4), host_index=0, nonce="n0nce",
                high_port=port,
            )  # fmt: skip
            try:
                assert c.error is None, c.error
                taken = c.stand_ins()
                assert len(taken) == 3 and "198.19.77.1" not in taken, c.subnet
                assert {"elsewhere", "elsewhere6", "web", "web6"} <= set(c.abilities())
                args = c.probe_args()
                assert args[args.index("--elsewhere4") + 1] == c.subnet["else4"]
                assert set(taken) <= set(c.addresses())
                for address in taken:  # picked from ranges: the high port, 443 and 80
                    for at in (port, 443, 80):
                        assert f"to {address} dport {at} lookup" in _rules()
                        with socket.create_connection((address, at), timeout=5):
                            pass  # the canary's listener there accepted
                # Nothing it sends leaves the host: the host's route for it, asked of the
                # kernel (no packet sent), is none beyond the host's own links.
                for away in ("198.51.100.7", "10.251.0.9"):
                    asked = ["ip", "route", "get", away, "from", c.address, "iif", c.host_veth]
                    got = subprocess.run(asked, capture_output=True, text=True)
                    assert got.returncode != 0 and "No route to host" in got.stderr, got
            finally:
                await stop_canary(LocalTransport(), c)
            assert f"dport {port} lookup" not in _rules()
            assert f"iif {c.host_veth}" not in _rules()

        anyio.run(main)
    finally:
        subprocess.run(["ip", "link", "del", held], check=False)
