"""The shape every scenario shares."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Scenario:
    """A named set of probe attempts.

    `facts` maps each mechanism fact the probe reports to a one-line explanation;
    facts are recorded for audit and never make a property pass.
    """

    name: str
    probe_name: str
    summary: str
    facts: dict[str, str] = field(default_factory=dict)
