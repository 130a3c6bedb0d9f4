"""The shape every scenario shares: its checks, the fixtures it needs, and the rule
by which host-side evidence decides each check.

A scenario module declares all three; `judge/properties.py` applies the rules and
the runner starts the fixtures, so neither ever names a scenario.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, get_args

Property = Literal[
    "egress_confinement",
    "filesystem_confinement",
    "privilege_floor",
    "attribution",
    "controller_loss_fails_closed",
    "revocation_verified",
]
PROPERTIES: tuple[Property, ...] = get_args(Property)


class Control(StrEnum):
    """What proves an attempt could have succeeded, so that its failure means something."""

    HOST = "host"  # the same attempt from the host runtime, same host, same run, escaped
    NONE = "none"  # a direct syscall whose refusal is unambiguous (e.g. setuid(0))


# A check's need that the runtime's policy, not the canary, meets: the policy names
# the binaries that may reach its network endpoints (judge/properties.py asks the
# check only then).
POLICY_BINARIES = "policy-binaries"
# A check's need that the filesystem fixture meets: harness placed a folder of its
# own in one of the policy's read-only grants (the cell's `fs` evidence names them);
# without one there is nothing to read or change there, and the check is not asked.
GRANTED_SENTINELS = "granted-sentinels"


class Need(StrEnum):
    """A host-side fixture a scenario needs (see `hostside/`)."""

    CANARY = "canary"  # a canary on the host, its log read after every cell
    TARGETS = "targets"  # the canary's addresses given to the probe; late arrivals awaited
    SENTINELS = "sentinels"  # files outside the allowed folder, inspected after the cell
    HELPERS = "helpers"  # setuid and file-capability binaries granted to the sandbox
    HOST_FS = "host-fs"  # the host's mount table and boot id, for what a mount exposes
    DECISIONS = "decisions"  # the supervisor's decision records: judged from them
    PHASES = "phases"  # barriers in the allowed folder, released once the host has acted
    HOST_UNIX = "host-unix"  # the host's own unix listeners, listed once, handed to the probe


# What the host says at a barrier no fixture acts at (the control cell's, an
# unsupervised sandbox's): the barrier is released, and nothing was measured.
NO_ACTION = "nothing to act on"


class Transport(StrEnum):
    """The protocol an attempt's packets use, so that an arrival at the canary can be
    matched to it by ports when no marker survived (a SYN, a proxy's rewrite)."""

    TCP = "tcp"
    UDP = "udp"


class Rule(StrEnum):
    """How host-side evidence turns the probe's report of an attempt into its outcome."""

    PROBE = "probe"  # the probe's word; a `succeeded` it cannot explain is an error
    ARRIVAL = "arrival"  # escaped if the canary saw it (however late), whatever the probe said
    READ = "read"  # a read that went through without the sentinel's content is blocked
    WRITE = "write"  # escaped only if the host sees the change named by `host_fact`
    MOUNTS = "mounts"  # the mount table the probe saw, judged against the host's
    WRITE_REACH = "write-reach"  # the writes the probe made at each mount, against the grants
    HELD = "held"  # as READ, and each folder or file held at start, against the grants
    TERMINAL = "terminal"  # each pty master held at start, and the controlling terminal, placed
    CAPS = "caps"  # capabilities as started, judged against the runtime's allowance
    ROOT = "root"  # a root-phase success inside the sandbox's own kernel is blocked
    SENTINEL = "sentinel"  # host-side only: the sentinel unchanged after the cell


@dataclass(frozen=True, slots=True)
class Check:
    """One attempt the probe makes, or one inside control it must pass."""

    id: str
    doc: str
    control: Control = Control.HOST
    inside_control: bool = False  # must succeed inside the sandbox (e.g. write the allowed dir)
    control_id: str | None = None  # the host attempt that serves as control, if not this one
    # What the canary must have for this attempt to prove anything ("ipv6": an IPv6
    # address; "capture": a packet capture), POLICY_BINARIES or GRANTED_SENTINELS;
    # without it the attempt is not asked for.
    needs: tuple[str, ...] = ()
    rule: Rule = Rule.PROBE
    host_fact: str | None = None  # for `Rule.WRITE`: the sentinel fact that proves it
    # For `Rule.ARRIVAL`: how its packets travel (None: matched by marker only, as ICMP,
    # whose echo identifiers repeat across sandboxes).
    transport: Transport | None = None
    # The row of the probe's check table (checks.def) that reports it: its own id,
    # "sweep" for one of the sweep's many lines, None for a check judged on the host alone.
    row: str | None = ""
    # What the probe does to make the attempt, in Markdown: docs/probe-protocol.md's
    # row for it, in the table its scenario's `section` names (checks with the same
    # words share one row: the sweep's `tcp4-P`). Empty only for a check with no line.
    how: str = ""
    section: str = "checks"

    @property
    def table_row(self) -> str | None:
        return self.id if self.row == "" else self.row


@dataclass(frozen=True, slots=True)
class Scenario:
    """A named set of probe attempts for one property, or of mechanism facts.

    Facts are recorded for audit and never make a property pass; checks are the
    attempted violations that decide the property.
    """

    name: str  # also the probe's: checks.def and every line it prints carry it
    summary: str
    property: Property | None = None
    facts: dict[str, str] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    needs: frozenset[Need] = frozenset()
    info: tuple[str, ...] = ()  # probe table rows that only inform (printed, never judged)
    internal: bool = False  # for testing harness itself: accepted, never listed
    # Barriers its checks stop at, in order, where the host acts (`Need.PHASES`).
    phases: tuple[str, ...] = ()
    # What the probe measures for each fact, in Markdown, for docs/probe-protocol.md
    # (a key may name several facts: "kernel_release, kernel_machine").
    measured: dict[str, str] = field(default_factory=dict)
