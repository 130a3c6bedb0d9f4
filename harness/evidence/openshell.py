"""The new contract's shape: four properties, each `{enforced, mechanism}`.

`enforced` comes only from a measured property observation (enforced -> true;
violated, inconclusive or not measured -> false, with the reason in the audit).
`mechanism` is whatever the runtime entry declared; it is copied, never consulted.

Mapping from harness properties to the contract's (docs/evidence.md):
- filesystem_confinement <- filesystem_confinement
- egress_interception    <- egress_confinement AND attribution (the supervisor
                            confines egress and sees the allowed connection)
- request_attribution    <- attribution
- privilege_floor        <- privilege_floor

Beside them, `outer_fence`: the four OuterFenceGuarantees as measured (evidence/fence.py).
"""

from __future__ import annotations

from typing import Any

from harness.evidence.fence import outer_fence
from harness.evidence.source import CellEvidence
from harness.results.store.manifest import Manifest
from harness.scenarios.base import Property

SCHEMA = "https://harness.invalid/schemas/openshell-boundary-confirmation-v1.json"
CONTRACT: dict[str, tuple[Property, ...]] = {
    "filesystem_confinement": ("filesystem_confinement",),
    "egress_interception": ("egress_confinement", "attribution"),
    "request_attribution": ("attribution",),
    "privilege_floor": ("privilege_floor",),
}


def observation(ev: CellEvidence, prop: Property) -> tuple[str, str | None]:
    """(observed, reason) for a harness property in this cell; not measured -> why."""
    row = ev.property_rows().get(prop)
    if row is None:
        return "not-measured", f"{prop} was not among the run's scenarios"
    return str(row.get("observed")), row.get("reason")


def contract_properties(ev: CellEvidence) -> tuple[dict[str, Any], dict[str, Any]]:
    """The four contract properties, and the audit entry explaining each value."""
    declared = ev.runtime_spec.get("mechanisms") or {}
    properties: dict[str, Any] = {}
    audit: dict[str, Any] = {}
    for name, sources in CONTRACT.items():
        seen = {src: observation(ev, src) for src in sources}
        enforced = all(observed == "enforced" for observed, _ in seen.values())
        properties[name] = {
            "enforced": enforced,
            # Undeclared is empty, never a word upstream's non-empty check would pass.
            "mechanism": str(declared.get(name, "")),
        }
        audit[name] = {
            "from": {src: {"observed": o, "reason": r} for src, (o, r) in seen.items()},
            **({} if enforced else {"why_not_enforced": _why(seen)}),
        }
    return properties, audit


def _why(seen: dict[Property, tuple[str, str | None]]) -> str:
    parts = [
        f"{src} {o}" + (f": {r}" if r else "") for src, (o, r) in seen.items() if o != "enforced"
    ]
    return "; ".join(parts)


def backend_audit(ev: CellEvidence, property_audit: dict[str, Any]) -> dict[str, Any]:
    """Mechanism facts, runtime fingerprint and versions: diagnostic only."""
    facts = {
        fid: {k: f.get(k) for k in ("status", "value", "errno", "detail") if f.get(k) is not None}
        for fid, f in ev.facts().items()
    }
    cell = ev.cell
    declared = ev.runtime_spec.get("policy") or None
    return {
        # The policy the sandbox was judged against (docs/policy.md): where it came
        # from and the digest of what was read; none, harness's own grants alone.
        "policy": (
            {"source": declared.get("source"), "sha256": declared.get("sha256")}
            if isinstance(declared, dict)
            else None
        ),
        "mechanism_facts": facts,
        "fingerprint": {
            "kind": cell.get("kind"),
            "runtime_version": cell.get("runtime_version"),
            "sandbox_kernel": ev.facts().get("kernel_release", {}).get("value"),
            "host_kernel": cell.get("host_kernel"),
            "machine": ev.host_info.machine,
        },
        "cell": {"status": cell.get("status"), "reason": cell.get("reason")},
        "properties": property_audit,
    }


def openshell_document(ev: CellEvidence, manifest: Manifest) -> dict[str, Any]:
    properties, audit = contract_properties(ev)
    return {
        "$schema": SCHEMA,
        "host": ev.host,
        "runtime": ev.runtime,
        "properties": properties,
        "outer_fence": outer_fence(ev),
        "backend_audit": backend_audit(ev, audit),
        "evidence_digest": ev.digest,
        "source": {
            "run_id": manifest.run_id,
            "matrix_sha256": manifest.matrix_sha256,
            "harness_version": manifest.harness_version,
        },
    }
