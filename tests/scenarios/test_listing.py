"""A check's metadata has one source, its scenario module: the listing, the CLI and
the docs are held to it."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from harness.cli import cli
from harness.scenarios import SCENARIOS, known_facts, listed, transport_of
from harness.scenarios.base import Rule, Transport
from harness.scenarios.listing import markdown, protocol_gaps, protocol_page, protocol_table

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_checks_page_is_generated_from_the_scenarios() -> None:
    """docs/checks.md is exactly what the scenario modules declare (regenerate it with
    `python -m harness.scenarios.listing > docs/checks.md`)."""
    assert (DOCS / "checks.md").read_text(encoding="utf-8") == markdown()


def test_the_protocol_pages_tables_are_generated_from_the_scenarios() -> None:
    """docs/probe-protocol.md's tables of what the probe does are the checks' `how` and
    the facts' `measured`, written by `python -m harness.scenarios.listing --protocol
    docs/probe-protocol.md`; every section a check names has its table there."""
    text = (DOCS / "probe-protocol.md").read_text(encoding="utf-8")
    assert text == protocol_page(text)
    for scenario in listed():
        sections = {c.section for c in scenario.checks if c.table_row}
        sections |= {"facts"} if scenario.measured else set()
        for section in sections:
            assert f"<!-- generated: {scenario.name} {section} -->" in text, scenario.name


def test_every_reported_check_and_fact_is_described_once() -> None:
    """Every check the probe reports has its `how`, every fact is measured by one key,
    and no key names something else."""
    assert protocol_gaps() == []


def test_a_protocol_gap_is_found() -> None:
    """A check with no description, a fact described twice and a key naming nothing
    are each reported (the test above would pass on a scenario list it cannot see)."""
    import dataclasses

    from harness import scenarios

    egress = SCENARIOS["egress-confinement"]
    checks = tuple(
        dataclasses.replace(c, how="") if c.id == "tcp-raw-ip" else c for c in egress.checks
    )
    mechanisms = SCENARIOS["mechanisms"]
    measured = {**mechanisms.measured, "landlock_abi, no_such_fact": "x"}
    saved = dict(scenarios.SCENARIOS)
    scenarios.SCENARIOS["egress-confinement"] = dataclasses.replace(egress, checks=checks)
    scenarios.SCENARIOS["mechanisms"] = dataclasses.replace(mechanisms, measured=measured)
    try:
        gaps = protocol_gaps()
    finally:
        scenarios.SCENARIOS.update(saved)
    assert "egress-confinement: tcp-raw-ip not described" in gaps
    assert "mechanisms: landlock_abi described twice" in gaps
    assert "mechanisms: 'no_such_fact' names no fact" in gaps
    assert len(gaps) == 3, gaps
    assert "| `tcp4-P`, `tcp6-P` (P = 22, 25, 53, 80, 443, 853, 8080, 8443, `high`) |" in (
        protocol_table(egress, "sweep")
    )
    assert "| `udp4-privport`, `udp6-privport` |" in protocol_table(egress, "sweep")


def test_the_cli_lists_every_check() -> None:
    """`harness scenarios --checks` names every check of every listed scenario."""
    result = CliRunner().invoke(cli, ["scenarios", "--checks"])
    assert result.exit_code == 0, result.output
    named = {line.split()[0] for line in result.output.splitlines() if line.startswith("  ")}
    for scenario in listed():
        assert {c.id for c in scenario.checks} <= named, scenario.name


def _family(check_id: str) -> str:
    """`tcp4-443` -> `tcp4-P`: how the protocol page names a sweep's line."""
    return re.sub(r"-(\d+|high)$", "-P", check_id)


def test_the_protocol_page_names_every_reported_check_and_no_other() -> None:
    """docs/probe-protocol.md describes each check the probe reports (a sweep's lines
    by family), and names no check that no scenario declares."""
    text = (DOCS / "probe-protocol.md").read_text(encoding="utf-8")
    first_cells = re.findall(r"^\| ([^|]+) \|", text, re.M)
    named = set(re.findall(r"`([A-Za-z0-9_-]+)`", " ".join(first_cells)))
    reported = {
        c.id: c for s in SCENARIOS.values() if not s.internal for c in s.checks if c.table_row
    }
    for check_id in reported:
        assert check_id in named or _family(check_id) in named, check_id
    known = set(reported) | {_family(i) for i in reported} | set(known_facts())
    outcomes = {"blocked", "escaped", "succeeded", "error", "timeout"}
    strays = {n for n in named if "-" in n or "_" in n} - known - outcomes
    assert not strays, strays


def test_every_transport_is_pinned() -> None:
    """The attempts matched to arrivals by TCP or UDP ports, member by member: a
    transport dropped or misspelt loses an escape that left no marker."""
    egress = SCENARIOS["egress-confinement"]
    tcp = {c.id for c in egress.checks if c.transport is Transport.TCP}
    udp = {c.id for c in egress.checks if c.transport is Transport.UDP}
    ports = ("22", "25", "53", "80", "443", "853", "8080", "8443", "high")
    hosts = {"host4-tcp", "host6-tcp", "meta4-tcp", "meta6-tcp", "elsewhere4-tcp", "elsewhere6-tcp"}
    hosts |= {"web4-tcp", "web6-tcp"}
    named = {"tcp-denied-name", "tcp-raw-ip", "dns-alt-tcp", "dns-own-tcp", "doh-port"}
    named |= {"egress-other-binary", "route-made", "firewall-opened"}
    fastopen = {
        f"tfo{v}-{way}" for v in "46" for way in ("sendto", "sendmsg", "sendmmsg", "connect")
    }
    rings = {f"uring{v}{kind}" for v in "46" for kind in ("", "-mptcp")}
    i386 = {f"i386-{kind}{v}" for v in "46" for kind in ("tcp", "tfo")}
    sports = {"tcp4-sport", "tcp6-sport"}
    assert tcp == named | {*i386, "mptcp4", "mptcp6", "tcp4-mapped", *fastopen, *rings, *sports} | {
        *hosts,
        *(f"tcp{v}-{p}" for v in "46" for p in ports),
    }
    calls = ("sendto", "sendmsg", "sendmmsg", "write", "writev", "pwritev2", "sendfile", "splice")
    sends = {f"send{v}-{call}" for v in "46" for call in calls}
    hosts = {"host4-udp", "host6-udp", "meta4-udp", "meta6-udp", "elsewhere4-udp", "elsewhere6-udp"}
    hosts |= {"web4-udp", "web6-udp"}
    ways = {"udp4-privport", "udp6-privport", "uring4-udp", "uring6-udp", "udp4-mapped"}
    ways |= {"i386-udp4", "i386-udp6"}
    assert udp == {"dns-alt-udp", "dns-own", *ways, *sends, *hosts} | {
        f"udp{v}-{p}" for v in "46" for p in ("53", "123", "443", "high")
    }
    marker_only = {c.id for c in egress.checks if c.transport is None}
    others = {f"{p}{v}" for p in ("udplite", "rawip") for v in "46"}
    ipc = {"ipc-sysv-msg", "ipc-sysv-shm", "ipc-posix-mq"}
    assert marker_only == {
        "icmp4", "icmp6", "unix-proxy", "tcp-proxy", "udp-relay", "unix-abstract",
            "unix-abstract-dgram",
        "unix-abstract-seqpacket", "unix-host",
        "held-fds",
        "packet4",
        "packet6",
        "egress-policy-binary",
        *others, *ipc,
    }  # fmt: skip
    assert transport_of("egress-confinement", "tcp4-22") is Transport.TCP
    assert transport_of("filesystem-confinement", "tcp4-22") is None  # another scenario's line


def test_only_arrival_checks_declare_a_transport() -> None:
    """A transport means "match canary arrivals by port"; only the canary's rule reads it."""
    for scenario in SCENARIOS.values():
        for check in scenario.checks:
            if check.transport is not None:
                assert check.rule is Rule.ARRIVAL, check.id


def test_the_judging_page_names_no_undeclared_check() -> None:
    """docs/judging.md's scenario table names only checks the scenario modules declare
    (a sweep's lines by family, `tcp4-*`)."""
    text = (DOCS / "judging.md").read_text(encoding="utf-8")
    section = text.split("## Scenarios and checks", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert len(rows) == len(listed())
    declared = {c.id for s in SCENARIOS.values() for c in s.checks}
    families = {re.sub(r"-(\d+|high)$", "-*", i) for i in declared}
    named = set(
        re.findall(r"`((?:tcp|udp|dns|doh|icmp|unix|fs|priv|attr)[a-z0-9*-]*)`", " ".join(rows))
    )
    named -= set(SCENARIOS)  # the first column names the scenarios themselves
    assert named, "the table names no check"
    assert named <= declared | families, named - declared - families
