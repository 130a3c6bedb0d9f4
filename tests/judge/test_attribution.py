"""Attribution judged from decision records: matching, ambiguity, identity."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from harness.judge.attribution import arrivals, observe_attribution, observe_route
from harness.results import CellRecord, CellStatus
from harness.results.records import HostEvidence, ProbeCheck

DST = "10.251.0.2:8081"


def _cell(port: int = 40112, outcome: str = "ok") -> CellRecord:
    check = ProbeCheck(
        id="attr-allowed-connect",
        scenario="attribution",
        kind="control",
        outcome=outcome,
        evidence={"src_port": port, "dst": DST},
    )
    return CellRecord(
        run_id="t", host="h", runtime="r", kind="k", scenarios=["attribution"],
        status=CellStatus.COMPLETE, reason=None, started="", ended="", elapsed=0.0,
        checks=[check],
    )  # fmt: skip


BINARY = {"path": "/usr/bin/curl", "sha256": "ab" * 32}


@pytest.mark.parametrize(
    ("records", "endpoint_only", "observed", "reason"),
    [
        (
            [{"src_port": 40112, "dst": DST, "binary": BINARY}],
            False,
            "enforced",
            "attributed to /usr/bin/curl",
        ),
        (
            [{"src_port": 40112, "binary_path": "/bin/wget"}],
            False,
            "enforced",
            "attributed to /bin/wget",
        ),
        (
            [{"src_port": 40112, "identity": "unavailable", "reason": "endpoint-only"}],
            True,
            "enforced",
            "explicitly unavailable",
        ),
        (
            [{"src_port": 40112, "identity": "unavailable", "reason": "x"}],
            False,
            "violated",
            "not declared endpoint_only",
        ),
        ([{"src_port": 40112, "identity": "unavailable"}], True, "violated", "without a reason"),
        ([{"src_port": 40112, "dst": DST}], False, "violated", "carries no binary identity"),
        ([{"src_port": 40999, "binary": BINARY}], False, "violated", "no decision record"),
        # A stale record on the same port but another destination is not this connection's.
        (
            [{"src_port": 40112, "dst": "10.9.9.9:443", "binary": BINARY}],
            False,
            "violated",
            "no decision record",
        ),
        # Two candidates (e.g. an old run's record and a new one): ambiguous, never a pick.
        (
            [{"src_port": 40112, "binary": BINARY}, {"src_port": "40112", "dst": DST}],
            False,
            "inconclusive",
            "ambiguous",
        ),
    ],
)
def test_decision_records(
    records: list[dict[str, Any]], endpoint_only: bool, observed: str, reason: str
) -> None:
    """Each record set yields the observation a careful reviewer would."""
    result = observe_attribution(
        _cell(), configured=True, endpoint_only=endpoint_only, decisions=records, fetch_error=None
    )
    assert result.observed == observed, result
    assert reason in (result.reason or "")


def test_no_source_is_skipped_and_a_failed_connection_inconclusive() -> None:
    """No source: skipped. A failed allowed connection or unreadable records: inconclusive."""
    assert (
        observe_attribution(
            _cell(), configured=False, endpoint_only=False, decisions=None, fetch_error=None
        ).observed
        == "skipped"
    )
    failed = observe_attribution(
        _cell(outcome="failed"),
        configured=True,
        endpoint_only=False,
        decisions=[],
        fetch_error=None,
    )
    assert failed.observed == "inconclusive"
    unread = observe_attribution(
        _cell(), configured=True, endpoint_only=False, decisions=None, fetch_error="HTTP 500"
    )
    assert unread.observed == "inconclusive" and "HTTP 500" in (unread.reason or "")


PROBE_SHA = "cd" * 32
TAG = "harness-t-00001"
UPSTREAM = "10.251.0.1:51234"


def _supervised(events: list[dict[str, Any]] | None) -> CellRecord:
    cell = _cell()
    side: dict[str, Any] = {"tag": TAG, "probe_sha256": PROBE_SHA}
    if events is not None:
        side["canary_events"] = events
    return replace(cell, host_side=HostEvidence(**side))


def _arrival(peer: str) -> dict[str, Any]:
    return {"event": "tcp", "peer": peer, "line": f"HARNESS {TAG} attr-allowed-connect"}


@pytest.mark.parametrize(
    ("binary", "observed", "reason"),
    [
        ({"path": "/probe", "sha256": PROBE_SHA}, "enforced", "attributed to /probe"),
        ({"path": "/usr/bin/bwrap", "sha256": "ef" * 32}, "violated", "names the wrong binary"),
        ({"path": "/probe"}, "violated", "names the wrong binary: /probe (sha256 not given)"),
    ],
)
def test_the_named_binary_must_be_the_probe(
    binary: dict[str, str], observed: str, reason: str
) -> None:
    """A record naming a binary is checked against the probe's sha256: the probe made
    the connection, so any other binary (or one without its hash) is a violation."""
    records = [{"src_port": 40112, "dst": DST, "binary": binary}]
    result = observe_attribution(
        _cell(), configured=True, endpoint_only=False, decisions=records, fetch_error=None,
        expected_sha256=PROBE_SHA,
    )  # fmt: skip
    assert result.observed == observed, result
    assert reason in (result.reason or "")


@pytest.mark.parametrize(
    ("events", "record", "observed", "reason"),
    [
        ([_arrival(UPSTREAM)], {"upstream": UPSTREAM}, "enforced", "attributed to /probe"),
        # The canary saw the allowed connection from somewhere else too: a way around.
        (
            [_arrival(UPSTREAM), _arrival("10.251.0.1:40112")],
            {"upstream": UPSTREAM},
            "violated",
            "around the supervisor",
        ),
        ([_arrival(UPSTREAM)], {}, "violated", "names no upstream"),
        ([], {"upstream": UPSTREAM}, "inconclusive", "never reached the destination"),
        (None, {"upstream": UPSTREAM}, "inconclusive", "cannot tell how"),
    ],
)
def test_behind_the_supervisor_the_allowed_connection_goes_through_it(
    events: list[dict[str, Any]] | None, record: dict[str, Any], observed: str, reason: str
) -> None:
    """Behind the reference supervisor, the allowed destination must be reached only
    from the supervisor's upstream socket; otherwise the record proves nothing."""
    records = [
        {"src_port": 40112, "dst": DST, "binary": {"path": "/probe", "sha256": PROBE_SHA}, **record}
    ]
    result = observe_attribution(
        _supervised(events), configured=True, endpoint_only=False, decisions=records,
        fetch_error=None, expected_sha256=PROBE_SHA, via_supervisor=True,
    )  # fmt: skip
    assert result.observed == observed, result
    assert reason in (result.reason or "")
    # A way around the supervisor is the connection escaping it; anything else keeps
    # what the probe saw (the connection itself worked).
    (check,) = result.checks
    assert check.outcome == ("escaped" if observed == "violated" and record else "ok"), check


@pytest.mark.parametrize(
    ("records", "observed", "reason"),
    [
        # A sha256 alone does not name a binary.
        (
            [{"src_port": 40112, "binary": {"sha256": "ab" * 32}}],
            "violated",
            "carries no binary identity",
        ),
        (
            [{"src_port": 40112, "binary": {"path": "", "sha256": "ab" * 32}}],
            "violated",
            "carries no binary identity",
        ),
        ([{"src_port": 40112, "sha256": "ab" * 32}], "violated", "carries no binary identity"),
        ([{"src_port": 40112, "binary": ""}], "violated", "carries no binary identity"),
        (
            [{"src_port": 40112, "binary": "/usr/bin/curl", "sha256": "cd"}],
            "enforced",
            "attributed to /usr/bin/curl (sha256 cd)",
        ),
        (
            [{"src_port": 40112, "binary_path": "/bin/wget", "sha256": "ef"}],
            "enforced",
            "attributed to /bin/wget (sha256 ef)",
        ),
        (
            [{"src_port": 40112, "dst": DST, "binary": BINARY}],
            "enforced",
            f"attributed to /usr/bin/curl (sha256 {'ab' * 32})",
        ),
        ([{"src_port": 40112, "binary": {"path": "/bin/nc"}}], "enforced", "attributed to /bin/nc"),
        # Identity declared unavailable, by an endpoint-only runtime, in any case.
        (
            [{"src_port": 40112, "identity": "Unavailable", "reason": "endpoint-only"}],
            "violated",
            "not declared endpoint_only",
        ),
        (
            [{"dst": DST, "binary": BINARY}],
            "violated",
            "no decision record for the allowed connection (src_port 40112)",
        ),
        ([], "violated", "no decision record"),
    ],
)
def test_what_names_a_binary(records: list[dict[str, Any]], observed: str, reason: str) -> None:
    """Only a path names a binary; the detail says which one and its sha256 when given."""
    result = observe_attribution(
        _cell(), configured=True, endpoint_only=False, decisions=records, fetch_error=None
    )
    assert result.observed == observed, result
    assert reason in (result.reason or "")
    # The check shows the record's judgement; with no record it keeps the probe's detail.
    matched = not reason.startswith("no decision record")
    assert [c.detail for c in result.checks] == [result.reason if matched else None]


def test_endpoint_only_identity_in_any_case() -> None:
    """An endpoint-only runtime's explicit `identity: unavailable` is matched in any case."""
    records = [{"src_port": 40112, "identity": "UNAVAILABLE", "reason": "endpoint-only"}]
    result = observe_attribution(
        _cell(), configured=True, endpoint_only=True, decisions=records, fetch_error=None
    )
    assert result.observed == "enforced"
    assert result.reason == "identity explicitly unavailable: endpoint-only"


def _with(check: ProbeCheck | None, status: CellStatus = CellStatus.COMPLETE) -> CellRecord:
    return CellRecord(
        run_id="t", host="h", runtime="r", kind="k", scenarios=["attribution"],
        status=status, reason="probe crashed", started="", ended="", elapsed=0.0,
        checks=[check] if check else [],
    )  # fmt: skip


GOOD = [{"src_port": 40112, "dst": DST, "binary": BINARY}]


@pytest.mark.parametrize("status", [s for s in CellStatus if s is not CellStatus.COMPLETE])
def test_an_incomplete_cell_is_inconclusive(status: CellStatus) -> None:
    """A cell that did not complete proves nothing, even with a matching record."""
    result = observe_attribution(
        _with(_cell().checks[0], status), configured=True, endpoint_only=False, decisions=GOOD,
        fetch_error=None,
    )  # fmt: skip
    assert result.observed == "inconclusive"
    assert result.reason == f"cell {status}: probe crashed"


def test_a_probe_that_never_reported_the_connection_is_inconclusive() -> None:
    """No allowed-connection line (or only another check's): nothing to look up."""
    other = ProbeCheck(id="tcp-raw-ip", scenario="egress-confinement", kind="attempt",
                       outcome="blocked", evidence={"src_port": 40112})  # fmt: skip
    for cell in (_with(None), _with(other)):
        result = observe_attribution(
            cell, configured=True, endpoint_only=False, decisions=GOOD, fetch_error=None
        )
        assert result.observed == "inconclusive"
        assert result.reason == "the probe did not report the allowed connection"


def test_a_connection_without_its_source_port_is_inconclusive() -> None:
    """Without the source port no record can be matched: never a pass."""
    check = ProbeCheck(id="attr-allowed-connect", scenario="attribution", kind="control",
                       outcome="ok", evidence={"dst": DST})  # fmt: skip
    result = observe_attribution(
        _with(check), configured=True, endpoint_only=False, decisions=GOOD, fetch_error=None
    )
    assert result.observed == "inconclusive"
    assert result.reason == "the allowed connection failed (ok ): None"
    failed = observe_attribution(
        _cell(outcome="failed"), configured=True, endpoint_only=False, decisions=GOOD,
        fetch_error=None,
    )  # fmt: skip
    assert failed.observed == "inconclusive"
    assert failed.checks[0].outcome == "failed" and failed.checks[0].control == "n/a"


def test_a_record_for_the_connection_without_a_destination_matches() -> None:
    """A record that does not name the destination matches by port alone."""
    records: list[dict[str, Any]] = [
        {"src_port": "40112", "binary": BINARY},
        {"src_port": 40113, "binary": BINARY},
    ]
    result = observe_attribution(
        _cell(), configured=True, endpoint_only=False, decisions=records, fetch_error=None
    )
    assert result.observed == "enforced"


def test_the_matching_record_is_found_among_others() -> None:
    """Records of other ports or destinations before the match do not hide it."""
    records: list[dict[str, Any]] = [
        {"src_port": 40999, "binary": BINARY},
        {"src_port": 40112, "dst": "10.9.9.9:443", "binary": {"path": "/bin/other"}},
        {"binary": BINARY},
        {"src_port": 40112, "dst": DST, "binary": BINARY},
    ]
    result = observe_attribution(
        _cell(), configured=True, endpoint_only=False, decisions=records, fetch_error=None
    )
    assert result.observed == "enforced"
    assert result.reason == f"attributed to /usr/bin/curl (sha256 {'ab' * 32})"


def test_text_copied_from_a_record_is_bounded() -> None:
    """A binary path from the supervisor is cut at 300 characters in the verdict."""
    path = "/" + "x" * 399
    records = [{"src_port": 40112, "dst": DST, "binary": {"path": path}}]
    result = observe_attribution(
        _cell(), configured=True, endpoint_only=False, decisions=records, fetch_error=None
    )
    assert result.reason == f"attributed to {path[:300]}"


def test_why_the_canary_log_is_missing_is_kept() -> None:
    """Behind the supervisor, an unreadable canary log is inconclusive, with its error."""
    cell = replace(
        _supervised(None), host_side=HostEvidence(tag=TAG, canary_error="canary exited 1")
    )
    records = [{"src_port": 40112, "dst": DST, "binary": {"path": "/probe"}, "upstream": UPSTREAM}]
    result = observe_attribution(
        cell, configured=True, endpoint_only=False, decisions=records, fetch_error=None,
        via_supervisor=True,
    )  # fmt: skip
    assert result.observed == "inconclusive"
    assert result.reason == "canary exited 1: cannot tell how the allowed connection got out"
    default = observe_attribution(
        _supervised(None), configured=True, endpoint_only=False, decisions=records,
        fetch_error=None,
    )  # fmt: skip
    assert default.observed == "enforced"  # not behind a supervisor unless told


@pytest.mark.parametrize(
    ("line", "counted"),
    [
        (f"HARNESS {TAG} attr-allowed-connect", True),
        (f"HARNESS {TAG[:9]}", True),  # a cut line, long enough to be this marker's start
        (f"HARNESS {TAG[:8]}", False),  # too short to tell
        ("HARNESS ", False),
        (f"HARNESS {TAG} tcp-raw-ip", False),  # another attempt's line
    ],
)
def test_which_canary_lines_are_the_allowed_connection(line: str, counted: bool) -> None:
    """Only the allowed connection's marker (or a long enough start of it) is its arrival:
    seen from another peer, it was a way around the supervisor."""
    events = [
        _arrival(UPSTREAM),
        {"event": "tcp", "peer": "10.251.0.1:40999", "line": line},
        {"event": "dns", "peer": "10.251.0.1:40998", "line": f"HARNESS {TAG} attr-allowed-connect"},
    ]
    records = [{"src_port": 40112, "dst": DST, "binary": {"path": "/probe"}, "upstream": UPSTREAM}]
    result = observe_attribution(
        _supervised(events), configured=True, endpoint_only=False, decisions=records,
        fetch_error=None, via_supervisor=True,
    )  # fmt: skip
    assert result.observed == ("violated" if counted else "enforced"), result
    only = [{"event": "tcp", "peer": UPSTREAM, "line": line}]
    alone = observe_attribution(
        _supervised(only), configured=True, endpoint_only=False, decisions=records,
        fetch_error=None, via_supervisor=True,
    )  # fmt: skip
    assert alone.observed == ("enforced" if counted else "inconclusive"), alone


def _routed(
    events: list[dict[str, Any]] | None,
    decisions: list[dict[str, Any]] | None,
    *,
    outcome: str = "ok",
    status: CellStatus = CellStatus.COMPLETE,
    decisions_error: str | None = None,
) -> CellRecord:
    side: dict[str, Any] = {"tag": TAG, "decisions": decisions, "decisions_error": decisions_error}
    if events is not None:
        side["canary_events"] = events
    cell = replace(_cell(outcome=outcome), status=status, reason="probe crashed")
    return replace(cell, host_side=HostEvidence(**side))


ROUTED = {"src_port": 40112, "dst": DST, "binary": {"path": "/x"}, "upstream": UPSTREAM}


@pytest.mark.parametrize(
    ("cell", "observed", "reason"),
    [
        (
            _routed([_arrival(UPSTREAM)], [ROUTED]),
            "enforced",
            f"reached the destination only from its record's upstream, {UPSTREAM}",
        ),
        (
            _routed([_arrival(UPSTREAM), _arrival("10.251.0.1:40112")], [ROUTED]),
            "violated",
            "around the supervisor (from 10.251.0.1:40112",
        ),
        # The external source's record names an upstream the canary never saw it from.
        (_routed([_arrival("10.251.0.9:1")], [ROUTED]), "violated", "around the supervisor"),
        (_routed([], [ROUTED]), "inconclusive", "never reached the destination"),
        (_routed(None, [ROUTED]), "inconclusive", "cannot tell how"),
        (
            _routed([_arrival(UPSTREAM)], [{**ROUTED, "upstream": ""}]),
            "skipped",
            "the decision record names no upstream connection",
        ),
        (_routed([_arrival(UPSTREAM)], None), "skipped", "no decision records: no decision-"),
        (
            _routed([_arrival(UPSTREAM)], None, decisions_error="HTTP 500"),
            "skipped",
            "no decision records: HTTP 500",
        ),
        (
            _routed([_arrival(UPSTREAM)], [ROUTED], status=CellStatus.ERROR),
            "inconclusive",
            "cell error: probe crashed",
        ),
        (
            _routed([_arrival(UPSTREAM)], [ROUTED], outcome="failed"),
            "inconclusive",
            "the allowed connection did not connect",
        ),
        (
            _routed([_arrival(UPSTREAM)], [ROUTED, ROUTED]),
            "inconclusive",
            "2 decision records match the allowed connection (src_port 40112)",
        ),
        (
            _routed([_arrival(UPSTREAM)], [{**ROUTED, "dst": "10.251.0.2:9"}]),
            "inconclusive",
            "0 decision records match",
        ),
    ],
)
def test_the_route_is_checked_for_every_record_source(
    cell: CellRecord, observed: str, reason: str
) -> None:
    """no_unmanaged_egress_path's route check (observe_route), external sources too:
    the record's upstream must be the only peer the canary saw the allowed connection from."""
    result = observe_route(cell)
    assert result.observed == observed, result
    assert reason in (result.reason or ""), result.reason


def test_the_route_needs_the_allowed_connections_port() -> None:
    """A connected allowed attempt without its source port cannot be matched to a record."""
    cell = _routed([_arrival(UPSTREAM)], [ROUTED])
    check = replace(cell.checks[0], evidence={"dst": DST})
    result = observe_route(replace(cell, checks=[check]))
    assert (result.observed, result.reason) == (
        "inconclusive",
        "the allowed connection did not connect",
    )
    assert arrivals(replace(cell, host_side=HostEvidence(tag=TAG))) is None
    assert arrivals(cell) == [UPSTREAM]


@pytest.mark.parametrize(
    ("events", "record", "observed", "reason"),
    [
        (
            [_arrival(UPSTREAM)],
            {"upstream": UPSTREAM},
            "enforced",
            f"reached the destination only through the supervisor ({UPSTREAM})",
        ),
        # Right binary, but the connection also reached the canary from elsewhere.
        (
            [_arrival(UPSTREAM), _arrival("10.251.0.1:40112")],
            {"upstream": UPSTREAM},
            "violated",
            "around the supervisor (from 10.251.0.1:40112",
        ),
        ([_arrival("10.251.0.1:40112")], {"upstream": UPSTREAM}, "violated", "around the"),
        # The allowed destination is the supervisor's own, not the canary's: no route to tie.
        ([], {"upstream": UPSTREAM}, "enforced", "attributed to /probe"),
        # No upstream in the record: nothing to tie the canary's arrival to.
        ([_arrival("10.251.0.1:40112")], {}, "enforced", "attributed to /probe"),
    ],
)
def test_an_external_sources_record_is_held_to_its_route(
    events: list[dict[str, Any]], record: dict[str, Any], observed: str, reason: str
) -> None:
    """Issue 28: an external supervisor whose record names the right binary and an
    upstream, while the connection reached the canary around it, is a violation of
    attribution (not only of the export's no_unmanaged_egress_path)."""
    records = [
        {"src_port": 40112, "dst": DST, "binary": {"path": "/probe", "sha256": PROBE_SHA}, **record}
    ]
    result = observe_attribution(
        _supervised(events), configured=True, endpoint_only=False, decisions=records,
        fetch_error=None, expected_sha256=PROBE_SHA, via_supervisor=False,
    )  # fmt: skip
    assert result.observed == observed, result
    assert reason in (result.reason or "")
    if observed == "enforced" and not (events and record):
        assert "through the supervisor" not in (result.reason or "")
