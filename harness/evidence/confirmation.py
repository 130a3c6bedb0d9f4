"""OpenShell's `BoundaryConfirmation`, field by field, as its interface crate
deserializes it (crates/openshell-isolation-interface/src/contract.rs; facts of the
published types, docs/evidence.md), and the result of its `validate()`.

What the caller binds (never measured): `generation` and `session_id` (flags, or the
runtime entry's `openshell` table), `resource_claims` (declared). What is measured:
`identity` (priv-start's uid, gid and groups), the four `properties` (as the
`openshell` format), `outer_fence.established` (evidence/fence.py), and
`authenticated_supervisor` (the attribution verdict), `runtime_exit_terminates_workload`
(what of the cell the host saw left after the sandbox command ended; `false` where that
was not measured: harness does not vouch for what it did not see). harness's reasons
for every field go in `backend_audit`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from harness.evidence.fence import GUARANTEES, measure
from harness.evidence.openshell import backend_audit, contract_properties
from harness.evidence.source import CellEvidence
from harness.results.store.manifest import Manifest

FORMAT = "openshell-confirmation"
# upstream's SandboxSessionId: a canonical lowercase UUID, not the nil one.
SESSION_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
NIL_SESSION = "00000000-0000-0000-0000-000000000000"
# upstream's OuterFenceGuarantee in declaration order (a BTreeSet serializes so).
FENCE_ORDER = (
    "default_deny_egress",
    "no_unmanaged_egress_path",
    "revocation_verified",
    "controller_loss_fails_closed",
)


def runtime_exit(ev: CellEvidence) -> tuple[bool, str]:
    """Whether the runtime's exit ended the workload, as measured (execution.survivors):
    the probe left a process of its own behind, and once the sandbox command ended
    nothing whose command line names the cell ran on the host."""
    host_side = ev.cell.get("host_side") or {}
    left = host_side.get("survivors")
    if ev.cell.get("status") != "complete":
        return False, f"not measured: the cell did not complete ({ev.cell.get('status')})"
    if left is None:
        return False, (
            "not measured: the host cannot see what this runtime leaves behind (a kernel"
            " of its own whose processes do not name the cell), or could not be asked"
        )
    if left:
        return False, f"the workload outlived the runtime: {'; '.join(map(str, left))}"
    return True, (
        "the probe left a process of its own behind, and nothing of the cell ran on the"
        " host once the runtime had exited"
    )


def session_id_problem(value: str) -> str | None:
    """Why `value` is not a session id upstream accepts (None: it is one)."""
    if not SESSION_ID.fullmatch(value) or value == NIL_SESSION:
        return f"session id {value!r} is not a non-nil canonical lowercase UUID"
    return None


@dataclass(frozen=True, slots=True)
class Binding:
    """What the caller binds the confirmation to (flags override the runtime entry)."""

    generation: str | None = None
    session_id: str | None = None

    def for_cell(self, ev: CellEvidence) -> tuple[str, str]:
        declared = ev.runtime_spec.get("openshell") or {}
        return (
            self.generation or str(declared.get("generation") or ""),
            self.session_id or str(declared.get("session_id") or ""),
        )


def fence_digest(generation: str, native_evidence: bytes) -> str:
    """upstream's evidence_digest: SHA-256 over the generation's length (u64, big
    endian), the generation, then the native evidence; 64 hex digits."""
    raw = generation.encode()
    return hashlib.sha256(len(raw).to_bytes(8, "big") + raw + native_evidence).hexdigest()


def native_evidence(ev: CellEvidence) -> bytes:
    """The record lines the confirmation rests on, exactly as read (the cell's, then
    its verdicts'), each ending with one newline: what `evidence_digest` commits to."""
    return b"".join(line.rstrip(b"\n") + b"\n" for line in ev.raw_lines)


def identity(ev: CellEvidence) -> tuple[dict[str, Any], dict[str, Any]]:
    """ResolvedWorkloadIdentity from what priv-start measured, and its audit entry."""
    start = ev.checks().get("priv-start") or {}
    seen = start.get("evidence") or {}
    policy = ev.runtime_spec.get("policy") or {}
    process = policy.get("process") or {} if isinstance(policy, dict) else {}
    uid, gid = seen.get("uid"), seen.get("gid")
    groups = sorted({int(g) for g in str(seen.get("groups") or "").split(",") if g.strip()})
    measured = isinstance(uid, int) and isinstance(gid, int)
    digest = str(policy.get("sha256") or "") if isinstance(policy, dict) else ""
    if not digest:  # no policy file: the runtime entry the sandbox was started from
        spec = json.dumps(ev.runtime_spec, sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(spec.encode()).hexdigest()
    found = {
        "uid": uid if measured else 0,
        "gid": gid if measured else 0,
        # upstream's constructor drops the primary group from the supplementary ones
        "supplementary_gids": [g for g in groups if g != gid],
        "source": "policy" if process.get("run_as_user") else "image",
        "resource_digest": digest,
    }
    audit: dict[str, Any] = {
        "measured_by": "priv-start" if measured else None,
        "detail": start.get("detail"),
    }
    if not measured:
        audit["problem"] = "not measured: the privilege-floor scenario did not run"
    elif 0 in (uid, gid) or 0 in groups:
        audit["problem"] = "uid or gid 0: OpenShell never runs a workload as root"
    return found, audit


def authenticated_supervisor(ev: CellEvidence) -> tuple[bool, str]:
    """True where the attribution verdict is enforced: the allowed connection's decision
    record, carrying this cell's nonce, came from the supervisor the runtime names."""
    row = ev.property_rows().get("attribution")
    if row is None:
        return False, "attribution was not among the run's scenarios"
    observed, reason = str(row.get("observed")), str(row.get("reason") or "")
    return observed == "enforced", f"attribution {observed}" + (f": {reason}" if reason else "")


def confirmation(ev: CellEvidence, manifest: Manifest, binding: Binding) -> dict[str, Any]:
    """The BoundaryConfirmation document for one (host, runtime)."""
    generation, session_id = binding.for_cell(ev)
    who, who_audit = identity(ev)
    properties, audit = contract_properties(ev)
    if "problem" in who_audit and properties["privilege_floor"]["enforced"]:
        properties["privilege_floor"]["enforced"] = False
        audit["privilege_floor"]["why_not_enforced"] = who_audit["problem"]
    mechanisms: dict[str, str] = {}
    for name, prop in properties.items():
        if not prop["mechanism"]:  # the openshell format exports none as empty
            mechanisms[name] = "undeclared in the runtime entry: exported empty"
    fence = {g: measure(ev, g) for g in GUARANTEES}
    supervised, supervised_why = authenticated_supervisor(ev)
    exit_ends, exit_why = runtime_exit(ev)
    claims = (ev.runtime_spec.get("openshell") or {}).get("resource_claims") or {}
    audit_doc = backend_audit(ev, audit)
    audit_doc["harness"] = {
        "host": ev.host,
        "runtime": ev.runtime,
        "identity": who_audit,
        "mechanisms": mechanisms,
        "outer_fence": {g: {"status": m.status, "reason": m.reason} for g, m in fence.items()},
        "authenticated_supervisor": supervised_why,
        "runtime_exit_terminates_workload": exit_why,
        "binding": {
            "generation": "flag" if binding.generation else "runtime entry",
            "session_id": "flag" if binding.session_id else "runtime entry",
        },
        "source": {
            "run_id": manifest.run_id,
            "matrix_sha256": manifest.matrix_sha256,
            "harness_version": manifest.harness_version,
        },
    }
    return {
        "generation": generation,
        "identity": who,
        "properties": properties,
        "authenticated_supervisor": supervised,
        "session_id": session_id,
        "outer_fence": {
            "generation": generation,
            "established": [g for g in FENCE_ORDER if fence[g].status == "established"],
            "evidence_digest": fence_digest(generation, native_evidence(ev)),
        },
        "runtime_exit_terminates_workload": exit_ends,
        "resource_claims": {str(k): str(v) for k, v in claims.items()},
        "backend_audit": audit_doc,
    }


def upstream_failures(doc: dict[str, Any]) -> list[str]:
    """What upstream's `BoundaryConfirmation::validate` (and the identity's and session
    id's constructors) would refuse in `doc`, in its order; empty: it passes. The
    expected identity is the caller's: this checks it is one upstream can hold."""
    failed: list[str] = []
    fence = doc["outer_fence"]
    if not fence["generation"] or fence["generation"] != doc["generation"]:
        failed.append("outer fence bound to another generation (or none)")
    missing = [g for g in FENCE_ORDER if g not in fence["established"]]
    if missing:
        failed.append(f"outer fence guarantees not established: {', '.join(missing)}")
    for name, prop in doc["properties"].items():
        if not prop["enforced"]:
            failed.append(f"{name} not enforced")
        elif not prop["mechanism"].strip():
            failed.append(f"{name} has no declared mechanism")
    who = doc["identity"]
    if 0 in (who["uid"], who["gid"]) or 0 in who["supplementary_gids"]:
        failed.append("workload identity contains uid or gid 0")
    if not doc["authenticated_supervisor"]:
        failed.append("no authenticated supervisor")
    if not doc["runtime_exit_terminates_workload"]:
        failed.append("runtime exit does not (or is not shown to) terminate the workload")
    if not doc["generation"]:
        failed.append("no generation")
    problem = session_id_problem(doc["session_id"]) if doc["session_id"] else "no session id"
    if problem:
        failed.append(problem)
    return failed
