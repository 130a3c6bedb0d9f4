"""Scenarios: what the probe attempts, by name.

A scenario is data: the probe does the attempting; the runner composes a scenario
with a runtime. Scenarios never import runtimes.
"""

from __future__ import annotations

from harness.scenarios.attribution import ATTRIBUTION
from harness.scenarios.base import Check, Control, Scenario, Transport
from harness.scenarios.egress import EGRESS
from harness.scenarios.fence import CONTROLLER_LOSS, REVOCATION
from harness.scenarios.filesystem import FILESYSTEM
from harness.scenarios.mechanisms import MECHANISMS
from harness.scenarios.privilege import PRIVILEGE
from harness.scenarios.selftest import SELFTEST

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        EGRESS,
        FILESYSTEM,
        PRIVILEGE,
        ATTRIBUTION,
        CONTROLLER_LOSS,
        REVOCATION,
        MECHANISMS,
        SELFTEST,
    )
}

# Each reported check's declared transport, by (the probe's scenario name, check id).
_TRANSPORTS: dict[tuple[str, str], Transport] = {
    (s.name, c.id): c.transport
    for s in SCENARIOS.values()
    for c in s.checks
    if c.transport is not None
}

__all__ = [
    "SCENARIOS",
    "Check",
    "Control",
    "Scenario",
    "known_facts",
    "listed",
    "transport_of",
]


def listed() -> list[Scenario]:
    """The scenarios a user may pick: everything but harness's own self-tests."""
    return [s for s in SCENARIOS.values() if not s.internal]


def known_facts() -> dict[str, str]:
    """Every fact any scenario measures, with the sentence that explains it."""
    return {fact: doc for s in SCENARIOS.values() for fact, doc in s.facts.items()}


def transport_of(probe_scenario: str, check_id: str) -> Transport | None:
    """How a reported attempt's packets travel, as its scenario declares (None: not
    declared, so its arrivals match by marker only)."""
    return _TRANSPORTS.get((probe_scenario, check_id))
