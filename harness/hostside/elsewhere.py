"""The canary's stand-ins elsewhere (`[canary] elsewhere`): an address of each range a
matrix names, picked at random per run and host, where the netns canary answers too on
the run's high port alone (`scripts/canary-up.sh` routes that port to it by a rule).

A sandbox that refuses harness's own ranges, or only the private ones, and lets the
rest out (the fleet's other networks, the internet) reaches one of them: the
`elsewhere4-*` and `elsewhere6-*` lines name which. The words `gateway` and
`resolvers` are the host's own (its default gateways, its resolv.conf's servers),
found by the script on the host.
"""

from __future__ import annotations

import ipaddress
import secrets
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

from harness.matrix.models import Canary

# Never picked: addresses no one should send to (documentation, this network) and the
# cloud metadata ones, which the canary takes anyway (`metadata`).
NEVER = tuple(
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32",
        "169.254.169.254/32", "fd00:ec2::254/128", "255.255.255.255/32",
    )
)  # fmt: skip
# A range this wide or wider stands for the internet: only a global address of it.
WIDE = {4: 7, 6: 3}
TRIES = 64

Network = IPv4Network | IPv6Network
Address = IPv4Address | IPv6Address


def _usable(address: Address, net: Network, canary: Canary) -> bool:
    if address.is_loopback or address.is_multicast or address.is_unspecified:
        return False
    if isinstance(address, IPv4Address) and (address.is_reserved or int(address) & 255 == 0):
        return False  # 240/4, and an address ending in .0 (a network's, to many filters)
    if net.num_addresses > 2 and address in (net.network_address, net.broadcast_address):
        return False
    if net.prefixlen <= WIDE[net.version] and not address.is_global:
        return False
    own = canary.range4 if address.version == 4 else canary.range6
    return address not in own and not any(
        address in never for never in NEVER if never.version == address.version
    )


def pick(net: Network, canary: Canary) -> Address | None:
    """A random address of `net` the canary may stand at, or None after `TRIES`."""
    for _ in range(TRIES):
        address = net.network_address + secrets.randbelow(net.num_addresses)
        if _usable(address, net, canary):
            return address
    return None


def stand_ins(canary: Canary) -> tuple[list[str], list[str], list[str]]:
    """This run's stand-ins on one host: IPv4 addresses, IPv6 addresses, and the
    words the host resolves itself (`gateway`, `resolvers`)."""
    found: dict[int, list[str]] = {4: [], 6: []}
    words: list[str] = []
    for where in canary.elsewhere:
        if isinstance(where, str):
            words.append(where)
        elif (address := pick(where, canary)) is not None and str(address) not in found[
            address.version
        ]:
            found[address.version].append(str(address))
    return found[4], found[6], words
