"""Egress confinement: outbound traffic to a denied destination must not arrive."""

from __future__ import annotations

from harness.scenarios.base import Check, Scenario

EGRESS = Scenario(
    name="egress-confinement",
    probe_name="egress",
    summary="TCP by denied name and by raw IP, DNS to an alternate resolver, its DoH port",
    property="egress_confinement",
    checks=(
        Check("tcp-denied-name", "resolve a denied name via the designated resolver, connect"),
        Check("tcp-raw-ip", "connect to the canary's literal IP; no DNS involved"),
        Check("dns-alt-udp", "hand-built UDP query to a resolver other than the designated one"),
        Check("dns-alt-tcp", "the same query over TCP"),
        Check("doh-port", "TCP connect to the alternate resolver's port 443"),
    ),
)
