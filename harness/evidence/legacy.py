"""The older `SandboxConfirmEvidence` shape, filled from measured facts, with the
older `validate()` rules applied and every failing condition named.

This exists to show plainly why a gVisor backend fails the old contract (it lacks
two Linux mechanisms) while enforcing the properties the contract is about.

The round-trip fields are filled from the probe's attempts: a round trip is true
when the attempt completed with a definite answer (blocked or escaped for denied
destinations, a working connection for the allowed one). Like the old struct,
they record that the round trip was exercised, not which policy it proved.
"""

from __future__ import annotations

from typing import Any

from harness.evidence.source import CellEvidence
from harness.results.store.manifest import Manifest

SCHEMA = "https://harness.invalid/schemas/openshell-legacy-confirm-evidence-v1.json"
SECCOMP_FACTS = {
    "new_listener": "seccomp_new_listener",
    "notification_round_trip": "seccomp_notif_round_trip",
    "id_validation": "seccomp_id_validation",
    "addfd_send": "seccomp_addfd",
    "retained_socket_operation": "seccomp_retained_socket_operation",
    "proc_fd_identity": "seccomp_proc_fd_identity",
    "task_memory_read": "seccomp_task_memory_read",
    "task_memory_write": "seccomp_task_memory_write",
    "cancellation": "seccomp_cancellation",
}
ROUND_TRIPS = {
    "tcp_deny_round_trip": ("tcp-raw-ip", "tcp-denied-name"),
    "tcp_allow_round_trip": ("attr-allowed-connect",),
    "dns_udp_round_trip": ("dns-alt-udp",),
    "dns_tcp_round_trip": ("dns-alt-tcp",),
}
DEFINITE = {"blocked", "escaped", "succeeded", "ok"}
MIN_LANDLOCK_ABI = 3


def _true(fact: dict[str, Any] | None) -> bool:
    return fact is not None and fact.get("status") == "ok" and fact.get("value") is True


def legacy_fields(ev: CellEvidence) -> dict[str, Any]:
    complete = ev.cell.get("status") == "complete"
    # An incomplete cell's partial output proves nothing: every field is false.
    facts = ev.facts() if complete else {}
    checks = ev.checks() if complete else {}
    abi = facts.get("landlock_abi", {})
    abi_value = abi.get("value") if abi.get("status") == "ok" else 0
    return {
        "seccomp": {field: _true(facts.get(fact)) for field, fact in SECCOMP_FACTS.items()},
        "landlock_abi": abi_value if isinstance(abi_value, int) else 0,
        "landlock_allow_deny": _true(facts.get("landlock_allow_deny")),
        **{
            field: all(checks.get(c, {}).get("outcome") in DEFINITE for c in ids)
            for field, ids in ROUND_TRIPS.items()
        },
    }


def validate(fields: dict[str, Any]) -> list[str]:
    """The old `SandboxConfirmEvidence::validate` rules; returns the failing conditions."""
    failing = [f"seccomp.{name}" for name, ok in fields["seccomp"].items() if not ok]
    if fields["landlock_abi"] < MIN_LANDLOCK_ABI:
        failing.append(f"landlock_abi >= {MIN_LANDLOCK_ABI} (got {fields['landlock_abi']})")
    if not fields["landlock_allow_deny"]:
        failing.append("landlock_allow_deny")
    failing += [name for name in ROUND_TRIPS if not fields[name]]
    return failing


def legacy_document(ev: CellEvidence, manifest: Manifest) -> dict[str, Any]:
    fields = legacy_fields(ev)
    failing = validate(fields)
    return {
        "$schema": SCHEMA,
        "host": ev.host,
        "runtime": ev.runtime,
        "evidence": fields,
        "validate": {"passed": not failing, "failing": failing},
        "evidence_digest": ev.digest,
        "source": {
            "run_id": manifest.run_id,
            "matrix_sha256": manifest.matrix_sha256,
        },
    }
