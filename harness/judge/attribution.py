"""Attribution: does the supervisor's decision record name the binary behind an
allowed connection, or say explicitly that identity is unavailable?

Decision records are JSON objects; the one for the probe's allowed connection
is found by `src_port` (the probe reports the source port it connected from).
A record names the binary with `binary: {path, sha256}` (or `binary_path`), or
declares `identity: "unavailable"` with a `reason`.

A named binary must be the one that made the connection: the probe. When the run
knows the probe's sha256, a record naming another binary (or a binary without its
sha256) is a violation. Behind harness's reference supervisor, the allowed
connection must also have reached the destination *through* it: the canary must
have seen it arrive from the supervisor's upstream socket, and from nowhere else.
An external source's record is held to the same wherever it names its `upstream`
and the allowed destination is the canary's: the address the canary saw must be
that upstream (after any translation between them, as the destination sees it).

Two binaries (`attr-two-binaries`): the probe, the helpers' `other` and the probe
again connect, interleaved; each connection's record must name its own binary (by
sha256, both being known), or, where the runtime is endpoint-only, say with a reason
that identity is unavailable. A record naming the other one's binary is a violation
that names both: a supervisor that caches the first binary it saw does exactly that.
Where `other` could not run, or its sha256 is unknown, the check is not judged: it
never passes, and the property rests on the one-binary connection alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.judge.properties import Observation
from harness.results.records import CellRecord, CellStatus, CheckOutcome, CheckResult, Observed
from harness.scenarios.attribution import ALLOWED_CONNECT, TWO_BINARIES, TWO_BINARIES_CONNECTIONS


def find_records(
    records: Sequence[dict[str, Any]], src_port: int, dst: str | None = None
) -> list[dict[str, Any]]:
    """Decision records for the probe's connection: same source port and, where
    both sides name it, the same destination. Stale records from earlier runs can
    share a port, so more than one match is ambiguous, never a pick."""
    found = []
    for rec in records:
        port = rec.get("src_port")
        if port is None or str(port) != str(src_port):
            continue
        if dst and rec.get("dst") and str(rec["dst"]) != dst:
            continue
        found.append(rec)
    return found


# A record comes from the supervisor: what is copied out of it is bounded.
MAX_TEXT = 300


def _short(value: object) -> str | None:
    return None if value is None else str(value)[:MAX_TEXT]


def _identity(rec: dict[str, Any]) -> tuple[str | None, str | None]:
    binary = rec.get("binary")
    if isinstance(binary, dict) and binary.get("path"):
        return _short(binary["path"]), _short(binary.get("sha256"))
    if isinstance(binary, str) and binary:
        return _short(binary), _short(rec.get("sha256"))
    if rec.get("binary_path"):
        return _short(rec["binary_path"]), _short(rec.get("sha256"))
    return None, None


def observe_attribution(
    record: CellRecord,
    *,
    configured: bool,
    endpoint_only: bool,
    decisions: Sequence[dict[str, Any]] | None,
    fetch_error: str | None,
    expected_sha256: str | None = None,
    via_supervisor: bool = False,
    other_sha256: str | None = None,
) -> Observation:
    """Judge attribution for one cell from the probe's allowed connection and the
    records, then from the two binaries' connections."""
    one = _one_binary(
        record,
        configured=configured,
        endpoint_only=endpoint_only,
        decisions=decisions,
        fetch_error=fetch_error,
        expected_sha256=expected_sha256,
        via_supervisor=via_supervisor,
    )
    if one.observed not in (Observed.ENFORCED, Observed.VIOLATED):
        return one
    two = _two_binaries(
        record,
        decisions or [],
        endpoint_only=endpoint_only,
        probe_sha256=expected_sha256,
        other_sha256=other_sha256,
    )
    if two is None:
        return one
    observed, why, check = two
    checks = [*one.checks, check]
    if one.observed is Observed.VIOLATED or observed is None:
        return Observation(one.observed, one.reason, checks)
    if observed is Observed.ENFORCED:
        return Observation(Observed.ENFORCED, f"{one.reason}; {why}", checks)
    return Observation(observed, why, checks)


def _one_binary(
    record: CellRecord,
    *,
    configured: bool,
    endpoint_only: bool,
    decisions: Sequence[dict[str, Any]] | None,
    fetch_error: str | None,
    expected_sha256: str | None,
    via_supervisor: bool,
) -> Observation:
    """Attribution from the probe's allowed connection alone."""
    if not configured:
        return Observation(
            Observed.SKIPPED, "no decision-record source configured for this runtime"
        )
    if record.status is not CellStatus.COMPLETE:
        return Observation(Observed.INCONCLUSIVE, f"cell {record.status}: {record.reason}")
    probe = next((c for c in record.checks if c.id == ALLOWED_CONNECT), None)
    if probe is None:
        return Observation(Observed.INCONCLUSIVE, "the probe did not report the allowed connection")
    port = probe.evidence.get("src_port")
    check = CheckResult(
        id=ALLOWED_CONNECT,
        outcome=probe.outcome,
        errno=probe.errno,
        detail=probe.detail,
        elapsed_ms=probe.elapsed_ms,
        control="n/a",
    )
    if probe.outcome != CheckOutcome.OK or port is None:
        why = f"the allowed connection failed ({probe.outcome} {probe.errno or ''}): {probe.detail}"
        return Observation(Observed.INCONCLUSIVE, why.replace("  ", " "), [check])
    if decisions is None:
        return Observation(
            Observed.INCONCLUSIVE, f"decision records unavailable: {fetch_error}", [check]
        )
    dst = probe.evidence.get("dst")
    matches = find_records(decisions, int(port), str(dst) if dst else None)
    if not matches:
        why = f"no decision record for the allowed connection (src_port {port})"
        return Observation(Observed.VIOLATED, why, [check])
    if len(matches) > 1:
        why = f"{len(matches)} decision records match src_port {port}: which one is ambiguous"
        return Observation(Observed.INCONCLUSIVE, why, [check])
    rec = matches[0]
    route = ""
    # Behind harness's reference supervisor the route is always checked; behind an
    # external source, wherever its record names an upstream and the destination is
    # the canary's (which saw the connection arrive): a record naming the right binary
    # for a connection that went around the supervisor proves nothing.
    if via_supervisor or (rec.get("upstream") and arrivals(record)):
        around = _route(record, rec)
        if around is not None:
            observed, why, escaped = around
            out = CheckOutcome.ESCAPED if escaped else None  # it went around the supervisor
            return Observation(observed, why, [_with(check, why, out)])
        through = _short(rec["upstream"])
        route = f"; reached the destination only through the supervisor ({through})"
    path, sha = _identity(rec)
    if path:
        detail = f"attributed to {path}" + (f" (sha256 {sha})" if sha else "") + route
        if expected_sha256 and str(sha or "").lower() != expected_sha256.lower():
            why = (
                f"names the wrong binary: {path} (sha256 {sha or 'not given'}), but the probe"
                f" (sha256 {expected_sha256[:16]}...) made the connection"
            )
            return Observation(Observed.VIOLATED, why, [_with(check, why)])
        return Observation(Observed.ENFORCED, detail, [_with(check, detail)])
    if str(rec.get("identity", "")).lower() == "unavailable":
        reason = _short(rec.get("reason"))
        if endpoint_only and reason:
            detail = f"identity explicitly unavailable: {reason}{route}"
            return Observation(Observed.ENFORCED, detail, [_with(check, detail)])
        why = (
            "record says identity unavailable without a reason"
            if endpoint_only
            else "record says identity unavailable, but the runtime is not declared endpoint_only"
        )
        return Observation(Observed.VIOLATED, why, [_with(check, why)])
    why = "decision record carries no binary identity"
    return Observation(Observed.VIOLATED, why, [_with(check, why)])


def _two_binaries(
    record: CellRecord,
    decisions: Sequence[dict[str, Any]],
    *,
    endpoint_only: bool,
    probe_sha256: str | None,
    other_sha256: str | None,
) -> tuple[Observed | None, str, CheckResult] | None:
    """The two binaries' connections, each against its record: None if not asked;
    else (observed, why, the check as judged), observed None when not judged."""
    probe = next((c for c in record.checks if c.id == TWO_BINARIES), None)
    if probe is None:
        return None
    check = CheckResult(
        id=TWO_BINARIES,
        outcome=probe.outcome,
        errno=probe.errno,
        detail=probe.detail,
        elapsed_ms=probe.elapsed_ms,
        control="n/a",
    )
    ports = [probe.evidence.get(key) for key, _who in TWO_BINARIES_CONNECTIONS]
    shas = {"probe": (probe_sha256 or "").lower(), "other": (other_sha256 or "").lower()}
    if probe.outcome != CheckOutcome.OK:
        missing = "the probe's connections failed"
    elif None in ports:
        missing = "a connection reported no source port"
    elif not all(shas.values()):
        missing = "the sha256 of the probe or of `other` is unknown"
    else:
        missing = ""
    if missing:
        why = f"not judged ({missing}): {probe.outcome} {probe.detail}"
        # Never a pass: an `ok` the host cannot judge is shown as an error.
        shown = CheckOutcome.ERROR if probe.outcome == CheckOutcome.OK else None
        return None, why, _with(check, why, shown)
    dst = probe.evidence.get("dst")
    named = []
    for key, who in TWO_BINARIES_CONNECTIONS:
        port = probe.evidence[key]
        matches = find_records(decisions, int(str(port)), str(dst) if dst else None)
        if len(matches) != 1:
            observed = Observed.VIOLATED if not matches else Observed.INCONCLUSIVE
            why = f"{len(matches)} decision records for the {who}'s connection (src_port {port})"
            return observed, why, _with(check, why)
        path, sha = _identity(matches[0])
        if path is None:
            unavailable = str(matches[0].get("identity", "")).lower() == "unavailable"
            if unavailable and endpoint_only and matches[0].get("reason"):
                named.append(f"{who} {port}: identity unavailable{_decided(matches[0])}")
                continue
            why = f"the record of the {who}'s connection (src_port {port}) names no binary"
            return Observed.VIOLATED, why, _with(check, why, CheckOutcome.ESCAPED)
        if str(sha or "").lower() != shas[who]:
            other = "other" if who == "probe" else "probe"
            which = f"the {other}'s binary" if str(sha or "").lower() == shas[other] else "a binary"
            own = f" {_short(probe.evidence.get('binary'))}," if who == "other" else ""
            why = (
                f"the {who}'s connection (src_port {port},{own} sha256 {shas[who][:16]}...) is"
                f" attributed to {which}: {path} (sha256 {sha or 'not given'})"
            )
            return Observed.VIOLATED, why, _with(check, why, CheckOutcome.ESCAPED)
        named.append(f"{who} {port}: {path}{_decided(matches[0])}")
    said = (
        "no record naming the wrong one"
        if any("identity unavailable" in n for n in named)
        else "each named by its own record"
    )
    why = f"two binaries, interleaved, {said} (" + "; ".join(named) + ")"
    return Observed.ENFORCED, why, _with(check, why)


def _decided(rec: dict[str, Any]) -> str:
    """The record's decision, shown: a per-binary policy refuses the binary it does not name."""
    decision = rec.get("decision")
    return f" ({_short(decision)})" if decision else ""


def observe_route(record: CellRecord) -> Observation:
    """Did the allowed connection reach its destination only through the supervisor
    whose record names it? For every record source, an external one included: the
    record's `upstream` must be the one peer the canary saw the connection arrive from.
    SKIPPED when there is nothing to tie: no records, or a record without an upstream."""
    hs = record.host_side
    if hs.decisions is None:
        why = hs.decisions_error or "no decision-record source"
        return Observation(Observed.SKIPPED, f"no decision records: {why}")
    if record.status is not CellStatus.COMPLETE:
        return Observation(Observed.INCONCLUSIVE, f"cell {record.status}: {record.reason}")
    probe = next((c for c in record.checks if c.id == ALLOWED_CONNECT), None)
    port = probe.evidence.get("src_port") if probe is not None else None
    if probe is None or probe.outcome != CheckOutcome.OK or port is None:
        return Observation(Observed.INCONCLUSIVE, "the allowed connection did not connect")
    dst = probe.evidence.get("dst")
    matches = find_records(hs.decisions, int(port), str(dst) if dst else None)
    if len(matches) != 1:
        why = f"{len(matches)} decision records match the allowed connection (src_port {port})"
        return Observation(Observed.INCONCLUSIVE, why)
    upstream = matches[0].get("upstream")
    if not upstream:
        why = "the decision record names no upstream connection: nothing to match the canary's"
        return Observation(Observed.SKIPPED, why)
    around = _route(record, matches[0])
    if around is not None:
        return Observation(*around[:2])
    why = f"reached the destination only from its record's upstream, {_short(upstream)}"
    return Observation(Observed.ENFORCED, why)


def _route(record: CellRecord, rec: dict[str, Any]) -> tuple[Observed, str, bool] | None:
    """Did the allowed connection reach the destination only through the supervisor?
    None if so; else (observed, why, whether the canary saw it arrive around it)."""
    peers = arrivals(record)
    if peers is None:
        why = record.host_side.canary_error or "canary log unavailable"
        return (
            Observed.INCONCLUSIVE,
            f"{why}: cannot tell how the allowed connection got out",
            False,
        )
    upstream = rec.get("upstream")
    if not peers:
        return Observed.INCONCLUSIVE, "the allowed connection never reached the destination", False
    if not upstream:
        return Observed.VIOLATED, "the decision record names no upstream connection", False
    around = [p for p in peers if p != str(upstream)]
    if around:
        why = (
            f"the allowed destination was reached around the supervisor (from {around[0]};"
            f" the supervisor's upstream is {_short(upstream)})"
        )
        return Observed.VIOLATED, why, True
    return None


def arrivals(record: CellRecord) -> list[str] | None:
    """The peers the canary saw the allowed connection arrive from; None: no log."""
    events = record.host_side.canary_events
    if events is None:
        return None
    line = f"HARNESS {record.host_side.tag} {ALLOWED_CONNECT}".lower()
    return [
        str(e.get("peer"))
        for e in events
        if e.get("event") == "tcp" and _marks(str(e.get("line") or "").lower(), line)
    ]


def _marks(logged: str, line: str) -> bool:
    """The canary logged this connection's marker (or, for a cut one, its start)."""
    return len(logged) > len("harness ") + 8 and line.startswith(logged.strip())


def _with(check: CheckResult, detail: str, outcome: CheckOutcome | None = None) -> CheckResult:
    return CheckResult(
        id=check.id,
        outcome=outcome or check.outcome,
        errno=check.errno,
        detail=detail,
        elapsed_ms=check.elapsed_ms,
        control=check.control,
    )
