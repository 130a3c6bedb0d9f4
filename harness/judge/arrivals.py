"""Which canary arrivals belong to which cell and attempt: the one place that decides.

The canary logs six kinds of arrival: a TCP line (`tcp`), a UDP datagram's line
(`udp`), a line on its abstract unix listener (`unix`), a message or shared memory
line in the host's IPC namespace (`ipc`), a DNS query (`dns`) and a packet seen by
its capture on any port and protocol (`packet`, with the text around a harness
marker in its payload). An
arrival is an attempt's when it carries the attempt's marker (the cell's tag next
to the check id, in any letter case, in a line, anywhere in the bytes a connection
or datagram carried, a query name or a payload); when a
TCP line was cut short (the canary says so) but is the start of the attempt's
line; or when its source port, destination port and protocol are those the probe
reported for the attempt (unless a marked packet of the same flow names another
cell). Any of these proves a crossing. An arrival that no attempt of any cell
explains (`unexplained`) proves a crossing too, by an unknown way from an unknown
cell: it counts against every cell's `enforced`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from typing import Any

from harness.results.records import ProbeCheck
from harness.scenarios import transport_of

_SPLIT = re.compile(r"[^a-z0-9-]+")


def _text(event: Mapping[str, Any]) -> str:
    return " ".join(str(event.get(k) or "") for k in ("line", "data", "qname", "mark")).lower()


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


# `_by_marker`, `owners` and `_by_port` say it for one arrival and one attempt;
# `Arrivals` and `Log` index them for a whole log (tests/judge/test_arrivals.py holds
# the two equal over random arrivals).


def _by_marker(event: Mapping[str, Any], tag: str, check_id: str) -> bool:
    tokens = _tokens(event)
    tag, check_id = tag.lower(), check_id.lower()
    for a, b in itertools.pairwise(tokens):
        if (a, b) in ((tag, check_id), (check_id, tag)):
            return True
    if event.get("event") == "tcp" and event.get("complete") is False:
        # A connection cut mid-line: what arrived must be the start of the line.
        logged = str(event.get("line") or "").lower()
        return len(logged) > len("HARNESS ") and f"harness {tag} {check_id}".startswith(logged)
    return False


def _owner(event: Mapping[str, Any]) -> tuple[str, int | None, int | None]:
    """A flow's key: source address, source and destination port. An IPC message
    is no flow: it stands alone, keyed by what it carried."""
    if event.get("event") == _IPC:
        return (f"{_IPC} {_text(event)}", None, None)
    if event.get("event") == "packet":
        src = str(event.get("src") or "")
    else:
        src = str(event.get("peer") or "").rsplit(":", 1)[0].strip("[]")
    return (src, *_ports(event))


def owners(events: Iterable[Mapping[str, Any]]) -> dict[tuple[str, int | None, int | None], str]:
    """Each marked flow's text, so that an unmarked packet of the same flow (a TCP
    SYN) can be told apart from another cell's that happens to share a port."""
    return {_owner(e): _text(e) for e in events if _text(e).strip()}


def _by_port(
    event: Mapping[str, Any],
    check: ProbeCheck,
    tag: str,
    flows: Mapping[tuple[str, int | None, int | None], str],
    *,
    of_cell: bool = False,
) -> bool:
    src, dst = _attempt_ports(check)
    proto = transport_of(check.scenario, check.id)
    if src is None or proto is None:
        return False
    kind = event.get("event")
    got = event.get("proto") if kind in ("packet", "dns") else kind
    if got != proto:
        return False
    got_src, got_dst = _ports(event)
    if got_src != src or got_dst not in (None, dst):
        return False
    marked = flows.get(_owner(event))
    if marked is None:
        return True
    # Another cell's flow is not ours; nor, for one attempt, a flow another attempt of
    # this cell marked (the same ephemeral port, from another network namespace: a
    # held descriptor's host namespace). The cell's own all the same (`of_cell`).
    return tag.lower() in marked and (of_cell or check.id.lower() in marked)


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
    if kind == "ipc":
        sender = f" from {event.get('peer')}" if event.get("peer") else ""
        return f"{event.get('proto')} message{sender} on {event.get('listen')}"
    return f"{kind} from {event.get('peer')} to {event.get('listen')}"


def shown(event: Mapping[str, Any]) -> str:
    """An arrival as a reason shows it: what it was, and the start of what it carried."""
    carried = " ".join(_text(event).split())[:80]
    return f"{describe(event)} ({carried!r})" if carried else describe(event)


def of_attempt(events: list[dict[str, Any]], tag: str, check: ProbeCheck) -> list[str]:
    """The arrivals one attempt caused, each described."""
    return Arrivals(events).of_attempt(tag, check)


class Arrivals:
    """A cell's arrivals, read once for all its attempts: what `_by_marker` and
    `_by_port` ask of each arrival, indexed. Asking it of every arrival for every
    attempt, the flow table rebuilt each time, was most of a 50-host fan-out
    controller's CPU."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events
        rows = [(e, _text(e), _owner(e)) for e in events]
        flows = {key: text for _e, text, key in rows if text.strip()}  # `owners`
        self._pairs: dict[tuple[str, str], list[int]] = {}  # adjacent tokens -> arrivals
        self._cut: list[tuple[int, str]] = []  # TCP lines cut short, as logged
        # (transport, source port) -> (arrival, destination port, its flow's marked text)
        self._sent: dict[
            tuple[str | None, int | None], list[tuple[int, int | None, str | None]]
        ] = {}
        for i, (e, text, key) in enumerate(rows):
            for pair in itertools.pairwise(t for t in _SPLIT.split(text) if t):  # _tokens
                self._pairs.setdefault(pair, []).append(i)
            kind = e.get("event")
            if kind == "tcp" and e.get("complete") is False:
                self._cut.append((i, str(e.get("line") or "").lower()))
            got = e.get("proto") if kind in ("packet", "dns") else kind
            got_src, got_dst = _ports(e)
            if isinstance(got, str) and got_src is not None:
                row = (i, got_dst, flows.get(key))
                self._sent.setdefault((got, got_src), []).append(row)

    def of_attempt(self, tag: str, check: ProbeCheck) -> list[str]:
        """The arrivals the attempt caused, each described, in the log's order."""
        tag, check_id = tag.lower(), check.id.lower()
        found = {*self._pairs.get((tag, check_id), ()), *self._pairs.get((check_id, tag), ())}
        line = f"harness {tag} {check_id}"
        found.update(
            i for i, cut in self._cut if len(cut) > len("HARNESS ") and line.startswith(cut)
        )
        src, dst = _attempt_ports(check)
        proto = transport_of(check.scenario, check.id)
        # No key of `_sent` holds None: an unknown transport or port finds nothing.
        for i, got_dst, marked in self._sent.get((proto, src), ()):
            if got_dst in (None, dst) and (
                marked is None or (tag in marked and check_id in marked)
            ):
                found.add(i)
        return [describe(self.events[i]) for i in sorted(found)]


def of_cell(
    events: list[dict[str, Any]], tag: str, checks: Iterable[ProbeCheck]
) -> list[dict[str, Any]]:
    """The arrivals a cell caused (`Log.of_cell`)."""
    return Log(events).of_cell(tag, checks)


class Log:
    """A host's canary arrivals, read once for every cell judged against them: each
    arrival's text, and the marked flows (`owners`). Reading them again for each
    cell, and again for `unexplained`, was most of what a 50-host fan-out
    controller spent once attempts were indexed (`Arrivals`)."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events
        self.rows = [(e, _text(e)) for e in events]
        self._flows: dict[tuple[str, int | None, int | None], str] | None = None

    @property
    def flows(self) -> dict[tuple[str, int | None, int | None], str]:
        """`owners` of the whole log, made on the first use."""
        if self._flows is None:
            self._flows = {_owner(e): text for e, text in self.rows if text.strip()}
        return self._flows

    def of_cell(self, tag: str, checks: Iterable[ProbeCheck]) -> list[dict[str, Any]]:
        """The arrivals a cell caused: its tag anywhere in the marker text, or the
        ports one of its attempts reported (those whose scenario declares a transport)."""
        tag = tag.lower()
        # `_by_port` against every attempt, indexed: what an attempt offers is its
        # transport and source port, and the destination ports those went to. A host's
        # events times its cells' attempts was most of a fan-out controller's CPU.
        sent: dict[tuple[str, int | None], set[int | None]] = {}
        for c in checks:
            proto = transport_of(c.scenario, c.id)
            src, dst = _attempt_ports(c)
            if proto is not None and src is not None:
                sent.setdefault((proto, src), set()).add(dst)
        flows = self.flows if sent else {}
        return [e for e, text in self.rows if tag in text or _sent_by(e, sent, tag, flows)]


def _sent_by(
    event: Mapping[str, Any],
    sent: Mapping[tuple[str, int | None], set[int | None]],
    tag: str,
    flows: Mapping[tuple[str, int | None, int | None], str],
) -> bool:
    """`_by_port` for any of the attempts in `sent` (see `Log.of_cell`)."""
    kind = event.get("event")
    got = event.get("proto") if kind in ("packet", "dns") else kind
    if not isinstance(got, str):
        return False
    got_src, got_dst = _ports(event)
    dsts = sent.get((got, got_src))  # no attempt's source port is unknown
    if dsts is None or (got_dst is not None and got_dst not in dsts):
        return False
    marked = flows.get(_owner(event))
    return marked is None or tag in marked  # another cell's flow is not ours


def unexplained(
    events: Iterable[Mapping[str, Any]],
    cells: Iterable[tuple[str, Iterable[ProbeCheck]]],
    addresses: Iterable[str],
    allowed_ports: Iterable[int] = (),
) -> list[dict[str, Any]]:
    """The arrivals no cell explains: not one of the `cells`' (tag, checks) by
    `of_cell`, nor a packet of a flow one of their arrivals marked. Only what was sent
    to one of the canary's `addresses` counts (a host's multicast chatter on the
    veth is nobody's attempt). A TCP connection to an allowed destination's port
    that carried no byte at all carries nothing out: a supervisor opens one upstream
    for a connection the workload then never writes to (controller-loss's held
    connection, cut at the kill)."""
    log = Log([dict(e) for e in events])
    listed = log.events
    to_canary = {a.strip("[]") for a in addresses if a} | {_UNIX, _IPC}
    claimed: set[int] = set()
    for tag, checks in cells:
        claimed.update(id(e) for e in log.of_cell(tag, checks))
    marked = {_owner(e) for e, text in log.rows if id(e) in claimed and text.strip()}
    silent = _silent(listed, set(allowed_ports), set(log.flows))
    known = {tag for tag, _checks in cells}
    elsewhere = {_owner(e) for e, text in log.rows if _someone_elses(text, known)}
    return [
        e
        for e in listed
        if id(e) not in claimed
        and _owner(e) not in marked
        and _owner(e) not in silent
        and _owner(e) not in elsewhere
        and _destination(e) in to_canary
    ]


# A cell's tag: `harness-<run id>-<serial>` (runner.py).
_TAG = re.compile(r"harness-[0-9a-f]{8}-[0-9]{5}")


def _someone_elses(text: str, known: set[str]) -> bool:
    """Does an arrival (its `_text`) carry only tags of cells other than `known`?
    Another harness run on the same host sweeps what it can reach, this run's canary
    included; and a rerun judged at once meets the arrivals of a rerun still in
    flight. Each is marked with its own cell's tag: no crossing of the cells judged
    here."""
    found = set(_TAG.findall(text))
    return bool(found) and not found & known


def _silent(
    events: list[dict[str, Any]],
    ports: set[int],
    spoke: set[tuple[str, int | None, int | None]],
) -> set[tuple[str, int | None, int | None]]:
    """The TCP flows to one of `ports` on which no byte arrived (`spoke`: the flows
    on which some did)."""
    tcp = [e for e in events if e.get("event") == "tcp" and _ports(e)[1] in ports]
    return {_owner(e) for e in tcp} - spoke


_UNIX = "unix"  # an arrival on the canary's abstract unix listener: to the canary
_IPC = "ipc"  # one in its IPC objects in the host's IPC namespace: to the canary too


def _destination(event: Mapping[str, Any]) -> str:
    """The address an arrival was sent to."""
    if event.get("event") in (_UNIX, _IPC):
        return str(event.get("event"))
    if event.get("event") == "packet":
        return str(event.get("dst") or "")
    return str(event.get("listen") or "").rsplit(":", 1)[0].strip("[]")
