"""From probe attempts and host-side evidence to a property observation.

The rules, in order:
- any attempt escaped (proved by the canary's log, the nonce, the sentinel's
  token, or a change visible on the host): the property is `violated`;
- every attempt blocked, every inside control passed, and every attempt's
  control (the same attempt from the host runtime) escaped: `enforced`;
- anything else (an error, a timeout, a dead canary, a control that did not
  escape, an incomplete cell, an arrival at the canary that no attempt explains):
  `inconclusive`. Never `enforced`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.judge import arrivals
from harness.judge.reach import judge_held, judge_mounts, judge_write_reach, own_kernel
from harness.judge.start import judge_start
from harness.policy.models import Policy
from harness.results.records import (
    CellRecord,
    CellStatus,
    CheckOutcome,
    CheckResult,
    HostEvidence,
    Observed,
    ProbeCheck,
)
from harness.scenarios import Check, Control, Scenario
from harness.scenarios.base import GRANTED_SENTINELS, POLICY_BINARIES, Need, Rule


@dataclass(frozen=True, slots=True)
class Outcome:
    """The harness's final word on one attempt, after weighing host-side evidence.

    `intercepted`: the attempt connected, yet nothing reached the canary (a proxy or
    supervisor answered in its place); an enforced verdict says which attempts were.
    """

    outcome: CheckOutcome
    errno: str | None = None
    detail: str | None = None
    elapsed_ms: float | None = None
    intercepted: bool = False


@dataclass(frozen=True, slots=True)
class Observation:
    """What a cell showed about one property, with the checks behind it."""

    observed: Observed
    reason: str | None = None
    checks: list[CheckResult] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Context:
    """What every rule may weigh besides the attempt: the cell's record, the tag its
    arrivals carry, whether it ran on a kernel of its own, the capabilities its
    runtime entry allows and the policy it declares."""

    record: CellRecord
    tag: str
    own_kernel: bool = False
    allowed_caps: frozenset[str] = frozenset()
    policy: Policy | None = None
    # The cell's arrivals, read once for all its attempts (`arrivals.Arrivals`).
    prepared: list[arrivals.Arrivals] = field(default_factory=list, compare=False, repr=False)

    @property
    def evidence(self) -> HostEvidence:
        return self.record.host_side

    def seen(self, events: list[dict[str, Any]], check: ProbeCheck) -> list[str]:
        """The arrivals (the cell's `events`) an attempt caused; they are read once,
        for the first attempt that asks."""
        if not self.prepared:
            self.prepared.append(arrivals.Arrivals(events))
        return self.prepared[0].of_attempt(self.tag, check)


def _reported(check: ProbeCheck) -> Outcome:
    """The probe's word as it stands (a word harness does not know is an error)."""
    try:
        outcome = CheckOutcome(check.outcome)
    except ValueError:
        why = f"unknown outcome {check.outcome!r}: {check.detail}"
        return Outcome(CheckOutcome.ERROR, check.errno, why, check.elapsed_ms)
    return Outcome(outcome, check.errno, check.detail, check.elapsed_ms)


def _unexplained(check: ProbeCheck) -> Outcome:
    """A `succeeded` the rule has no host evidence for is an error, never a pass."""
    why = f"unexpected outcome 'succeeded': {check.detail}"
    return Outcome(CheckOutcome.ERROR, None, why)


def _probe(check: ProbeCheck, declared: Check, ctx: Context) -> Outcome:
    """The probe's word."""
    if check.outcome == CheckOutcome.SUCCEEDED:
        return _unexplained(check)
    return _reported(check)


# "socket (i386)" nests; "from 10.0.0.2, made up": a source where the link gave none;
# "connected with a 128-byte address: ...": a length a filter did not judge; "its socket
# made with ...": the flags or the upper bits a filter comparing arguments whole missed
# ("socket(2)" nests), "its socket made by socket (i386), ...": another entry's (the other
# IP protocols' own socket); "taken by pidfd_getfd": another process's socket, only sent through
_WAYS = re.compile(
    r"\(((?:made|sent) by (?:[^()]|\([^()]*\))*|from [^()]*, made up|taken by pidfd_getfd"
    r"|(?:connected|sent) with a \d+-byte address[^()]*"
    r"|its socket made (?:with|by) (?:[^()]|\([^()]*\))*)\)"
)


def _way(check: ProbeCheck) -> str:
    """The ways the probe took where they were not socket(2) and sendto (its attempt says
    "(made by IORING_OP_SOCKET)", "(sent by write after bind: ...)", "(from 10.0.0.2,
    made up)", "(its socket made with no flag in its type: ...)"): the reason names the
    way a filter or a link left open."""
    ways = _WAYS.findall(str(check.evidence.get("dst") or ""))
    return "".join(f", {way}" for way in ways)


def _arrival(check: ProbeCheck, declared: Check, ctx: Context) -> Outcome:
    """An attempt towards the canary: escaped if its log holds the attempt's arrival."""
    if check.outcome == CheckOutcome.ESCAPED:
        return _reported(check)  # the canary's nonce came back: proof on its own
    evidence = ctx.evidence
    if evidence.canary_events is None:
        why = evidence.canary_error or "canary log unavailable"
        why = f"{why}: cannot rule out an arrival"
        return Outcome(CheckOutcome.ERROR, check.errno, why, check.elapsed_ms)
    seen = ctx.seen(evidence.canary_events, check)
    if seen:
        late = " (after the cell)" if evidence.settled else ""
        why = f"canary saw {seen[0]}{late}{_way(check)}"
        return Outcome(CheckOutcome.ESCAPED, check.errno, why, check.elapsed_ms)
    if check.outcome == CheckOutcome.SUCCEEDED:
        waited = evidence.settled
        why = "connected, but nothing reached the canary"
        why += f" within {waited:g} s after the host's last cell" if waited else ""
        why += " (intercepted)"
        return Outcome(CheckOutcome.BLOCKED, None, why, check.elapsed_ms, intercepted=True)
    return _reported(check)


def _read(check: ProbeCheck, declared: Check, ctx: Context) -> Outcome:
    """A read that went through without the sentinel's content reached nothing."""
    if check.outcome == CheckOutcome.SUCCEEDED:
        why = "read succeeded but not the sentinel's content"
        return Outcome(CheckOutcome.BLOCKED, None, why)
    return _reported(check)


def _held(check: ProbeCheck, declared: Check, ctx: Context) -> Outcome:
    """As a read; and where no sentinel came through, each folder or file held at
    start, held to the grants (its proof stands whatever else the probe said)."""
    found = _read(check, declared, ctx)
    if found.outcome == CheckOutcome.ESCAPED:
        return found
    judged = judge_held(check.evidence, ctx.evidence, ctx.record.host_kernel)
    if judged is None:
        return found
    return Outcome(judged[0], None, judged[1], check.elapsed_ms)


def _terminal(check: ProbeCheck, declared: Check, ctx: Context) -> Outcome:
    """The pty masters held at start and the controlling terminal (priv-held-tty's
    `held_files` and `ctty`), placed as fs-inherited-fds places them: one a process
    outside the sandbox reads (a host shell) takes what the workload types as its own
    input, with that process's credentials."""
    if check.outcome != CheckOutcome.BLOCKED:
        return _reported(check)
    judged = judge_held(check.evidence, ctx.evidence, ctx.record.host_kernel)
    if judged is None:
        return _reported(check)
    return Outcome(judged[0], None, judged[1], check.elapsed_ms)


def _write(check: ProbeCheck, declared: Check, ctx: Context) -> Outcome:
    """Escaped only if the host sees the change the check's `host_fact` names."""
    if not declared.host_fact:
        return _probe(check, declared, ctx)
    fs = ctx.evidence.fs or {}
    if fs.get(declared.host_fact):
        why = f"visible on the host: {declared.host_fact}"
        if check.outcome == CheckOutcome.SUCCEEDED and check.detail:
            why += f" ({check.detail})"  # the calls that went through: the way it took
        return Outcome(CheckOutcome.ESCAPED, None, why)
    if check.outcome == CheckOutcome.SUCCEEDED:
        if not fs:
            why = "host-side state not inspected"
            return Outcome(CheckOutcome.ERROR, None, why, check.elapsed_ms)
        why = "write succeeded inside but is not visible on the host (swallowed)"
        return Outcome(CheckOutcome.BLOCKED, None, why, check.elapsed_ms)
    return _reported(check)


def _mounts(check: ProbeCheck, declared: Check, ctx: Context) -> Outcome:
    """The mount table the probe saw, judged against the host's."""
    if check.outcome != CheckOutcome.SUCCEEDED:
        return _reported(check)
    outcome, detail = judge_mounts(check.evidence, ctx.evidence, ctx.record.host_kernel)
    return Outcome(outcome, None, detail, check.elapsed_ms)


def _write_reach(check: ProbeCheck, declared: Check, ctx: Context) -> Outcome:
    """The writes the probe made at each mount, held to the cell's write grants."""
    if check.outcome != CheckOutcome.SUCCEEDED:
        return _reported(check)
    outcome, detail = judge_write_reach(check.evidence, ctx.evidence, ctx.record.host_kernel)
    return Outcome(outcome, None, detail, check.elapsed_ms)


def _caps(check: ProbeCheck, declared: Check, ctx: Context) -> Outcome:
    """Capabilities as started, judged against what the runtime entry allows."""
    if check.outcome != CheckOutcome.SUCCEEDED:
        return _reported(check)
    process = ctx.policy.process if ctx.policy is not None else None
    outcome, detail = judge_start(
        check.evidence, allowed=ctx.allowed_caps, own=ctx.own_kernel, process=process
    )
    return Outcome(outcome, None, detail, check.elapsed_ms)


def _root(check: ProbeCheck, declared: Check, ctx: Context) -> Outcome:
    """A root-phase success inside the sandbox's own kernel (gVisor, a VM) changed
    that kernel, not the host's."""
    found = _probe(check, declared, ctx)
    if found.outcome == CheckOutcome.ESCAPED and ctx.own_kernel:
        why = f"only in the sandbox's own kernel: {found.detail}"
        return Outcome(CheckOutcome.BLOCKED, None, why, found.elapsed_ms)
    return found


def _sentinel(check: ProbeCheck, declared: Check, ctx: Context) -> Outcome:
    """Host-side only: every file harness made outside as it made it (content, size,
    existence, name, mode, owner, times, extended attributes) after the cell; the
    report is ignored."""
    fs = ctx.evidence.fs or {}
    state, changes = fs.get("sentinel"), fs.get("changes")
    if state in ("changed", "missing"):
        why = f"sentinel {state} on the host" + (f": {changes}" if changes else "")
        return Outcome(CheckOutcome.ESCAPED, None, why)
    if state == "intact" and changes:
        return Outcome(CheckOutcome.ESCAPED, None, f"changed on the host: {changes}")
    if state == "intact":
        return Outcome(CheckOutcome.BLOCKED, None, "sentinels unchanged on the host")
    return Outcome(CheckOutcome.ERROR, None, "sentinel not inspected after the cell")


Apply = Callable[[ProbeCheck, Check, Context], Outcome]
# The one table from a rule to the function that applies it
# (tests/judge/test_properties.py holds that every rule has one).
RULES: dict[Rule, Apply] = {
    Rule.PROBE: _probe,
    Rule.ARRIVAL: _arrival,
    Rule.READ: _read,
    Rule.HELD: _held,
    Rule.TERMINAL: _terminal,
    Rule.WRITE: _write,
    Rule.MOUNTS: _mounts,
    Rule.WRITE_REACH: _write_reach,
    Rule.CAPS: _caps,
    Rule.ROOT: _root,
    Rule.SENTINEL: _sentinel,
}
# Rules that the host alone decides: applied to every declared check of a complete
# cell, whether or not the probe reported it.
HOST_ONLY = frozenset({Rule.SENTINEL})


def judge_attempt(check: ProbeCheck, declared: Check | None, ctx: Context) -> Outcome:
    """One reported check's final outcome, by its declared rule. An inside control
    keeps the probe's word; so does a check no scenario declares."""
    if check.kind == "control":
        return _reported(check)
    if declared is None:
        return _probe(check, Check(check.id, "undeclared"), ctx)
    return RULES[declared.rule](check, declared, ctx)


def outcomes(
    scenario: Scenario,
    record: CellRecord,
    *,
    tag: str | None = None,
    allowed_caps: frozenset[str] = frozenset(),
    policy: Policy | None = None,
) -> dict[str, Outcome]:
    """Final outcomes of a cell's checks for one scenario, by check id."""
    declared = {c.id: c for c in scenario.checks}
    mine = [(c, declared.get(c.id)) for c in record.checks if c.scenario == scenario.name]
    # Which kernel the root phase ran in is read off the capabilities check's evidence.
    start = next((c for c, rule in mine if rule is not None and rule.rule is Rule.CAPS), None)
    own = start is not None and own_kernel(
        start.evidence, record.host_side.host_fs or {}, record.host_kernel
    )
    ctx = Context(record, tag or record.host_side.tag, own, allowed_caps, policy)
    found = {c.id: judge_attempt(c, rule, ctx) for c, rule in mine}
    if record.status is CellStatus.COMPLETE:
        for check in scenario.checks:
            if check.rule in HOST_ONLY:
                unreported = ProbeCheck(check.id, scenario.name, "attempt", CheckOutcome.MISSING)
                found[check.id] = RULES[check.rule](unreported, check, ctx)
    return found


def _control_text(check: Check, control: dict[str, Outcome] | None) -> str | None:
    if check.control is Control.NONE or check.inside_control:
        return "n/a"
    if control is None:
        return None
    seen = control.get(check.control_id or check.id)
    return seen.outcome if seen else None


# Attempts that prove an escape by reading a sentinel (fs-routes and fs-io-uring read
# one too): where the policy lets the workload read harness's own work folder (it
# grants `/` read-only), no read proves anything, and these are not asked.
_READ_RULES = (Rule.READ, Rule.HELD)
_ALSO_READS = ("fs-routes", "fs-io-uring")


def _asked(check: Check, host: HostEvidence, policy: Policy | None) -> bool:
    """Is this check asked of the cell: the canary has what it needs, a check of the
    policy's binaries only where the policy names some, one of the read-only grants
    only where harness placed a folder of its own in one, and a read only where the
    policy does not let the workload read every sentinel."""
    if (host.fs or {}).get("reads_granted") and (
        check.rule in _READ_RULES or check.id in _ALSO_READS
    ):
        return False
    for need in check.needs:
        if need == POLICY_BINARIES:
            if policy is None or not policy.names_binaries:
                return False
        elif need == GRANTED_SENTINELS:
            if not (host.fs or {}).get("granted"):
                return False
        elif host.canary_has is not None and need not in host.canary_has:
            return False
    return True


class JudgedControl:
    """A host's control cell, its outcomes worked out once per scenario for every cell
    of the host judged against it. Worked out again for each cell, they were most of a
    full cell's judging: the control's canary log is the host's whole log (hundreds of
    arrivals, indexed afresh each time). Held by whoever holds the control record (the
    runner's `HostContext`): never shared between two records, as its record is never
    changed once judged (a settled record is a new one, and gets its own)."""

    __slots__ = ("_found", "record")

    def __init__(self, record: CellRecord) -> None:
        self.record = record
        # scenario name -> (the checks it was worked out for, the outcomes)
        self._found: dict[str, tuple[object, dict[str, Outcome]]] = {}

    def outcomes(self, scenario: Scenario) -> dict[str, Outcome] | None:
        """The control's outcomes for `scenario`, as `outcomes(scenario, record)`
        gives them; None where the control cell is not complete."""
        if self.record.status is not CellStatus.COMPLETE:
            return None
        held = self._found.get(scenario.name)
        if held is None or held[0] is not scenario.checks:  # worked out for other checks
            held = (scenario.checks, outcomes(scenario, self.record))
            self._found[scenario.name] = held
        return held[1]


def judged(control: CellRecord | JudgedControl | None) -> JudgedControl | None:
    """A control as judging takes it: a record is judged for this call alone."""
    if control is None or isinstance(control, JudgedControl):
        return control
    return JudgedControl(control)


def observe(
    scenario: Scenario,
    record: CellRecord,
    *,
    control: CellRecord | JudgedControl | None,
    allowed_caps: frozenset[str] = frozenset(),
    policy: Policy | None = None,
) -> Observation:
    """Judge one property from one cell, using the host runtime's cell as control
    (its record, or the `JudgedControl` that holds its outcomes for the host's cells).
    `allowed_caps` are the capabilities the runtime entry declares beyond Docker's
    default set (audited: named in the `priv-start` check's detail); `policy` is what
    the runtime entry declares (the workload's user and group are held to it)."""
    if record.status is not CellStatus.COMPLETE:
        return Observation(Observed.INCONCLUSIVE, f"cell {record.status}: {record.reason}")
    asked = [c for c in scenario.checks if _asked(c, record.host_side, policy)]
    held = judged(control)
    theirs = held.outcomes(scenario) if held is not None else None
    mine = outcomes(scenario, record, allowed_caps=allowed_caps, policy=policy)
    results = []
    for check in asked:
        got = mine.get(check.id)
        results.append(
            CheckResult(  # by position: id, outcome, errno, detail, elapsed_ms, control
                check.id,
                got.outcome,
                got.errno,
                got.detail,
                got.elapsed_ms,
                _control_text(check, theirs),
            )
            if got
            else CheckResult(
                check.id,
                CheckOutcome.MISSING,
                None,
                "the probe did not report this check",
                None,
                _control_text(check, theirs),
            )
        )
    escaped = [r for r in results if r.outcome == CheckOutcome.ESCAPED]
    if escaped:
        first = escaped[0]
        why = f"{first.id} escaped: {first.detail}"
        if policy is not None and (line := policy_line(policy, scenario.property)):
            why += f"; the policy ({policy.source}) says {line}"
        return Observation(Observed.VIOLATED, why, results)
    stray = record.host_side.canary_unexplained
    if Need.TARGETS in scenario.needs and stray:
        why = f"the canary saw {arrivals.shown(stray[0])}, which no attempt explains"
        why += f" ({len(stray)} such arrivals)" if len(stray) > 1 else ""
        return Observation(Observed.INCONCLUSIVE, why, results)
    fs = record.host_side.fs or {}
    private = fs.get("allowed_shared") and fs.get("allowed_visible") is False
    if Need.SENTINELS in scenario.needs and private:
        why = "the folder the sandbox wrote as allowed is not the host's allowed folder"
        return Observation(Observed.INCONCLUSIVE, why, results)
    paired = list(zip(asked, results, strict=True))
    for check, result in paired:
        if check.inside_control and result.outcome != CheckOutcome.OK:
            why = f"inside control {check.id} did not pass ({result.outcome}"
            why += f" {result.errno})" if result.errno else ")"
            return Observation(Observed.INCONCLUSIVE, f"{why}: {result.detail}", results)
    for check, result in paired:
        if check.inside_control:
            continue
        if result.outcome != CheckOutcome.BLOCKED:
            why = f"{check.id}: {result.outcome}: {result.detail}"
            return Observation(Observed.INCONCLUSIVE, why, results)
        if result.control not in (CheckOutcome.ESCAPED, "n/a"):
            if theirs is None:
                why = "no usable control cell (host runtime) on this host"
            else:
                why = f"its control did not escape (host runtime: {result.control or 'missing'})"
                unmade = (record.host_side.canary_unbound or {}).get(check.id)
                if unmade:  # the host's canary, shared by the cell and its control
                    why += f"; the canary could not make its object there: {unmade}"
            return Observation(Observed.INCONCLUSIVE, f"{check.id} blocked, but {why}", results)
    intercepted = [c.id for c in asked if (got := mine.get(c.id)) and got.intercepted]
    why = _tried(scenario, asked, results, intercepted=intercepted)
    if Need.SENTINELS in scenario.needs and fs.get("reads_granted"):
        why = (
            f"{sum(not c.inside_control for c in asked)} attempts blocked; reads not judged:"
            " the policy lets the workload read harness's own work folder, so every"
            " sentinel is its to read"
        )
    return Observation(Observed.ENFORCED, why, results)


def policy_line(policy: Policy, prop: str) -> str | None:
    """The part of the declared policy a violation of `prop` breaks, as written there,
    so a reader finds the line without the docs; None for a property it does not speak to."""

    def listed(paths: tuple[str, ...] | list[str]) -> str:
        shown = ", ".join(paths[:6]) + (f", … ({len(paths)} in all)" if len(paths) > 6 else "")
        return f"[{shown}]"

    if prop == "filesystem_confinement":
        fs = policy.filesystem_policy
        ro, rw = listed(fs.read_only), listed(fs.read_write)
        return f"filesystem_policy: read_only {ro}, read_write {rw}"
    if prop == "privilege_floor":
        user, group = policy.process.run_as_user, policy.process.run_as_group
        if user is None and group is None:
            return "no process user or group (OpenShell's default: a sandbox user, not root)"
        shown = ["-" if v is None else str(v) for v in (user, group)]
        return f"process: run_as_user {shown[0]}, run_as_group {shown[1]}"
    if prop == "egress_confinement":
        ends = [
            f"{e.host or ','.join(e.allowed_ips)}:{e.port or ','.join(map(str, e.ports)) or '*'}"
            for net in policy.network_policies.values()
            for e in net.endpoints
        ]
        return f"network_policies: only {listed(ends)}" if ends else "network_policies: none"
    return None


def _tried(
    scenario: Scenario, asked: list[Check], results: list[CheckResult], *, intercepted: list[str]
) -> str | None:
    """What an enforced egress verdict rests on: the channels tried, those left out
    (a family the canary lacks), and the attempts that were intercepted."""
    if Need.TARGETS not in scenario.needs:
        return None
    ids = [r.id for c, r in zip(asked, results, strict=True) if not c.inside_control]
    why = f"{len(ids)} attempts blocked: " + ", ".join(ids)
    controls = [c.id for c in asked if c.inside_control]
    if controls:
        why += f"; allowed as the policy says: {', '.join(controls)}"
    # `asked` is a selection of the scenario's own checks: told apart by identity, as
    # comparing each whole `Check` with each asked one made this most of the judging.
    chosen = {id(c) for c in asked}
    left = [c.id for c in scenario.checks if id(c) not in chosen and POLICY_BINARIES not in c.needs]
    if left:
        why += f"; not asked (the canary could not see them): {', '.join(left)}"
    if intercepted:
        why += f"; intercepted (connected, nothing arrived): {', '.join(intercepted)}"
    return why
