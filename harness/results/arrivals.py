"""Which canary arrivals belong to which cell and attempt: the one place that decides.

The canary logs four kinds of arrival: a TCP line (`tcp`), a UDP datagram's line
(`udp`), a DNS query (`dns`) and a packet seen by its capture on any port and
protocol (`packet`, with the text around a harness marker in its payload). An
arrival is an attempt's when it carries the attempt's marker (the cell's tag next
to the check id, in any letter case, in a line, a query name or a payload), when a
TCP line was cut short but is the start of the attempt's line, or when its source
port and destination port are those the probe reported for the attempt. Any of
these proves a crossing.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from typing import Any

from harness.results.records import ProbeCheck

_SPLIT = re.compile(r"[^a-z0-9-]+")
_LINE_KINDS = ("tcp", "udp")


def _text(event: Mapping[str, Any]) -> str:
    return " ".join(str(event.get(k) or "") for k in ("line", "qname", "mark")).lower()


def _tokens(event: Mapping[str, Any]) -> list[str]:
    return [t for t in _SPLIT.split(_text(event)) if t]


def _port(address: object) -> int | None:
    tail = str(address or "").rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _ports(event: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """(source, destination) port of an arrival."""
    if event.get("event") == "packet":
        sport, dport = event.get("sport"), event.get("dport")
        return (
            sport if isinstance(sport, int) and sport >= 0 else None,
            dport if isinstance(dport, int) and dport >= 0 else None,
        )
    return _port(event.get("peer")), _port(event.get("listen"))


def _attempt_ports(check: ProbeCheck) -> tuple[int | None, int | None]:
    src = check.evidence.get("src_port")
    dst = _port(str(check.evidence.get("dst") or "").split(" ", 1)[0])
    return (src if isinstance(src, int) and src > 0 else None), dst


def _by_marker(event: Mapping[str, Any], tag: str, check_id: str) -> bool:
    tokens = _tokens(event)
    tag, check_id = tag.lower(), check_id.lower()
    for a, b in itertools.pairwise(tokens):
        if (a, b) in ((tag, check_id), (check_id, tag)):
            return True
    if event.get("event") == "tcp":  # a connection cut mid-line: its start must match
        logged = str(event.get("line") or "").lower()
        return len(logged) > len("HARNESS ") and f"harness {tag} {check_id}".startswith(logged)
    return False


def _by_port(event: Mapping[str, Any], check: ProbeCheck) -> bool:
    src, dst = _attempt_ports(check)
    if src is None:
        return False
    got_src, got_dst = _ports(event)
    if got_src != src:
        return False
    # An ICMP echo has no destination port; elsewhere the destination must agree too.
    return dst in (None, 0) or got_dst in (None, dst)


def describe(event: Mapping[str, Any]) -> str:
    """One short phrase for an arrival, for a check's detail."""
    kind = event.get("event")
    if kind == "dns":
        return f"dns/{event.get('proto')} query from {event.get('peer')}"
    if kind == "packet":
        return (
            f"{event.get('proto')} packet from {event.get('src')} to {event.get('dst')}"
            f" port {event.get('dport')}"
        )
    return f"{kind} from {event.get('peer')} to {event.get('listen')}"


def of_attempt(events: Iterable[Mapping[str, Any]], tag: str, check: ProbeCheck) -> list[str]:
    """The arrivals one attempt caused, each described."""
    return [describe(e) for e in events if _by_marker(e, tag, check.id) or _by_port(e, check)]


def of_cell(
    events: Iterable[dict[str, Any]], tag: str, checks: Iterable[ProbeCheck]
) -> list[dict[str, Any]]:
    """The arrivals a cell caused: its tag anywhere in the marker text, or the
    ports one of its attempts reported."""
    tag = tag.lower()
    attempts = [c for c in checks if c.scenario == "egress"]
    return [
        e
        for e in events
        if tag in _tokens(e) or tag in _text(e) or any(_by_port(e, c) for c in attempts)
    ]
