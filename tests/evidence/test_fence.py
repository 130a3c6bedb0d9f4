"""The outer fence in the evidence: measured guarantees, declared mechanisms shown as
declared, and a commitment to the records each rests on (synthetic results folders)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from harness.results import ResultsStore, Verdict, VerdictRecord
from harness.results.records import CheckResult
from tests.conftest import harness_cli
from tests.evidence.test_evidence import _validator
from tests.results.cells import TAG, record

DST = "10.251.0.2:8081"
UPSTREAM = "10.251.0.1:51234"
SCENARIOS = ["egress-confinement", "attribution", "revocation", "controller-loss"]
ENFORCED = {
    "egress_confinement": "enforced",
    "attribution": "enforced",
    "revocation_verified": "enforced",
    "controller_loss_fails_closed": "enforced",
}
# A named attempt and one of the sweep's lines.
SWEPT = [CheckResult(id=i, outcome="blocked") for i in ("tcp-denied-name", "tcp4-22")]


def _allowed(outcome: str = "ok") -> dict[str, Any]:
    return {
        "id": "attr-allowed-connect", "scenario": "attribution", "kind": "control",
        "outcome": outcome, "errno": None if outcome == "ok" else "ENETUNREACH",
        "evidence": {"src_port": 40112, "dst": DST},
    }  # fmt: skip


def _arrival(peer: str) -> dict[str, Any]:
    return {"event": "tcp", "peer": peer, "line": f"HARNESS {TAG} attr-allowed-connect"}


SUPERVISED = {
    "decisions": [{"src_port": 40112, "dst": DST, "binary": {"path": "/p"}, "upstream": UPSTREAM}],
    "canary_events": [_arrival(UPSTREAM)],
}


def _folder(
    tmp_path: Path,
    *,
    observed: dict[str, str],
    host_side: dict[str, Any] | None = None,
    allowed: str = "ok",
    checks: list[CheckResult] | None = None,
    mechanisms: dict[str, str] | None = None,
) -> Path:
    """One runtime `r` on host `h`: a cell and a verdict per property in `observed`."""
    judged = checks if checks is not None else SWEPT
    store = ResultsStore(tmp_path / "run")
    store.open()
    try:
        store.add_cell(record(SCENARIOS, [_allowed(allowed)], host_side, host="h", runtime="r"))
        store.add_verdicts([
            VerdictRecord(
                host="h", runtime="r", property=prop, expected="enforced", observed=seen,
                verdict=Verdict.PASS if seen == "enforced" else Verdict.SKIPPED,
                reason=f"{prop} was {seen}",
                checks=judged if prop == "egress_confinement" else [],
            )
            for prop, seen in observed.items()
        ])  # fmt: skip
        spec = {"mechanisms": mechanisms} if mechanisms else {}
        store.write_manifest({"matrix": {"sha256": "m"}, "runtimes": {"r": spec}})
    finally:
        store.close()
    return tmp_path / "run"


def _fence(folder: Path) -> dict[str, dict[str, Any]]:
    result = harness_cli("evidence", folder, "--stdout")
    assert result.code == 0, result.stderr
    (doc,) = json.loads(result.stdout)
    errors = sorted(_validator("openshell").iter_errors(doc), key=str)
    assert not errors, errors[0].message
    fence: dict[str, dict[str, Any]] = doc["outer_fence"]
    return fence


def _status(fence: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {g: v["status"] for g, v in fence.items()}


def test_a_supervised_sandbox_establishes_all_four(tmp_path: Path) -> None:
    """Every verdict enforced, the sweep judged, the allowed connection only through the
    record's upstream: all four established, each with its generation."""
    fence = _fence(_folder(tmp_path, observed=ENFORCED, host_side=SUPERVISED))
    assert set(_status(fence).values()) == {"established"}
    assert fence["default_deny_egress"]["reason"] == (
        "every denied destination refused: 2 attempts, 1 of the sweep"
    )
    assert UPSTREAM in fence["no_unmanaged_egress_path"]["reason"]
    assert {v["generation"] for v in fence.values()} == {1}
    assert {v["declared"] for v in fence.values()} == {"undeclared"}


def test_what_is_only_declared_is_never_established(tmp_path: Path) -> None:
    """Mechanisms declared for every guarantee, nothing measured: every guarantee is
    not measured, the declaration shown beside it, in the document and in --compare."""
    declared = {
        "default_deny_egress": "network none",
        "no_unmanaged_egress_path": "single veth",
        "revocation_verified": "policy reload",
        "controller_loss_fails_closed": "nftables default drop",
    }
    skipped = dict.fromkeys(ENFORCED, "skipped")
    folder = _folder(tmp_path, observed=skipped, mechanisms=declared)
    fence = _fence(folder)
    assert _status(fence) == dict.fromkeys(declared, "not-measured")
    assert {g: v["declared"] for g, v in fence.items()} == declared
    result = harness_cli("evidence", folder, "--compare")
    assert result.code == 0, result.stderr
    row = next(
        ln for ln in result.stdout.splitlines() if ln.startswith("│ h/r") and "declared" in ln
    )
    cells = [c.strip() for c in row.split("│")[2:-1]]
    assert cells == [f"not measured (declared: {declared[g]})" for g in declared], cells
    assert "established" not in row


@pytest.mark.parametrize(
    ("observed", "status"),
    [("violated", "not-established"), ("inconclusive", "not-established"),
     ("flaky", "not-established"), ("skipped", "not-measured")],
)  # fmt: skip
def test_each_verdict_maps_to_a_status(tmp_path: Path, observed: str, status: str) -> None:
    """Measured and failed or unproven: not established; skipped: not measured."""
    seen = dict.fromkeys(ENFORCED, observed)
    fence = _fence(_folder(tmp_path, observed=seen, host_side=SUPERVISED))
    assert _status(fence) == dict.fromkeys(fence, status)
    assert fence["revocation_verified"]["reason"] == (
        f"revocation_verified {observed}: revocation_verified was {observed}"
    )


def test_a_guarantee_whose_scenario_did_not_run_is_not_measured(tmp_path: Path) -> None:
    fence = _fence(_folder(tmp_path, observed={"egress_confinement": "enforced"}))
    assert fence["revocation_verified"]["status"] == "not-measured"
    assert fence["revocation_verified"]["reason"] == (
        "revocation_verified was not among the run's scenarios"
    )
    assert fence["revocation_verified"]["rests_on"] == ["cell"]


def test_default_deny_needs_the_sweep(tmp_path: Path) -> None:
    """egress_confinement enforced on named attempts alone does not show every denied
    destination refused."""
    named = [CheckResult(id="tcp-denied-name", outcome="blocked")]
    fence = _fence(_folder(tmp_path, observed=ENFORCED, host_side=SUPERVISED, checks=named))
    assert fence["default_deny_egress"]["status"] == "not-established"
    assert fence["default_deny_egress"]["reason"] == "egress_confinement enforced without the sweep"
    assert fence["no_unmanaged_egress_path"]["status"] == "not-established"


@pytest.mark.parametrize(
    ("host_side", "allowed", "status", "reason"),
    [
        # Around the supervisor: the canary saw the allowed connection from elsewhere too.
        ({**SUPERVISED, "canary_events": [_arrival(UPSTREAM), _arrival("10.251.0.1:40112")]},
         "ok", "not-established", "route violated: the allowed destination was reached around"),
        # An external source whose record names no upstream: nothing ties the route.
        ({**SUPERVISED, "decisions": [{"src_port": 40112, "dst": DST, "binary": {"path": "/p"}}]},
         "ok", "not-measured", "the decision record names no upstream connection"),
        # No record source and nothing out, the allowed destination included: no path.
        ({"canary_events": []}, "failed", "established", "no path out at all"),
        # ... unless the canary saw the allowed connection anyway.
        ({"canary_events": [_arrival("10.251.0.1:40112")]}, "failed", "not-measured",
         "no decision records"),
        # No record source but the allowed destination reached: what carried it is unknown.
        ({"canary_events": [_arrival("10.251.0.1:40112")]}, "ok", "not-measured",
         "no decision records"),
        # No canary log: nothing shows the allowed connection stayed in.
        ({}, "failed", "not-measured", "no decision records"),
    ],
)  # fmt: skip
def test_no_unmanaged_egress_path(
    tmp_path: Path, host_side: dict[str, Any], allowed: str, status: str, reason: str
) -> None:
    fence = _fence(_folder(tmp_path, observed=ENFORCED, host_side=host_side, allowed=allowed))
    found = fence["no_unmanaged_egress_path"]
    assert found["status"] == status
    assert reason in found["reason"], found["reason"]


def test_the_commitment_is_the_digest_of_the_records_it_rests_on(tmp_path: Path) -> None:
    """Recomputed from the folder: the cell's line, then each verdict named in rests_on;
    a changed verdict changes only the commitments resting on it."""
    folder = _folder(tmp_path, observed=ENFORCED, host_side=SUPERVISED)
    fence = _fence(folder)
    cell = (folder / "cells.jsonl").read_bytes().splitlines()[0]
    verdicts = {
        json.loads(line)["property"]: line
        for line in (folder / "verdicts.jsonl").read_bytes().splitlines()
    }
    for found in fence.values():
        lines = [cell, *(verdicts[r.removeprefix("verdict:")] for r in found["rests_on"][1:])]
        digest = hashlib.sha256(b"".join(line + b"\n" for line in lines)).hexdigest()
        assert found["commitment"] == f"sha256:{digest}"
    assert fence["no_unmanaged_egress_path"]["rests_on"] == [
        "cell", "verdict:egress_confinement", "verdict:attribution",
    ]  # fmt: skip
    text = (folder / "verdicts.jsonl").read_text()
    changed = text.replace("attribution was enforced", "attribution was  enforced")
    (folder / "verdicts.jsonl").write_text(changed)
    after = _fence(folder)
    assert (
        after["no_unmanaged_egress_path"]["commitment"]
        != (fence["no_unmanaged_egress_path"]["commitment"])
    )
    for same in ("default_deny_egress", "revocation_verified", "controller_loss_fails_closed"):
        assert after[same]["commitment"] == fence[same]["commitment"]
