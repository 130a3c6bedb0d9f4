"""`harness evidence --format openshell-confirmation`: upstream's BoundaryConfirmation,
field by field, from synthetic results folders.

UPSTREAM below is the field list and types of the published structs, transcribed
from NVIDIA/OpenShell's crates/openshell-isolation-interface/src/contract.rs (at
0e24fe61): BoundaryConfirmation, ResolvedWorkloadIdentity, BoundaryProperties,
EnforcedProperty, OuterFenceGuarantees, OuterFenceGuarantee, Sha256Digest (64 hex
digits), SandboxSessionId (a canonical lowercase UUID). A change upstream is made
here by hand, and the export must follow it: a drift fails these tests."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from harness.results import ResultsStore, Verdict, VerdictRecord
from tests.conftest import harness_cli
from tests.evidence.test_evidence import REGISTRY, SCHEMAS
from tests.evidence.test_fence import SUPERVISED, SWEPT, _allowed
from tests.results.cells import record

SESSION = "550e8400-e29b-41d4-a716-446655440000"
UPSTREAM: dict[str, Any] = {
    "generation": str,
    "identity": {
        "uid": int,
        "gid": int,
        "supplementary_gids": [int],
        "source": str,
        "resource_digest": str,
    },
    "properties": {
        name: {"enforced": bool, "mechanism": str}
        for name in (
            "filesystem_confinement",
            "egress_interception",
            "request_attribution",
            "privilege_floor",
        )
    },
    "authenticated_supervisor": bool,
    "session_id": str,
    "outer_fence": {"generation": str, "established": [str], "evidence_digest": str},
    "runtime_exit_terminates_workload": bool,
    "resource_claims": {str: str},
    "backend_audit": object,  # serde_json::Value
}
GUARANTEE_NAMES = {
    "default_deny_egress",
    "no_unmanaged_egress_path",
    "revocation_verified",
    "controller_loss_fails_closed",
}
ALL_ENFORCED = {
    p: "enforced"
    for p in (
        "filesystem_confinement", "egress_confinement", "attribution", "privilege_floor",
        "revocation_verified", "controller_loss_fails_closed",
    )
}  # fmt: skip
SCENARIOS = [
    "filesystem-confinement", "egress-confinement", "attribution", "privilege-floor",
    "revocation", "controller-loss",
]  # fmt: skip


def _start(uid: int, gid: int, groups: str = "") -> dict[str, Any]:
    return {
        "id": "priv-start", "scenario": "privilege-floor", "outcome": "blocked",
        "detail": f"uid {uid}", "evidence": {"uid": uid, "gid": gid, "groups": groups},
    }  # fmt: skip


def _folder(
    tmp_path: Path,
    *,
    uid: int = 1000,
    gid: int = 1000,
    groups: str = "27,1000",
    observed: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
    survivors: list[str] | None = None,
) -> Path:
    """One runtime `r` on host `h`, supervised, its identity as priv-start saw it, and
    what of it the host saw left after its runtime exited (none by default)."""
    seen = observed or ALL_ENFORCED
    store = ResultsStore(tmp_path / "run")
    store.open()
    try:
        checks = [_allowed(), _start(uid, gid, groups)]
        host_side = {**SUPERVISED, "survivors": [] if survivors is None else survivors}
        if survivors == ["not measured"]:
            del host_side["survivors"]
        store.add_cell(record(SCENARIOS, checks, host_side, host="h", runtime="r"))
        store.add_verdicts([
            VerdictRecord(
                host="h", runtime="r", property=prop, expected="enforced", observed=o,
                verdict=Verdict.PASS if o == "enforced" else Verdict.REGRESSION,
                reason=f"{prop} was {o}", checks=SWEPT if prop == "egress_confinement" else [],
            )
            for prop, o in seen.items()
        ])  # fmt: skip
        runtime = spec if spec is not None else {
            "mechanisms": {
                "filesystem_confinement": "landlock", "egress_interception": "netns+proxy",
                "request_attribution": "proxy", "privilege_floor": "nnp",
            },
            "openshell": {"generation": "g7", "session_id": SESSION,
                          "resource_claims": {"cpu": "2"}},
        }  # fmt: skip
        store.write_manifest({"matrix": {"sha256": "m"}, "runtimes": {"r": runtime}})
    finally:
        store.close()
    return tmp_path / "run"


def _export(folder: Path, *flags: str, code: int = 0) -> tuple[dict[str, Any], str]:
    result = harness_cli(
        "evidence", folder, "--format", "openshell-confirmation", "--stdout", *flags
    )
    assert result.code == code, result.stdout + result.stderr
    (doc,) = json.loads(result.stdout)
    validator = Draft202012Validator(
        SCHEMAS["openshell-confirmation.schema.json"], registry=REGISTRY
    )
    errors = sorted(validator.iter_errors(doc), key=str)
    assert not errors, errors[0].message
    return doc, result.stderr


def _shape(value: Any, want: Any, where: str) -> None:
    """`value` has exactly upstream's fields, each of its type (recursively)."""
    if want is object:
        return
    if isinstance(want, dict) and len(want) == 1 and next(iter(want)) is str:
        assert isinstance(value, dict), where
        for k, v in value.items():
            assert isinstance(k, str) and isinstance(v, str), f"{where}.{k}"
        return
    if isinstance(want, dict):
        assert isinstance(value, dict) and set(value) == set(want), (where, sorted(value))
        for key, sub in want.items():
            _shape(value[key], sub, f"{where}.{key}")
        return
    if isinstance(want, list):
        assert isinstance(value, list), where
        for i, item in enumerate(value):
            _shape(item, want[0], f"{where}[{i}]")
        return
    assert type(value) is want, (where, value)  # bool is not an int here


def test_the_export_has_upstreams_fields_and_types_and_passes_its_check(tmp_path: Path) -> None:
    """A supervised non-root sandbox, every property enforced, nothing of it left once
    its runtime exited, bound by its runtime entry: upstream's shape exactly, and its
    check passes (exit 0)."""
    doc, stderr = _export(_folder(tmp_path))
    _shape(doc, UPSTREAM, "$")
    assert doc["generation"] == doc["outer_fence"]["generation"] == "g7"
    assert doc["session_id"] == SESSION and doc["resource_claims"] == {"cpu": "2"}
    assert doc["identity"]["uid"] == 1000 and doc["identity"]["gid"] == 1000
    assert doc["identity"]["supplementary_gids"] == [27]  # the primary group dropped
    assert len(doc["identity"]["resource_digest"]) == 64
    assert set(doc["outer_fence"]["established"]) == GUARANTEE_NAMES
    assert all(p["enforced"] and p["mechanism"] for p in doc["properties"].values())
    assert doc["authenticated_supervisor"] is True
    assert doc["runtime_exit_terminates_workload"] is True
    assert stderr == ""
    audit = doc["backend_audit"]["harness"]
    assert "nothing of the cell ran on the host" in audit["runtime_exit_terminates_workload"]


@pytest.mark.parametrize(
    ("survivors", "why"),
    [
        (["4242 /w/probe run --tag harness-x-00001"], "the workload outlived the runtime: 4242"),
        (["not measured"], "not measured: the host cannot see what this runtime leaves"),
    ],
)
def test_a_workload_that_outlives_its_runtime_fails(
    tmp_path: Path, survivors: list[str], why: str
) -> None:
    """The probe's lingerer still running after the runtime exited (or nobody looked):
    runtime_exit_terminates_workload is false, and upstream's check fails on it."""
    doc, stderr = _export(_folder(tmp_path, survivors=survivors), code=1)
    assert doc["runtime_exit_terminates_workload"] is False
    assert doc["backend_audit"]["harness"]["runtime_exit_terminates_workload"].startswith(why)
    assert (
        stderr.strip() == "h/r: runtime exit does not (or is not shown to) terminate the workload"
    )


def test_the_fence_digest_is_upstreams_over_the_records(tmp_path: Path) -> None:
    """evidence_digest = SHA-256(u64 BE length of generation, generation, native
    evidence), the native evidence being the record lines the document rests on."""
    folder = _folder(tmp_path)
    doc, _ = _export(folder, "--generation", "gen-2")
    cell = (folder / "cells.jsonl").read_bytes()
    verdicts = (folder / "verdicts.jsonl").read_bytes()
    native = b"".join(line + b"\n" for line in (cell + verdicts).splitlines())
    want = hashlib.sha256(len(b"gen-2").to_bytes(8, "big") + b"gen-2" + native).hexdigest()
    assert doc["outer_fence"]["evidence_digest"] == want
    assert doc["generation"] == "gen-2"  # the flag over the runtime entry


def test_a_root_workload_is_no_identity_and_fails_the_privilege_floor(tmp_path: Path) -> None:
    """uid or gid 0 cannot be an OpenShell workload identity, whatever harness's own
    verdict: privilege_floor is not enforced in the confirmation, and the reason says so."""
    for uid, gid, groups in ((0, 0, ""), (1000, 0, ""), (1000, 1000, "0")):
        doc, stderr = _export(_folder(tmp_path / f"{uid}-{gid}-{groups}", uid=uid, gid=gid,
                                      groups=groups), code=1)  # fmt: skip
        assert doc["properties"]["privilege_floor"]["enforced"] is False
        why = doc["backend_audit"]["properties"]["privilege_floor"]["why_not_enforced"]
        assert "OpenShell never runs a workload as root" in why
        assert "h/r: workload identity contains uid or gid 0" in stderr


def test_nothing_undeclared_or_unbound_passes(tmp_path: Path) -> None:
    """No mechanism declared: exported empty (never "undeclared", which would pass
    upstream's non-empty check); no generation or session id: both refused."""
    doc, stderr = _export(_folder(tmp_path, spec={}), code=1)
    assert {p["mechanism"] for p in doc["properties"].values()} == {""}
    assert doc["generation"] == "" and doc["session_id"] == ""
    for why in (
        "filesystem_confinement has no declared mechanism",
        "no generation",
        "no session id",
        "outer fence bound to another generation (or none)",
    ):
        assert f"h/r: {why}" in stderr, stderr


def test_a_property_not_enforced_is_named(tmp_path: Path) -> None:
    seen = {**ALL_ENFORCED, "filesystem_confinement": "violated"}
    doc, stderr = _export(_folder(tmp_path, observed=seen), code=1)
    assert doc["properties"]["filesystem_confinement"]["enforced"] is False
    assert "h/r: filesystem_confinement not enforced" in stderr


@pytest.mark.parametrize(
    "bad",
    ["not-a-uuid", "550E8400-E29B-41D4-A716-446655440000", "0" * 8 + "-0000-0000-0000-" + "0" * 12],
)
def test_a_bad_session_id_is_bad_input(tmp_path: Path, bad: str) -> None:
    result = harness_cli(
        "evidence", _folder(tmp_path), "--format", "openshell-confirmation", "--session-id", bad
    )
    assert result.code == 2 and "--session-id" in result.stderr, result.stderr
