"""The probe's command line and its JSON-lines output.

Output is trusted only as far as it goes: a run without the final `done` line,
or whose count disagrees with the lines seen, is incomplete, never a pass.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.results.records import (
    ATTEMPT_OUTCOMES,
    CONTROL_OUTCOMES,
    FactObservation,
    ProbeCheck,
)
from harness.scenarios import SCENARIOS

PROTOCOL = 1
FACT_STATUSES = frozenset({"ok", "unavailable", "error", "timeout"})
# What each known check must be: an inside control must succeed, an attempt must
# fail, so a line that calls an attempt a control (or the reverse) is not trusted.
CHECK_KINDS = {
    (s.name, c.id): "control" if c.inside_control else "attempt"
    for s in SCENARIOS.values()
    for c in s.checks
}


def probe_args(
    scenarios: Sequence[str],
    *,
    check_timeout: float,
    deadline: float,
    tag: str,
    cell_nonce: str | None = None,
    options: Sequence[str] = (),
) -> list[str]:
    """Arguments for `probe run`: limits, a tag naming the cell, scenario options,
    then the scenarios.

    The tag puts the cell id in the probe's command line (and so in the remote
    `timeout` wrapper's), which is how cleanup finds what a dropped cell left.
    The cell nonce, a secret made for this one sandbox start, comes back in the
    start and done lines with a digest over everything between (`parse_output`).
    """
    return [
        "run",
        "--tag",
        tag,
        *(["--cell-nonce", cell_nonce] if cell_nonce else []),
        "--check-timeout-ms",
        str(max(1, int(check_timeout * 1000))),
        "--deadline-ms",
        str(max(1, int(deadline * 1000))),
        *options,
        *scenarios,
    ]


@dataclass(slots=True)
class ProbeOutput:
    """What one probe run printed, sorted into what the harness understands."""

    start: dict[str, Any] | None = None
    facts: list[FactObservation] = field(default_factory=list)
    checks: list[ProbeCheck] = field(default_factory=list)
    info: dict[str, dict[str, Any]] = field(default_factory=dict)
    done: bool = False
    fatal: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.done and not self.problems and self.fatal is None

    def failure(self) -> str:
        """Why the output cannot be trusted, in one line."""
        if self.fatal:
            return f"probe failed: {self.fatal}"
        if self.problems:
            return self.problems[0]
        if self.start is None:
            return "probe printed nothing it understood"
        return "probe output ended without its completion line"


def _fact(obj: dict[str, Any]) -> FactObservation:
    status = obj.get("status")
    if status not in FACT_STATUSES:
        raise ValueError(f"unknown status {status!r}")
    value = obj.get("value")
    if value is not None and not isinstance(value, int | bool | str):
        raise ValueError("value is not a number, bool or string")
    elapsed = obj.get("elapsed_ms")
    return FactObservation(
        id=str(obj["id"]),
        scenario=str(obj.get("scenario", "")),
        status=status,
        value=value,
        errno=obj.get("errno") if isinstance(obj.get("errno"), str) else None,
        detail=str(obj["detail"])[:500] if obj.get("detail") is not None else None,
        elapsed_ms=float(elapsed) if isinstance(elapsed, int | float) else None,
    )


# The tables the probe reports, each row a list of strings: `fs-mounts`' mounts
# ([dev, type, mount point, root, what was read there]; a probe before the last field
# reported four), `fs-write-reach`'s writes ([dev, type, mount point, root, path
# below it, how], and its files linked beyond the grants: [dev, type, path, links,
# links found, how]) and `fs-inherited-fds`' held files ([fd, kind, dev, path, mount
# point, mount root, access, reach, inode]) and the metadata changes that went through
# them ([fd, calls]) and its controlling terminal ([found by, session id, PID
# namespace, dev, path, mount point, legacy_tiocsti, CAP_SYS_ADMIN]), and `fs-mounts`'
# overlays ([mount point, super options, then up to 16 pairs of name and inode]).
TABLES = {
    "mounts": (4, 5),
    "writes": (6,),
    "links": (6,),
    "held_files": (9,),
    "held_changed": (2,),
    "ctty": (8,),
    "overlays": tuple(range(2, 35, 2)),
}


_SCALARS = frozenset({str, int, float, bool})  # kept as they are, without a call each
_OUTCOMES = {"attempt": ATTEMPT_OUTCOMES, "control": CONTROL_OUTCOMES}
_RAW_DECODE = json.JSONDecoder().raw_decode


def _loads(line: str) -> Any:
    """`json.loads(line)`: the same value, or the same error. A line that is one JSON
    value and nothing else is decoded without `loads`' checks around it; anything else
    (whitespace around it, more after it, no value) goes to `loads` itself."""
    try:
        obj, end = _RAW_DECODE(line)
    except ValueError:
        return json.loads(line)
    return obj if end == len(line) else json.loads(line)


def _table(key: str, value: object) -> bool:
    """Evidence is scalars (`_SCALARS`, as JSON decodes them), and the bounded tables
    of `TABLES`."""
    widths = TABLES.get(key)
    return (
        widths is not None
        and isinstance(value, list)
        and len(value) <= 512
        and all(
            isinstance(m, list) and len(m) in widths and all(isinstance(f, str) for f in m)
            for m in value
        )
    )


def _check(obj: dict[str, Any]) -> ProbeCheck:
    kind = obj.get("kind")
    outcome = obj.get("outcome")
    allowed = _OUTCOMES.get(str(kind))
    if allowed is None:
        raise ValueError(f"unknown check kind {kind!r}")
    if outcome not in allowed:
        raise ValueError(f"unknown {kind} outcome {outcome!r}")
    evidence = obj.get("evidence") or {}
    if not isinstance(evidence, dict):
        raise ValueError("evidence is not an object")
    elapsed = obj.get("elapsed_ms")
    return ProbeCheck(  # by position, in the fields' order: one line per check of a cell
        str(obj["id"]),
        str(obj.get("scenario", "")),
        str(kind),
        str(outcome),
        errno if isinstance(errno := obj.get("errno"), str) else None,
        None if (detail := obj.get("detail")) is None else str(detail)[:500],
        float(elapsed) if isinstance(elapsed, (int, float)) else None,
        {k: v for k, v in evidence.items() if type(v) in _SCALARS or _table(k, v)},
    )


def parse_output(stdout: str, *, cell_nonce: str | None = None) -> ProbeOutput:
    """Sort probe stdout into facts; anything malformed is a recorded problem.

    With `cell_nonce`, the output must be this cell's own: the start and done lines
    carry the nonce and the done line the sha256 of the nonce and of every line in
    between. Output recorded elsewhere and replayed (a canned "all blocked") has
    neither, so it is incomplete: never a pass.
    """
    out = ProbeOutput()
    digest = hashlib.sha256(f"{cell_nonce}\n".encode()) if cell_nonce else None
    fact_ids: set[str] = set()  # what was reported, to refuse it twice without a scan
    check_keys: set[tuple[str, str]] = set()
    for number, line in enumerate(stdout.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = _loads(line)
            if not isinstance(obj, dict):
                raise ValueError("not an object")
            kind = obj.get("type")
            if out.done:
                raise ValueError("output after the completion line")
            if kind == "start":
                if out.start is not None:
                    raise ValueError("a second start line")
                if obj.get("protocol") != PROTOCOL:
                    raise ValueError(f"protocol {obj.get('protocol')!r}, expected {PROTOCOL}")
                if cell_nonce is not None and obj.get("cell_nonce") != cell_nonce:
                    raise ValueError("start line without this cell's nonce (replayed or stale)")
                out.start = obj
                continue
            if digest is not None and out.start is not None and kind != "done":
                digest.update(f"{line}\n".encode())
            if out.start is None and kind in ("fact", "check", "info", "done"):
                raise ValueError("output before the start line")
            elif kind == "fact":
                fact = _fact(obj)
                if fact.id in fact_ids:
                    raise ValueError(f"fact {fact.id} reported twice")
                fact_ids.add(fact.id)
                out.facts.append(fact)
            elif kind == "check":
                check = _check(obj)
                must_be = CHECK_KINDS.get((check.scenario, check.id), check.kind)
                if check.kind != must_be:
                    raise ValueError(f"check {check.id} has kind {check.kind!r}, not {must_be!r}")
                if (check.scenario, check.id) in check_keys:
                    raise ValueError(f"check {check.id} reported twice")
                check_keys.add((check.scenario, check.id))
                out.checks.append(check)
            elif kind == "info":
                out.info[str(obj["id"])] = {k: v for k, v in obj.items() if k != "type"}
            elif kind == "done":
                seen = len(out.facts) + len(out.checks)
                count = obj.get("count")
                if isinstance(count, bool) or count != seen:
                    raise ValueError(f"completion line counts {obj.get('count')}, saw {seen}")
                if digest is not None:  # there is a cell nonce
                    if obj.get("cell_nonce") != cell_nonce:
                        raise ValueError("completion line without this cell's nonce")
                    if not hmac.compare_digest(str(obj.get("digest")), digest.hexdigest()):
                        raise ValueError("completion line's digest does not match the lines seen")
                out.done = True
            elif kind == "fatal":
                out.fatal = str(obj.get("detail", "unknown"))[:300]
            else:
                raise ValueError(f"unknown line type {kind!r}")
        except (ValueError, KeyError, TypeError, OverflowError, RecursionError) as exc:
            # (an integer too large for a float; a value nested past Python's stack)
            shown = line if len(line) <= 80 else line[:77] + "..."
            out.problems.append(f"probe output line {number} unusable ({exc}): {shown!r}")
    return out
