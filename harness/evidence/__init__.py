"""Evidence for OpenShell's confirm step, exported from a results folder.

Four formats: `openshell` (properties, each {enforced, mechanism}),
`openshell-confirmation` (upstream's BoundaryConfirmation, field by field),
`openshell-legacy` (the older mechanism-based struct and its validate() result),
and `json` (the first and third, plus harness's own observations). See docs/evidence.md.
"""

from __future__ import annotations

from typing import Any

from harness.evidence.confirmation import FORMAT as CONFIRMATION
from harness.evidence.confirmation import Binding, confirmation
from harness.evidence.legacy import legacy_document
from harness.evidence.openshell import observation, openshell_document
from harness.evidence.source import CellEvidence, load_evidence
from harness.results.store.manifest import Manifest
from harness.scenarios.base import PROPERTIES

FORMATS = ("openshell", CONFIRMATION, "openshell-legacy", "json")
HARNESS_PROPERTIES = PROPERTIES

__all__ = [
    "CONFIRMATION",
    "FORMATS",
    "HARNESS_PROPERTIES",
    "Binding",
    "CellEvidence",
    "document",
    "load_evidence",
]


def document(
    ev: CellEvidence, manifest: Manifest, fmt: str, binding: Binding | None = None
) -> dict[str, Any]:
    """One evidence document for one (host, runtime) in the asked format."""
    if fmt == "openshell":
        return openshell_document(ev, manifest)
    if fmt == CONFIRMATION:
        return confirmation(ev, manifest, binding or Binding())
    if fmt == "openshell-legacy":
        return legacy_document(ev, manifest, binding)
    return {
        "host": ev.host,
        "runtime": ev.runtime,
        "observations": {
            prop: dict(zip(("observed", "reason"), observation(ev, prop), strict=True))
            for prop in HARNESS_PROPERTIES
        },
        "openshell": openshell_document(ev, manifest),
        "openshell_legacy": legacy_document(ev, manifest, binding),
        "evidence_digest": ev.digest,
    }
