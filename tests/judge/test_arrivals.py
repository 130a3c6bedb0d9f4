"""Which canary arrival is which attempt's, and which are a cell's (harness/judge/arrivals.py)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from harness.judge.arrivals import of_attempt, of_cell, unexplained
from harness.results.records import ProbeCheck

TAG = "harness-t-00001"


def _attempt(check_id: str = "tcp4-25", **evidence: Any) -> ProbeCheck:
    return ProbeCheck(
        id=check_id,
        scenario="egress-confinement",
        kind="attempt",
        outcome="blocked",
        evidence=evidence,
    )


TCP = _attempt(src_port=40001, dst="10.251.0.2:25")


def _packet(
    sport: Any = 40001, dport: Any = 25, src: str = "10.9.0.2", **more: Any
) -> dict[str, Any]:
    return {
        "event": "packet",
        "proto": "tcp",
        "src": src,
        "dst": "10.251.0.2",
        "sport": sport,
        "dport": dport,
        **more,
    }


OTHER_CELL = "HARNESS.harness-t-00002.tcp4-25."


@pytest.mark.parametrize(
    ("check", "events", "matched"),
    [
        # by port: same source port and destination port, or an unknown destination port
        (TCP, [_packet()], 1),
        (TCP, [_packet(dport=26)], 0),
        (TCP, [_packet(dport=0)], 0),
        (TCP, [_packet(dport="25")], 1),  # a destination port the capture did not parse
        (TCP, [_packet(sport=40002)], 0),
        (TCP, [_packet(sport="40001")], 0),
        (TCP, [{**_packet(), "proto": "udp"}], 0),
        (_attempt(src_port=0, dst="10.251.0.2:25"), [_packet(sport=0)], 0),
        (_attempt(src_port=1, dst="10.251.0.2:25"), [_packet(sport=1)], 1),
        (
            _attempt(dst="10.251.0.2:25"),
            [{"event": "tcp", "peer": "10.251.0.1", "listen": "10.251.0.2:25"}],
            0,
        ),
        (TCP, [{"event": "tcp", "peer": "10.251.0.1:40001", "listen": "10.251.0.2:26"}], 0),
        (TCP, [{"event": "tcp", "peer": "10.251.0.1:40001", "listen": "10.251.0.2:25"}], 1),
        (
            _attempt("udp4-53", src_port=40003, dst="10.251.0.2:53"),
            [{"event": "udp", "peer": "10.251.0.1:40003", "listen": "10.251.0.2:53"}],
            1,
        ),
        (
            _attempt("dns-own", src_port=40004, dst="10.251.0.2:53"),
            [
                {
                    "event": "dns",
                    "proto": "udp",
                    "peer": "10.251.0.1:40004",
                    "listen": "10.251.0.2:53",
                }
            ],
            1,
        ),
        (_attempt("icmp4", src_port=40001), [{**_packet(), "proto": "icmp"}], 0),
        # another cell's marked flow on the same ports, from another address, is not ours
        (TCP, [_packet(src="10.9.0.3", mark=OTHER_CELL), _packet(src="10.9.0.2")], 1),
        (TCP, [_packet(src="10.9.0.2", mark=OTHER_CELL), _packet(src="10.9.0.2")], 0),
        (
            TCP,
            [
                {
                    "event": "tcp",
                    "peer": "[fd00::3]:40001",
                    "listen": "[fd5e::2]:25",
                    "line": "HARNESS harness-t-00002 tcp4-25",
                },
                {"event": "tcp", "peer": "[fd00::2]:40001", "listen": "[fd5e::2]:25"},
            ],
            1,
        ),
        (
            TCP,
            [
                {
                    "event": "tcp",
                    "peer": "10.251.0.3:40001",
                    "listen": "10.251.0.2:25",
                    "line": "HARNESS harness-t-00002 tcp4-25",
                },
                {"event": "tcp", "peer": "10.251.0.1:40001", "listen": "10.251.0.2:25"},
            ],
            1,
        ),
        # by marker, or by the start of a line the canary says was cut
        (
            TCP,
            [
                {
                    "event": "tcp",
                    "peer": "10.251.0.1:1",
                    "line": "HARNESS harness-t-00001 tcp4",
                    "complete": False,
                }
            ],
            1,
        ),
        (TCP, [{"event": "tcp", "peer": "10.251.0.1:1", "line": "HARNESS ", "complete": False}], 0),
        (
            TCP,
            [{"event": "tcp", "peer": "10.251.0.1:1", "line": "HARNESS harness-t-00001 tcp4"}],
            0,
        ),
    ],
)
def test_which_arrivals_are_an_attempts(
    check: ProbeCheck, events: list[dict[str, Any]], matched: int
) -> None:
    """An arrival is the attempt's by its marker, a cut line's start, or its ports and
    protocol, unless a marked flow of the same source names another cell."""
    assert len(of_attempt(events, TAG, check)) == matched


def test_a_cells_arrivals() -> None:
    """A cell's arrivals: its tag anywhere, or the ports of one of its egress attempts."""
    mine = {"event": "dns", "proto": "udp", "peer": "10.251.0.1:5000", "qname": f"x.{TAG}.test"}
    theirs = {
        "event": "dns",
        "proto": "udp",
        "peer": "10.251.0.1:5001",
        "qname": "x.harness-t-00002.test",
    }
    by_port = _packet(sport=40005)
    other_port = _packet(sport=40006)
    checks = [
        _attempt("tcp4-80", src_port=40009, dst="10.251.0.2:80"),
        _attempt("tcp4-25", src_port=40005, dst="10.251.0.2:25"),
        ProbeCheck(
            id="tcp4-25",
            scenario="filesystem-confinement",
            kind="attempt",
            outcome="blocked",
            evidence={"src_port": 40006, "dst": "10.251.0.2:25"},
        ),
    ]
    found = of_cell([mine, theirs, by_port, other_port], TAG.upper(), checks)
    assert found == [mine, by_port]


def _cell(tag: str = TAG, *checks: ProbeCheck) -> tuple[str, list[ProbeCheck]]:
    return tag, list(checks or (TCP,))


@pytest.mark.parametrize(
    ("event", "stray"),
    [
        # claimed by a cell: its tag anywhere (a line, the bytes after it), its ports
        ({"event": "tcp", "peer": "10.9.0.2:1", "listen": "10.251.0.2:80", "line": TAG}, False),
        (
            {
                "event": "tcp",
                "peer": "10.9.0.2:1",
                "listen": "10.251.0.2:80",
                "line": "CONNECT 10.251.0.2:80 HTTP/1.1",
                "data": f"CONNECT x..X-Harness: HARNESS {TAG} unix-proxy..",
            },
            False,
        ),
        (_packet(), False),
        # another cell's tag: that cell explains it
        (_packet(sport=5, mark="HARNESS harness-t-00002 icmp4"), False),
        # nobody's: no tag, no attempt's ports
        ({"event": "tcp", "peer": "10.9.0.2:1", "listen": "10.251.0.2:80", "line": "GET /"}, True),
        ({"event": "tcp", "peer": "[fd00::2]:1", "listen": "[fd5e::2]:80", "line": "x"}, True),
        (_packet(sport=40002), True),
        ({**_packet(sport=-1, dport=-1), "proto": "ip253"}, True),
        # the canary's abstract unix listener has no address: an arrival there is the
        # canary's, explained by a tag or not at all
        ({"event": "unix", "listen": "harness-canary-r-0", "peer": "pid 7", "line": "x"}, True),
        ({"event": "unix", "listen": "u", "peer": "pid 7", "line": f"HARNESS {TAG} x"}, False),
        # nor has an IPC object in the host's namespace
        ({"event": "ipc", "proto": "posix-mq", "listen": "mq /q", "peer": "", "line": "x"}, True),
        ({"event": "ipc", "listen": "msg 0x1", "peer": "pid 7", "line": f"HARNESS {TAG} x"}, False),
        # sent elsewhere (a host's multicast on the veth): not an arrival at the canary
        ({**_packet(sport=5353, dport=5353), "proto": "udp", "dst": "224.0.0.251"}, False),
        ({**_packet(sport=5353, dport=5353), "proto": "udp", "dst": "ff02::fb"}, False),
    ],
)
def test_arrivals_no_cell_explains(event: dict[str, Any], stray: bool) -> None:
    """An arrival at the canary's addresses that no cell's tag, ports or marked flow
    explains is unexplained; one sent elsewhere is nobody's."""
    cells = [_cell(), _cell("harness-t-00002", _attempt("icmp4"))]
    found = unexplained([event], cells, ["10.251.0.2", "[fd5e::2]"])
    assert found == ([event] if stray else [])


def test_a_packet_of_a_marked_flow_is_explained_by_its_marker() -> None:
    """The SYN of a connection whose line carried a cell's marker (a proxy's upstream,
    from a source port no attempt reported) is that cell's, not unexplained."""
    line = {
        "event": "tcp",
        "peer": "10.9.0.7:41000",
        "listen": "10.251.0.2:8080",
        "line": f"HARNESS {TAG} unix-proxy",
    }
    syn = _packet(sport=41000, dport=8080, src="10.9.0.7")
    assert unexplained([syn, line], [_cell()], ["10.251.0.2"]) == []
    assert unexplained([syn], [_cell()], ["10.251.0.2"]) == [syn]


def test_a_connection_to_the_allowed_port_that_carried_nothing_is_no_arrival() -> None:
    """A supervisor's upstream connection to the allowed destination that the workload
    never wrote to (controller-loss's held connection, cut at the kill) carried
    nothing out; one that carried a byte, or went to another port, still counts."""
    empty = {"event": "tcp", "peer": "10.251.0.1:55716", "listen": "10.251.0.2:8081",
             "line": "", "complete": False}  # fmt: skip
    syn = _packet(sport=55716, dport=8081, src="10.251.0.1")
    assert unexplained([syn, empty], [_cell()], ["10.251.0.2"], [8081]) == []
    assert unexplained([syn, empty], [_cell()], ["10.251.0.2"]) == [syn, empty]
    spoke = {**empty, "data": "secret"}
    assert unexplained([syn, spoke], [_cell()], ["10.251.0.2"], [8081]) == [syn, spoke]
    # A packet alone (no connection the canary accepted) is not known to have been empty.
    assert unexplained([syn], [_cell()], ["10.251.0.2"], [8081]) == [syn]
    elsewhere = {**empty, "listen": "10.251.0.2:8080", "peer": "10.251.0.1:55717"}
    assert unexplained([elsewhere], [_cell()], ["10.251.0.2"], [8081]) == [elsewhere]


def test_another_cells_marked_attempt_is_not_an_unexplained_arrival() -> None:
    """Two runs on one host: one's host cell reaches the other's canary (its abstract
    unix listener) with a line marked by its own cell's tag; and a rerun judged at once
    meets the arrivals of another rerun still in flight. Neither crosses the cells
    judged here, nor does an unmarked packet of such a flow; an unmarked line still
    counts."""
    ours = "harness-c6ec1e69-00002"
    cells = [(ours, [_attempt("tcp4-80")])]
    for theirs in ("harness-0a1b2c3d-00001", "harness-c6ec1e69-00005"):
        line = f"connect 10.251.0.6:8080 http/1.1 x-harness: {theirs} unix-proxy"
        foreign = {"event": "unix", "listen": "harness-canary-c6ec1e69-0", "peer": "pid 9",
                   "line": line}  # fmt: skip
        assert unexplained([foreign], cells, ["10.251.0.2"]) == []
        tcp = {"event": "tcp", "peer": "10.251.0.5:43348", "listen": "10.251.0.2:8080",
               "line": f"HARNESS {theirs} tcp-denied-name"}  # fmt: skip
        syn = _packet(sport=43348, dport=8080, src="10.251.0.5")
        assert unexplained([syn, tcp], cells, ["10.251.0.2"]) == []
    bare = {"event": "unix", "listen": "u", "peer": "pid 9", "line": "connect 10.251.0.6:8080"}
    assert unexplained([bare], cells, ["10.251.0.2"]) == [bare]


def test_an_ipc_message_is_matched_by_its_marker_and_stands_alone() -> None:
    """An IPC arrival is its attempt's by the marker alone (no ports), and described by
    its kind and object; a marked message explains no other (a POSIX queue names no
    sender, so two messages would otherwise look like one flow)."""
    mine = {"event": "ipc", "proto": "sysv-msg", "listen": "msg 0x1a2b3c4d",
            "peer": "pid 9", "line": f"HARNESS {TAG} ipc-sysv-msg"}  # fmt: skip
    attempt = _attempt("ipc-sysv-msg", dst="msg 0x1a2b3c4d")
    assert of_attempt([mine], TAG, attempt) == ["sysv-msg message from pid 9 on msg 0x1a2b3c4d"]
    assert of_attempt([mine], TAG, _attempt("ipc-posix-mq")) == []
    marked = {"event": "ipc", "proto": "posix-mq", "listen": "mq /q", "peer": "",
              "line": f"HARNESS {TAG} ipc-posix-mq"}  # fmt: skip
    other = {**marked, "line": "secret"}
    assert of_attempt([marked], TAG, _attempt("ipc-posix-mq")) == ["posix-mq message on mq /q"]
    assert unexplained([marked, other], [_cell(TAG, attempt)], []) == [other]


def _random_attempt(
    pick: random.Random, declared: list[tuple[str, str]], ports: list[object]
) -> ProbeCheck:
    """One of the declared attempts, from a random source port to a random destination."""
    scenario, check_id = pick.choice(declared)
    evidence = {
        "src_port": pick.choice(ports),
        "dst": pick.choice(["10.251.0.2:8080 tcp", "10.251.0.2:53", "", "bad"]),
    }
    return ProbeCheck(check_id, scenario, "attempt", "blocked", evidence=evidence)


def test_a_cells_arrivals_are_those_its_tag_or_one_of_its_attempts_claims() -> None:
    """`of_cell` indexes its attempts by transport and source port; what it claims
    must be exactly what its tag, or one attempt by `_by_port`, claims: over
    arrivals of every kind (dns and packets carry their transport apart), ports
    that match or not, unknown ports, flows another cell marked."""

    from harness.judge.arrivals import _by_port, _text, owners
    from harness.scenarios import _TRANSPORTS

    pick = random.Random(31)
    declared = [*sorted(_TRANSPORTS)[:10], ("egress-confinement", "not-declared")]
    ports = [None, 0, 5, 53, 8080, -1, "x"]

    def arrival() -> dict[str, Any]:
        return {
            "event": pick.choice(["packet", "dns", "tcp", "udp", None]),
            "proto": pick.choice(["tcp", "udp", None, ["tcp"]]),
            "sport": pick.choice(ports),
            "dport": pick.choice(ports),
            "peer": pick.choice(["10.9.0.2:5", "10.9.0.2:53", "10.9.0.3:8080", "", None]),
            "listen": pick.choice(["10.251.0.2:8080", "10.251.0.2:53", "", None]),
            "src": pick.choice(["10.9.0.2", "10.9.0.3"]),
            "line": pick.choice(["", "", f"harness {TAG} x", "harness harness-t-00002 x"]),
        }

    def attempt() -> ProbeCheck:
        return _random_attempt(pick, declared, ports)

    by_port = 0
    for _ in range(3000):
        events = [arrival() for _ in range(pick.randint(0, 6))]
        checks = [attempt() for _ in range(pick.randint(0, 5))]
        flows = owners(events)
        expected = [
            e
            for e in events
            if TAG in _text(e) or any(_by_port(e, c, TAG, flows, of_cell=True) for c in checks)
        ]
        assert of_cell(events, TAG, checks) == expected
        by_port += sum(TAG not in _text(e) for e in expected)
    assert by_port > 100  # the ports, not only the tag, were put to the test


def test_an_attempts_arrivals_are_those_its_marker_or_its_ports_claim() -> None:
    """`Arrivals` indexes a cell's arrivals once for all its attempts; what it gives
    one attempt must be exactly, in the log's order, what `_by_marker` or `_by_port`
    claims of each arrival: markers either way round and in any case, cut lines,
    ports that match or not, flows another cell marked, one index for many attempts."""

    from harness.judge.arrivals import Arrivals, _by_marker, _by_port, describe, owners
    from harness.scenarios import _TRANSPORTS

    pick = random.Random(4)
    declared = [*sorted(_TRANSPORTS)[:10], ("egress-confinement", "not-declared")]
    ids = sorted({c for _s, c in declared})
    ports = [None, 0, 5, 53, 8080, -1, "x"]
    other = "harness-t-00002"

    def line() -> str:
        check = pick.choice(ids)
        return pick.choice(
            [
                "",
                "",
                "",
                f"HARNESS {TAG} {check}",
                f"harness {check.upper()} {TAG.upper()} more",
                f"harness {other} {check}",
                f"harness {TAG}",
                f"HARNESS {TAG} {check}"[: pick.randint(0, 30)],
            ]
        )

    def arrival() -> dict[str, Any]:
        return {
            "event": pick.choice(["packet", "dns", "tcp", "udp", "unix", None]),
            "proto": pick.choice(["tcp", "udp", None, ["tcp"]]),
            "sport": pick.choice(ports),
            "dport": pick.choice(ports),
            "peer": pick.choice(["10.9.0.2:5", "10.9.0.2:53", "10.9.0.3:8080", "", None]),
            "listen": pick.choice(["10.251.0.2:8080", "10.251.0.2:53", "", None]),
            "src": pick.choice(["10.9.0.2", "10.9.0.3"]),
            "line": line(),
            "complete": pick.choice([None, True, False, False]),
        }

    def attempt() -> ProbeCheck:
        return _random_attempt(pick, declared, ports)

    claimed = {"marker": 0, "port": 0}
    for _ in range(4000):
        events = [arrival() for _ in range(pick.randint(0, 8))]
        index, flows = Arrivals(events), owners(events)
        for check in (attempt() for _ in range(pick.randint(1, 5))):
            tag = pick.choice([TAG, TAG.upper(), other])
            marker = [_by_marker(e, tag, check.id) for e in events]
            port = [_by_port(e, check, tag, flows) for e in events]
            expected = [describe(e) for e, m, p in zip(events, marker, port, strict=True) if m or p]
            assert index.of_attempt(tag, check) == expected
            claimed["marker"] += sum(marker)
            claimed["port"] += sum(p and not m for m, p in zip(marker, port, strict=True))
    assert min(claimed.values()) > 100, claimed  # both ways were put to the test


def test_a_flow_another_attempt_marked_is_not_this_attempts_by_its_port() -> None:
    """held-fds' query, sent from the host's network namespace, and dns-own's, sent
    from the sandbox's own, took the same ephemeral port (42640): the packet held-fds
    marked is held-fds', not dns-own's by that port. It is the cell's all the same."""
    packet = {
        "event": "packet", "proto": "udp", "src": "fd5e::1", "dst": "fd5e::2",
        "sport": 42640, "dport": 53, "mark": f"held-fds-0.{TAG}.denied.harness.test",
    }  # fmt: skip
    dns_own = ProbeCheck(
        "dns-own", "egress-confinement", "attempt", "blocked",
        evidence={"dst": "127.0.0.1:53", "src_port": 42640},
    )  # fmt: skip
    assert of_attempt([packet], TAG, dns_own) == []
    unmarked = {**packet, "mark": ""}
    assert of_attempt([unmarked], TAG, dns_own) != []  # a flow nobody marked: by its port
    assert of_cell([packet], TAG, [dns_own]) == [packet]
