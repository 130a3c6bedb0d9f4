"""The shape every scenario shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Control(StrEnum):
    """What proves an attempt could have succeeded, so that its failure means something."""

    HOST = "host"  # the same attempt from the host runtime, same host, same run, escaped
    NONE = "none"  # a direct syscall whose refusal is unambiguous (e.g. setuid(0))


@dataclass(frozen=True, slots=True)
class Check:
    """One attempt the probe makes, or one inside control it must pass."""

    id: str
    doc: str
    control: Control = Control.HOST
    inside_control: bool = False  # must succeed inside the sandbox (e.g. write the allowed dir)
    control_id: str | None = None  # the host attempt that serves as control, if not this one
    # What the canary must have for this attempt to prove anything ("ipv6": an IPv6
    # address; "capture": a packet capture); without it the attempt is not asked for.
    needs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Scenario:
    """A named set of probe attempts for one property, or of mechanism facts.

    Facts are recorded for audit and never make a property pass; checks are the
    attempted violations that decide the property.
    """

    name: str
    probe_name: str
    summary: str
    property: str | None = None
    facts: dict[str, str] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    internal: bool = False  # for testing harness itself: accepted, never listed
