"""Attribution from two binaries: each interleaved connection's record names its own."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from harness.judge.attribution import observe_attribution
from harness.results import CellRecord, CellStatus
from harness.results.records import HostEvidence, ProbeCheck

DST = "10.251.0.2:8081"
PROBE_SHA = "cd" * 32
OTHER_SHA = "ef" * 32
PROBE = {"path": "/probe", "sha256": PROBE_SHA}
OTHER = {"path": "/helpers/other", "sha256": OTHER_SHA}
PORTS = {"port_1_probe": 40001, "port_2_other": 40002, "port_3_probe": 40003, "port_4_other": 40004}


def _cell(outcome: str = "ok", ports: dict[str, int] | None = None, two: bool = True) -> CellRecord:
    one = ProbeCheck(
        id="attr-allowed-connect", scenario="attribution", kind="control", outcome="ok",
        evidence={"src_port": 40112, "dst": DST},
    )  # fmt: skip
    both = ProbeCheck(
        id="attr-two-binaries", scenario="attribution", kind="control", outcome=outcome,
        detail="the probe, /helpers/other and the probe again connected",
        evidence={"dst": DST, "binary": "/helpers/other", **(PORTS if ports is None else ports)},
    )  # fmt: skip
    return CellRecord(
        run_id="t", host="h", runtime="r", kind="k", scenarios=["attribution"],
        status=CellStatus.COMPLETE, reason=None, started="", ended="", elapsed=0.0,
        checks=[one, both] if two else [one], host_side=HostEvidence(),
    )  # fmt: skip


def _records(
    first: dict[str, Any],
    other: dict[str, Any],
    last: dict[str, Any],
    passing: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The records of the allowed connection and of the four interleaved ones: the
    probe, the other, the probe, the other passing for the probe (as `other` unless
    given)."""
    return [
        {"src_port": 40112, "dst": DST, "binary": PROBE},
        {"src_port": 40001, "dst": DST, **first},
        {"src_port": 40002, "dst": DST, **other},
        {"src_port": 40003, "dst": DST, **last},
        {"src_port": 40004, "dst": DST, **(other if passing is None else passing)},
    ]


def _judge(
    cell: CellRecord,
    records: list[dict[str, Any]],
    *,
    endpoint_only: bool = False,
    other_sha256: str | None = OTHER_SHA,
) -> Any:
    return observe_attribution(
        cell, configured=True, endpoint_only=endpoint_only, decisions=records, fetch_error=None,
        expected_sha256=PROBE_SHA, other_sha256=other_sha256,
    )  # fmt: skip


def test_each_record_naming_its_own_binary_is_enforced() -> None:
    """Probe, other, probe: each record names its own binary, by sha256."""
    other = {"binary": OTHER, "decision": "deny"}  # a per-binary policy refused it
    result = _judge(_cell(), _records({"binary": PROBE}, other, {"binary": PROBE}))
    assert result.observed == "enforced", result
    assert result.reason == (
        f"attributed to /probe (sha256 {PROBE_SHA}); two binaries, interleaved, each named by"
        " its own record (probe 40001: /probe; other 40002: /helpers/other (deny);"
        " probe 40003: /probe; other 40004: /helpers/other (deny))"
    )
    assert [(c.id, c.outcome) for c in result.checks] == [
        ("attr-allowed-connect", "ok"),
        ("attr-two-binaries", "ok"),
    ]
    assert result.checks[1].detail == result.reason.split("; ", 1)[1]
    assert result.checks[1].control == "n/a"


def test_a_cached_identity_names_the_probe_for_the_other() -> None:
    """A supervisor that caches the first binary it saw: the other's connection is
    named as the probe. A violation naming both, the check shown as escaped."""
    result = _judge(_cell(), _records({"binary": PROBE}, {"binary": PROBE}, {"binary": PROBE}))
    assert result.observed == "violated"
    assert result.reason == (
        f"the other's connection (src_port 40002, /helpers/other, sha256 {OTHER_SHA[:16]}...)"
        f" is attributed to the probe's binary: /probe (sha256 {PROBE_SHA})"
    )
    assert result.checks[1].outcome == "escaped"
    assert result.checks[1].detail == result.reason


def test_the_other_passing_for_the_probe_named_as_the_probe_is_a_violation() -> None:
    """A supervisor that names a program by what it calls itself (its argv[0]): the other,
    started as the probe, is named as the probe on its fourth connection."""
    records = _records({"binary": PROBE}, {"binary": OTHER}, {"binary": PROBE}, {"binary": PROBE})
    result = _judge(_cell(), records)
    assert result.observed == "violated"
    assert result.reason == (
        f"the other's connection (src_port 40004, /helpers/other, sha256 {OTHER_SHA[:16]}...)"
        f" is attributed to the probe's binary: /probe (sha256 {PROBE_SHA})"
    )
    assert result.checks[1].outcome == "escaped"


def test_the_probe_named_as_the_other_is_a_violation() -> None:
    """The probe's later connection named as the other (cached the other way round)."""
    result = _judge(_cell(), _records({"binary": PROBE}, {"binary": OTHER}, {"binary": OTHER}))
    assert result.observed == "violated"
    assert result.reason == (
        f"the probe's connection (src_port 40003, sha256 {PROBE_SHA[:16]}...) is attributed"
        f" to the other's binary: /helpers/other (sha256 {OTHER_SHA})"
    )


@pytest.mark.parametrize(
    ("other", "named"),
    [
        ({"binary": {"path": "/usr/bin/bwrap", "sha256": "aa" * 32}}, "a binary: /usr/bin/bwrap"),
        ({"binary": {"path": "/helpers/other"}}, "a binary: /helpers/other (sha256 not given)"),
        ({"binary": {"path": "/x", "sha256": OTHER_SHA.upper()}}, None),
    ],
)
def test_a_binary_is_matched_by_its_sha256(other: dict[str, Any], named: str | None) -> None:
    """A third binary, or a path without its hash, is not the other; case does not matter."""
    result = _judge(_cell(), _records({"binary": PROBE}, other, {"binary": PROBE}))
    if named is None:
        assert result.observed == "enforced", result
        return
    assert result.observed == "violated"
    assert f"is attributed to {named}" in result.reason


def test_a_missing_or_doubled_record() -> None:
    """No record for a connection is a violation; two are ambiguous."""
    records = _records({"binary": PROBE}, {"binary": OTHER}, {"binary": PROBE})
    gone = _judge(_cell(), [r for r in records if r["src_port"] != 40002])
    assert gone.observed == "violated"
    assert gone.reason == "0 decision records for the other's connection (src_port 40002)"
    assert gone.checks[1].outcome == "ok"
    twice = _judge(_cell(), [*records, {"src_port": 40003, "binary": PROBE}])
    assert twice.observed == "inconclusive"
    assert twice.reason == "2 decision records for the probe's connection (src_port 40003)"
    elsewhere = [*records[:3], {"src_port": 40003, "dst": "10.9.9.9:1", "binary": PROBE}]
    elsewhere.append(records[4])  # the fourth's own record: only the third's is elsewhere
    assert _judge(_cell(), elsewhere).observed == "violated"


def test_endpoint_only_records_may_say_identity_is_unavailable() -> None:
    """Endpoint-only (gVisor behind the supervisor): identity unavailable with a reason
    is honest for every connection; without the declaration, or a reason, it is not."""
    hidden = {"identity": "Unavailable", "reason": "endpoint-only: the sentry"}
    records = _records(hidden, hidden, hidden)
    records[0] = {"src_port": 40112, "dst": DST, **hidden}
    result = _judge(_cell(), records, endpoint_only=True)
    assert result.observed == "enforced", result
    assert result.reason.endswith(
        "; two binaries, interleaved, no record naming the wrong one (probe 40001: identity"
        " unavailable; other 40002: identity unavailable; probe 40003: identity unavailable;"
        " other 40004: identity unavailable)"
    )
    mixed = _judge(_cell(), _records(hidden, {"binary": PROBE}, hidden), endpoint_only=True)
    assert mixed.observed == "violated"  # a name, when given, must still be the right one
    some = _judge(
        _cell(), _records({"binary": PROBE}, hidden, {"binary": PROBE}), endpoint_only=True
    )
    assert some.observed == "enforced"
    assert some.reason.endswith(
        "; two binaries, interleaved, no record naming the wrong one (probe 40001: /probe;"
        " other 40002: identity unavailable; probe 40003: /probe; other 40004: identity"
        " unavailable)"
    )
    records[2] = {"src_port": 40002, "dst": DST, "identity": "unavailable"}
    bare = _judge(_cell(), records, endpoint_only=True)
    assert bare.observed == "violated"
    assert bare.reason == "the record of the other's connection (src_port 40002) names no binary"
    assert bare.checks[1].outcome == "escaped"
    plain = _judge(_cell(), _records({"binary": PROBE}, hidden, {"binary": PROBE}))
    assert plain.observed == "violated"
    assert plain.reason == "the record of the other's connection (src_port 40002) names no binary"


@pytest.mark.parametrize(
    ("cell", "other_sha", "why", "shown"),
    [
        (_cell(outcome="error"), OTHER_SHA, "the probe's connections failed", "error"),
        (_cell(outcome="failed"), OTHER_SHA, "the probe's connections failed", "failed"),
        (
            _cell(ports={"port_1_probe": 40001, "port_3_probe": 40003}),
            OTHER_SHA,
            "a connection reported no source port",
            "error",
        ),
        (_cell(), None, "the sha256 of the probe or of `other` is unknown", "error"),
        (_cell(), "", "the sha256 of the probe or of `other` is unknown", "error"),
    ],
)
def test_where_other_cannot_run_the_check_is_not_judged(
    cell: CellRecord, other_sha: str | None, why: str, shown: str
) -> None:
    """Not judged, never a pass: the property rests on the one-binary connection, and the
    check is shown with what stopped it (an `ok` the host cannot judge as an error)."""
    result = _judge(cell, _records({"binary": PROBE}, {"binary": PROBE}, {"binary": PROBE}),
                    other_sha256=other_sha)  # fmt: skip
    assert result.observed == "enforced"
    assert result.reason == f"attributed to /probe (sha256 {PROBE_SHA})"
    check = result.checks[1]
    assert check.outcome == shown
    assert check.detail == f"not judged ({why}): {cell.checks[1].outcome} {cell.checks[1].detail}"


def test_the_probe_sha_is_needed_too() -> None:
    """Without the probe's sha256 neither connection can be told apart: not judged."""
    result = observe_attribution(
        _cell(), configured=True, endpoint_only=False, fetch_error=None, other_sha256=OTHER_SHA,
        decisions=_records({"binary": PROBE}, {"binary": PROBE}, {"binary": PROBE}),
    )  # fmt: skip
    assert result.observed == "enforced"
    assert result.checks[1].outcome == "error"


def test_not_asked_and_a_failed_first_connection() -> None:
    """Not asked: the one-binary judgement alone. A one-binary violation stands, with the
    two binaries' check beside it; an inconclusive one is returned as it is."""
    records = _records({"binary": PROBE}, {"binary": OTHER}, {"binary": PROBE})
    alone = _judge(_cell(two=False), records)
    assert alone.observed == "enforced" and [c.id for c in alone.checks] == ["attr-allowed-connect"]
    records[0] = {"src_port": 40112, "dst": DST, "binary": OTHER}
    wrong = _judge(_cell(), records)
    assert wrong.observed == "violated"
    assert wrong.reason.startswith("names the wrong binary: /helpers/other")
    assert [c.id for c in wrong.checks] == ["attr-allowed-connect", "attr-two-binaries"]
    assert wrong.checks[1].outcome == "ok"
    unknown = _judge(_cell(), [])
    assert unknown.observed == "violated" and len(unknown.checks) == 2
    broken = replace(_cell(), status=CellStatus.ERROR, reason="gone")
    assert _judge(broken, records).observed == "inconclusive"
    skipped = observe_attribution(
        _cell(), configured=False, endpoint_only=False, decisions=None, fetch_error=None
    )
    assert skipped.observed == "skipped" and skipped.checks == []
