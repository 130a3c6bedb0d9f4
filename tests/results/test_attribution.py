"""Attribution judged from decision records: matching, ambiguity, identity."""

from __future__ import annotations

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
