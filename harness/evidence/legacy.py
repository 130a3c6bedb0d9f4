"""The older `SandboxConfirmEvidence`, every field upstream has (NVIDIA/OpenShell's
crates/openshell-isolation-interface), filled from what harness measured, with its
`validate()` applied in full and every failing condition named.

This exists to show plainly why a gVisor backend fails the old contract (it lacks
two Linux mechanisms) while enforcing the properties the contract is about, and that
the old contract fails root workloads and the bare host for reasons of their own.

What harness cannot see is `null`, and a condition resting on it fails with "(not
measured)": the sandbox runtime's own dumpable flag (`sandbox_dumpable`: harness sees
the workload, not the process that built its sandbox) and the compute driver's fence
(`driver_fence`: Docker's, Kubernetes' or a VM's record). So no runtime passes the
old check on harness's word alone; the conditions it does measure still say which
fail and why.

The round-trip fields are filled from the probe's attempts: a round trip is true
when the attempt completed with a definite answer (blocked or escaped for denied
destinations, a working connection for the allowed one). Like the old struct,
they record that the round trip was exercised, not which policy it proved.
"""

from __future__ import annotations

from typing import Any

from harness.evidence.confirmation import (
    Binding,
    authenticated_supervisor,
    identity,
    runtime_exit,
)
from harness.evidence.source import CellEvidence
from harness.results.store.manifest import Manifest

SCHEMA = "https://harness.invalid/schemas/openshell-legacy-confirm-evidence-v2.json"
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
    "udp_dns_round_trip": ("dns-alt-udp",),
    "tcp_dns_round_trip": ("dns-alt-tcp",),
    "tcp_allow_round_trip": ("attr-allowed-connect",),
    "tcp_deny_round_trip": ("tcp-raw-ip", "tcp-denied-name"),
}
# priv-start's evidence key for each of upstream's capability sets.
CAP_SETS = {
    "inheritable": "cap_inh",
    "permitted": "cap_prm",
    "effective": "cap_eff",
    "bounding": "cap_bnd",
    "ambient": "cap_amb",
}
DEFINITE = {"blocked", "escaped", "succeeded", "ok"}
MIN_LANDLOCK_ABI = 3
NOT_MEASURED = "(not measured)"


def _true(fact: dict[str, Any] | None) -> bool:
    return fact is not None and fact.get("status") == "ok" and fact.get("value") is True


def _flag(seen: dict[str, Any], key: str, want: int) -> bool | None:
    """priv-start's integer `key` compared with `want`; None where it was not reported."""
    value = seen.get(key)
    return value == want if isinstance(value, int) and not isinstance(value, bool) else None


def legacy_fields(ev: CellEvidence, binding: Binding | None = None) -> dict[str, Any]:
    """Every field of upstream's SandboxConfirmEvidence, as measured (None: not)."""
    complete = ev.cell.get("status") == "complete"
    # An incomplete cell's partial output proves nothing: every measured field is unset.
    facts = ev.facts() if complete else {}
    checks = ev.checks() if complete else {}
    seen = (checks.get("priv-start") or {}).get("evidence") or {}
    abi = facts.get("landlock_abi", {})
    abi_value = abi.get("value") if abi.get("status") == "ok" else 0
    caps: dict[str, int | None] = {}
    for name, key in CAP_SETS.items():
        try:
            caps[name] = int(str(seen[key]), 16)
        except (KeyError, ValueError):
            caps[name] = None
    generation, session_id = (binding or Binding()).for_cell(ev)
    who, _ = identity(ev)
    claims = (ev.runtime_spec.get("openshell") or {}).get("resource_claims") or {}
    core = seen.get("core_limit")
    return {
        "generation": generation,
        "identity": who,
        "capabilities": caps,
        "no_new_privileges": _flag(seen, "nnp", 1),
        "sandbox_dumpable": None,  # the sandbox runtime's own process: not in view
        "child_dumpable": _flag(seen, "dumpable", 1),
        "core_limit_zero": None if not isinstance(core, int) else core == 0,
        "native_architecture": str(facts.get("kernel_machine", {}).get("value") or ""),
        "kernel_release": str(facts.get("kernel_release", {}).get("value") or ""),
        "seccomp": {field: _true(facts.get(fact)) for field, fact in SECCOMP_FACTS.items()},
        "landlock_abi": abi_value if isinstance(abi_value, int) else 0,
        "landlock_allow_deny": _true(facts.get("landlock_allow_deny")),
        **{
            field: all(checks.get(c, {}).get("outcome") in DEFINITE for c in ids)
            for field, ids in ROUND_TRIPS.items()
        },
        "authenticated_supervisor": authenticated_supervisor(ev)[0],
        "session_id": session_id,
        "driver_fence": None,  # the compute driver's record: not in view
        "runtime_exit_terminates_workload": runtime_exit(ev)[0],
        "resource_claims": {str(k): str(v) for k, v in claims.items()},
    }


def validate(fields: dict[str, Any]) -> list[str]:
    """Upstream's `SandboxConfirmEvidence::validate`, condition by condition and in its
    order (the identity held to upstream's own rule: not root); the failing ones."""
    failing = ["driver_fence " + NOT_MEASURED]
    who = fields["identity"]
    if 0 in (who["uid"], who["gid"]) or 0 in who["supplementary_gids"]:
        failing.append("identity (uid or gid 0)")
    caps = fields["capabilities"]
    unknown = [name for name, mask in caps.items() if mask is None]
    held = [name for name, mask in caps.items() if mask]
    if unknown or held:
        shown = ", ".join([*held, *(f"{n} {NOT_MEASURED}" for n in unknown)])
        failing.append(f"capabilities empty ({shown})")
    for name, want in (
        ("no_new_privileges", True),
        ("sandbox_dumpable", False),
        ("child_dumpable", True),
        ("core_limit_zero", True),
    ):
        if fields[name] is None:
            failing.append(f"{name} {NOT_MEASURED}")
        elif fields[name] is not want:
            failing.append(name if want else f"not {name}")
    failing += [f"seccomp.{name}" for name, ok in fields["seccomp"].items() if not ok]
    if fields["landlock_abi"] < MIN_LANDLOCK_ABI:
        failing.append(f"landlock_abi >= {MIN_LANDLOCK_ABI} (got {fields['landlock_abi']})")
    if not fields["landlock_allow_deny"]:
        failing.append("landlock_allow_deny")
    failing += [name for name in ROUND_TRIPS if not fields[name]]
    for name in ("authenticated_supervisor", "runtime_exit_terminates_workload"):
        if not fields[name]:
            failing.append(name)
    if not fields["generation"]:
        failing.append("generation")
    return failing


def legacy_document(
    ev: CellEvidence, manifest: Manifest, binding: Binding | None = None
) -> dict[str, Any]:
    fields = legacy_fields(ev, binding)
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
