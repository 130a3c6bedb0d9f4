"""Records turn into the JSON lines of a results folder exactly as dataclasses.asdict would."""

from __future__ import annotations

import dataclasses

from harness.results.records import (
    CellRecord,
    CellStatus,
    CheckResult,
    FactObservation,
    HostEvidence,
    ProbeCheck,
    Verdict,
    VerdictRecord,
)


def _cell() -> CellRecord:
    return CellRecord(
        run_id="r",
        host="h",
        runtime="runsc",
        kind="runsc",
        scenarios=["mechanisms", "egress-confinement"],
        status=CellStatus.COMPLETE,
        reason=None,
        started="2026-01-01T00:00:00Z",
        ended="2026-01-01T00:00:01Z",
        elapsed=1.5,
        probe_start={"type": "start", "pid": 1},
        facts=[FactObservation("landlock_abi", "mechanisms", "unavailable", errno="ENOSYS")],
        checks=[
            ProbeCheck(
                "tcp-raw-ip", "egress-confinement", "attempt", "blocked", evidence={"dst": ["a", 1]}
            )
        ],
        info={"x": {"nested": [1, 2, {"k": (3, 4)}]}},
        host_side=HostEvidence(tag="t", canary_events=[{"event": "tcp"}]),
    )


def test_cell_to_json_matches_asdict() -> None:
    """A cell record's JSON shape is asdict's, with the status as a plain string and
    the host evidence's unset fields left out."""
    cell = _cell()
    expected = dataclasses.asdict(cell)
    expected["status"] = "complete"
    expected["host_side"] = {"tag": "t", "canary_events": [{"event": "tcp"}]}
    assert cell.to_json() == expected


def test_host_evidence_round_trips_through_the_reader() -> None:
    """Host evidence written to cells.jsonl reads back as the same typed record; an
    evidence field never set is absent from the file, not null."""
    from harness.results.store.read import cell_from_json

    evidence = HostEvidence(
        tag="t", canary_events=[], canary_has=["ipv4"], settled=3.0, fs={"sentinel": "intact"}
    )
    cell = dataclasses.replace(_cell(), host_side=evidence)
    data = cell.to_json()
    assert "decisions" not in data["host_side"] and "canary_error" not in data["host_side"]
    assert cell_from_json(data).host_side == evidence
    assert cell_from_json({**data, "host_side": {}}).host_side == HostEvidence()


def test_verdict_to_json_matches_asdict() -> None:
    """A verdict's JSON shape is asdict's, minus the subject field it does not have."""
    verdict = VerdictRecord(
        host="h",
        runtime="runsc",
        expected="enforced",
        observed="enforced",
        verdict=Verdict.PASS,
        property="egress_confinement",
        checks=[CheckResult("tcp-raw-ip", "blocked", errno="ENETUNREACH", elapsed_ms=0.5)],
    )
    expected = dataclasses.asdict(verdict)
    expected["verdict"] = "pass"
    del expected["fact"]
    assert verdict.to_json() == expected


def test_to_json_is_an_independent_copy() -> None:
    """Changing the JSON form never changes the record it came from."""
    cell = _cell()
    data = cell.to_json()
    data["host_side"]["canary_events"].append({"event": "dns"})
    data["info"]["x"]["nested"][2]["k"] = None
    data["checks"][0]["evidence"]["dst"].append(2)
    assert cell.host_side.canary_events == [{"event": "tcp"}]
    assert cell.info["x"]["nested"][2] == {"k": (3, 4)}
    assert cell.checks[0].evidence["dst"] == ["a", 1]


def test_the_written_line_is_dump_of_to_json() -> None:
    """The store writes a record's `row()` (its parts made plain by the encoder, not
    copied first): the very line `dump(to_json())` gives, whatever the parts hold
    (phases, enums, tuples, non-ASCII text, a value JSON has no word for)."""
    from enum import Enum

    from harness.results.records import Phase
    from harness.results.store.layout import dump, dump_row

    class Odd(Enum):
        A = "a"

    @dataclasses.dataclass(frozen=True)
    class Empty:
        pass

    evidence = HostEvidence(
        tag="t",
        canary_events=[{"event": "tcp", "line": "é ✓ \u202e", "n": 1.5}],
        phases={"kill": Phase(0, 12, "killed")},
        fs={"sentinel": "intact", "odd": Odd.A, "empty": Empty(), "pair": (1, 2)},
        settled=0.0,
        canary_error="",
    )
    cell = dataclasses.replace(_cell(), host_side=evidence, status=CellStatus.ERROR)
    verdicts = [
        VerdictRecord("h", "runsc", "enforced", "violated", Verdict.REGRESSION, property="p"),
        VerdictRecord("h", "runsc", 7, None, Verdict.SKIPPED, fact="landlock_abi", errno="x"),
        VerdictRecord("h", "runsc", None, None, Verdict.PASS, checks=[CheckResult("c", "blocked")]),
    ]
    as_tuple = dataclasses.replace(_cell(), checks=tuple(_cell().checks))  # type: ignore[arg-type]
    for record in (cell, _cell(), as_tuple, *verdicts):
        assert dump_row(record.row()) == dump(record.to_json())
    assert isinstance(as_tuple.to_json()["checks"], tuple)  # as `_plain` always kept it
