"""The outer fence (OpenShell's `OuterFenceGuarantees`), measured: each guarantee is
established only by verdicts harness judged in the run, never by what the runtime
declares (its `mechanisms` entry is copied as `declared`, and nothing more).

- default_deny_egress: egress_confinement enforced, the sweep among its attempts:
  every denied destination refused.
- no_unmanaged_egress_path: default_deny_egress, and the allowed connection reached
  its destination only from the upstream its decision record names (the route check,
  for every record source: judge/attribution.observe_route); with no record source, a
  sandbox where even the allowed destination is out of reach has no path at all.
- revocation_verified, controller_loss_fails_closed: their own verdicts.

Each carries a commitment: the sha256 of the record lines it rests on (the cell's, then
the verdicts' named in `rests_on`), as evidence_digest is computed (docs/evidence.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from harness.evidence.source import CellEvidence, commitment
from harness.judge.attribution import arrivals, observe_route
from harness.matrix.models import FenceGuarantee as Guarantee
from harness.results.records import CheckOutcome, Observed
from harness.scenarios.attribution import ALLOWED_CONNECT
from harness.scenarios.egress import EGRESS

GUARANTEES: tuple[Guarantee, ...] = get_args(Guarantee)
# What harness measures for a guarantee, as a number: raised when that changes, so two
# documents of different generations are never compared as if they measured the same.
GENERATION: dict[Guarantee, int] = {
    "default_deny_egress": 1,
    "no_unmanaged_egress_path": 1,
    "revocation_verified": 1,
    "controller_loss_fails_closed": 1,
}
Status = Literal["established", "not-established", "not-measured"]
STATUSES: tuple[Status, ...] = get_args(Status)
UNDECLARED = "undeclared"
SWEEP = frozenset(c.id for c in EGRESS.checks if c.row == "sweep")
# The record lines each guarantee rests on, besides the cell's: its verdicts.
RESTS_ON: dict[Guarantee, tuple[str, ...]] = {
    "default_deny_egress": ("egress_confinement",),
    "no_unmanaged_egress_path": ("egress_confinement", "attribution"),
    "revocation_verified": ("revocation_verified",),
    "controller_loss_fails_closed": ("controller_loss_fails_closed",),
}


@dataclass(frozen=True, slots=True)
class Measured:
    """One guarantee as the run measured it."""

    status: Status
    reason: str


def _from_verdict(ev: CellEvidence, prop: str) -> Measured:
    """A guarantee that is a property of its own: enforced establishes it; violated,
    inconclusive or flaky was measured without establishing it; skipped, not at all."""
    row = ev.property_rows().get(prop)
    if row is None:
        return Measured("not-measured", f"{prop} was not among the run's scenarios")
    observed, reason = str(row.get("observed")), str(row.get("reason") or "")
    said = f"{prop} {observed}" + (f": {reason}" if reason else "")
    if observed == Observed.ENFORCED:
        return Measured("established", said)
    if observed == Observed.SKIPPED:
        return Measured("not-measured", said)
    return Measured("not-established", said)


def default_deny_egress(ev: CellEvidence) -> Measured:
    """Every denied destination refused: egress_confinement enforced with the sweep."""
    found = _from_verdict(ev, "egress_confinement")
    if found.status != "established":
        return found
    judged = [c.get("id") for c in ev.property_rows()["egress_confinement"].get("checks") or []]
    swept = sum(1 for c in judged if c in SWEEP)
    if not swept:
        return Measured("not-established", "egress_confinement enforced without the sweep")
    why = f"every denied destination refused: {len(judged)} attempts, {swept} of the sweep"
    return Measured("established", why)


def no_unmanaged_egress_path(ev: CellEvidence) -> Measured:
    """Nothing leaves but through the supervisor: the denied refused, the allowed routed."""
    deny = default_deny_egress(ev)
    if deny.status != "established":
        return Measured(deny.status, f"default_deny_egress {deny.status}: {deny.reason}")
    record = ev.record
    allowed = next((c for c in record.checks if c.id == ALLOWED_CONNECT), None) if record else None
    if record is None or allowed is None:
        return Measured(
            "not-measured", "the attribution scenario (the allowed connection) did not run"
        )
    route = observe_route(record)
    if route.observed == Observed.ENFORCED:
        return Measured("established", str(route.reason))
    if route.observed != Observed.SKIPPED:
        return Measured("not-established", f"route {route.observed}: {route.reason}")
    if (
        record.host_side.decisions is None
        and allowed.outcome != CheckOutcome.OK
        and arrivals(record) == []
    ):
        why = (
            "no path out at all: every denied destination refused, and the allowed one"
            f" unreachable too ({allowed.outcome} {allowed.errno or ''})"
        )
        return Measured("established", why.replace(" )", ")"))
    return Measured("not-measured", str(route.reason))


def measure(ev: CellEvidence, guarantee: Guarantee) -> Measured:
    if guarantee == "default_deny_egress":
        return default_deny_egress(ev)
    if guarantee == "no_unmanaged_egress_path":
        return no_unmanaged_egress_path(ev)
    return _from_verdict(ev, guarantee)


def outer_fence(ev: CellEvidence) -> dict[str, Any]:
    """The `outer_fence` block of the openshell document."""
    declared = ev.runtime_spec.get("mechanisms") or {}
    block: dict[str, Any] = {}
    for guarantee in GUARANTEES:
        found = measure(ev, guarantee)
        rests = [p for p in RESTS_ON[guarantee] if p in ev.verdict_lines]
        lines = ev.raw_lines[:1] + [ev.verdict_lines[p] for p in rests]
        block[guarantee] = {
            "generation": GENERATION[guarantee],
            "status": found.status,
            "reason": found.reason,
            "declared": str(declared.get(guarantee, UNDECLARED)),
            "commitment": commitment(lines),
            "rests_on": ["cell", *(f"verdict:{p}" for p in rests)],
        }
    return block
