"""Attribution judged from decision records: matching, ambiguity, identity."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from harness.results import CellRecord, CellStatus
from harness.results.attribution import observe_attribution
from harness.results.records import ProbeCheck

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
    return replace(cell, host_side=side)


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
