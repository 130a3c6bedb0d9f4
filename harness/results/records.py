"""The values a run produces: what the probe saw, what each cell did, and verdicts.

These are the shapes of `cells.jsonl` and `verdicts.jsonl` (docs/results.md; their JSON
Schemas, generated from these types, are in docs/schemas/).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum, StrEnum
from typing import Any

_ATOMS = frozenset({str, int, float, bool, type(None)})
_FIELDS: dict[type, tuple[str, ...]] = {}
_MAKERS: dict[type, Callable[[Any], dict[str, Any]] | None] = {}


def fields_of(value: Any) -> dict[str, Any] | None:
    """A dataclass instance's fields, in order, as a new dict of the fields' own values
    (nothing copied); None for anything else. What `_plain` makes of one level."""
    cls = type(value)
    make = _MAKERS.get(cls)
    if make is None:
        if cls in _MAKERS or not is_dataclass(cls):
            _MAKERS[cls] = None
            return None
        make = _MAKERS[cls] = _maker(cls)
    return make(value)


def _maker(cls: type) -> Callable[[Any], dict[str, Any]]:
    """`lambda v: {"id": v.id, ...}` for the class's fields, made once per class as
    `dataclasses` makes its methods: a dict display is three to four times quicker
    than one zipped from the fields' names and values, on the hot path of every record
    written."""
    body = ", ".join(f"{f.name!r}: v.{f.name}" for f in fields(cls))
    made: Callable[[Any], dict[str, Any]] = eval(f"lambda v: {{{body}}}")
    return made


def _parts(items: list[Any]) -> list[Any]:
    """A list of records' parts (checks, facts) one level plain: each dataclass as its
    fields, anything else as it is (the JSON encoder's `default` sees to the rest)."""
    if type(items) is not list:
        return items  # `_plain` keeps a tuple a tuple
    return [part if (part := fields_of(item)) is not None else item for item in items]


def _plain(value: Any) -> Any:
    """What `dataclasses.asdict` returns, without its deepcopy of every leaf.

    Every cell and verdict goes through this on its way to the results folder, so
    it is on the hot path of a large run; the result is the same independent copy.
    Most leaves are atoms: they are taken as they are, without a call each.
    """
    atoms = _ATOMS
    cls = type(value)
    if cls in atoms:
        return value
    if cls is list:
        return [v if type(v) in atoms else _plain(v) for v in value]
    if cls is dict:
        return {
            k if type(k) in atoms else _plain(k): v if type(v) in atoms else _plain(v)
            for k, v in value.items()
        }
    names = _FIELDS.get(cls)
    if names is None and is_dataclass(cls):
        names = _FIELDS.setdefault(cls, tuple(f.name for f in fields(cls)))
    if names is not None:
        return {
            name: v if type(v := getattr(value, name)) in atoms else _plain(v) for name in names
        }
    if cls is tuple:
        return tuple(_plain(v) for v in value)
    if isinstance(value, Enum):
        return value
    return copy.deepcopy(value)


class CellStatus(StrEnum):
    """How a cell ended. Only `complete` means the probe finished every check."""

    COMPLETE = "complete"
    ERROR = "error"  # the probe ran but its output is unusable (crash, garbage, no done line)
    TIMEOUT = "timeout"  # killed at the cell timeout
    UNAVAILABLE = "unavailable"  # runtime binary missing on the host
    UNREACHABLE = "unreachable"  # the host could not be reached or prepared
    CANCELLED = "cancelled"  # the run was interrupted before the cell finished


class Verdict(StrEnum):
    PASS = "pass"
    REGRESSION = "regression"
    UNEXPECTED = "unexpected"
    INCONCLUSIVE = "inconclusive"
    SKIPPED = "skipped"
    FLAKY = "flaky"  # reruns of a mismatch disagreed (`--reruns`); never silently a pass


@dataclass(frozen=True, slots=True)
class FactObservation:
    """One mechanism fact as the probe reported it."""

    id: str
    scenario: str
    status: str  # ok | unavailable | error | timeout
    value: int | bool | str | None = None
    errno: str | None = None
    detail: str | None = None
    elapsed_ms: float | None = None

    @property
    def available(self) -> bool:
        return self.status == "ok"

    def display(self) -> str:
        """Human form: `7`, `true`, `unavailable (ENOSYS)`, `timeout`."""
        if self.status == "ok":
            return json.dumps(self.value) if isinstance(self.value, bool) else str(self.value)
        if self.status == "unavailable":
            return f"unavailable ({self.errno})" if self.errno else "unavailable"
        return self.status


class CheckOutcome(StrEnum):
    """A check's outcome: the probe's word, then harness's after the host's evidence.

    An attempt reports `blocked`, `escaped`, `succeeded` (it went through, proof to
    come from the host), `error` or `timeout`; an inside control `ok` or `failed`.
    `missing` is harness's: a declared check the probe never reported.
    """

    BLOCKED = "blocked"
    ESCAPED = "escaped"
    SUCCEEDED = "succeeded"
    ERROR = "error"
    TIMEOUT = "timeout"
    OK = "ok"
    FAILED = "failed"
    MISSING = "missing"


class Observed(StrEnum):
    """What a cell showed about one property (`flaky`: reruns disagreed)."""

    ENFORCED = "enforced"
    VIOLATED = "violated"
    INCONCLUSIVE = "inconclusive"
    SKIPPED = "skipped"
    FLAKY = "flaky"


ATTEMPT_OUTCOMES = frozenset(
    {
        CheckOutcome.BLOCKED,
        CheckOutcome.ESCAPED,
        CheckOutcome.SUCCEEDED,
        CheckOutcome.ERROR,
        CheckOutcome.TIMEOUT,
    }
)
CONTROL_OUTCOMES = frozenset(
    {CheckOutcome.OK, CheckOutcome.FAILED, CheckOutcome.ERROR, CheckOutcome.TIMEOUT}
)


@dataclass(frozen=True, slots=True)
class ProbeCheck:
    """One violation attempt (or inside control) as the probe reported it.

    `succeeded` means the operation went through but the probe holds no proof it
    crossed the boundary; host-side evidence (canary log, sentinel files) decides.
    """

    id: str
    scenario: str
    kind: str  # attempt | control
    outcome: str
    errno: str | None = None
    detail: str | None = None
    elapsed_ms: float | None = None
    evidence: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Folders written before the probe spoke the scenarios' own names still read.
        if self.scenario in LEGACY_SCENARIO_NAMES:
            object.__setattr__(self, "scenario", LEGACY_SCENARIO_NAMES[self.scenario])


# The probe's short scenario names up to harness 0.1.0's check table of 2026-11.
LEGACY_SCENARIO_NAMES = {
    "egress": "egress-confinement",
    "filesystem": "filesystem-confinement",
    "privilege": "privilege-floor",
}


@dataclass(frozen=True, slots=True)
class Phase:
    """What the host did at one barrier of a cell in phases: the hook's exit status,
    how long it took (ms), and the first line it printed (docs/probe-protocol.md,
    "Phases"). Parsed from the envelope's report (`hostside/envelope.py`)."""

    status: int
    ms: int
    said: str = ""

    def to_json(self) -> dict[str, object]:
        return {"status": self.status, "ms": self.ms, "said": self.said}


@dataclass(frozen=True, slots=True)
class HostEvidence:
    """What the host saw around one cell, apart from the probe's own report.

    Every field is optional: a missing one is a gap (the fixture was not needed, or
    could not be read, with the `*_error` saying why), and a gap makes the checks
    that depend on it inconclusive, never passed. Written under `host_side` in
    `cells.jsonl`, with unset fields left out.
    """

    tag: str = ""  # the cell's id, carried by every attempt the probe makes
    # Canary: every arrival logged for this cell (None: the log was not read).
    canary_events: list[dict[str, Any]] | None = None
    canary_error: str | None = None
    canary_has: list[str] | None = None  # "ipv4", "ipv6", "capture": what it can see
    # The canary's IPC objects it could not make, by the check aiming at each, with
    # the error (a limit reached, a kernel without them): those checks' controls fail.
    canary_unbound: dict[str, str] | None = None
    settled: float | None = None  # seconds waited after the host's last sandbox, if any
    # Arrivals at the canary that no attempt of any cell on the host explains (the
    # first few): a crossing by an unknown way, held against every cell there.
    canary_unexplained: list[dict[str, Any]] | None = None
    # Sentinels: their state after the cell (created, overwritten, renamed...).
    fs: dict[str, Any] | None = None
    fs_error: str | None = None
    # The host's mount table and boot id, and what the cell granted the sandbox.
    host_fs: dict[str, Any] | None = None
    grants: dict[str, list[str]] | None = None
    # What the host shows at each path a descriptor held at start from outside the
    # sandbox's mount namespace names, and at each name atop an overlay of the
    # sandbox's own in each of its layers: "MAJ:MIN INODE", "" where nothing is there.
    held_paths: dict[str, str] | None = None
    # Harness's decoys for the cell's runtime (hostside/hostfs.py): the folders they were
    # made in ("planted"), and those where they could not be, each with why ("skipped").
    decoys: dict[str, list[str]] | None = None
    # Decision records matching the cell's allowed connection.
    decisions: list[dict[str, Any]] | None = None
    decisions_error: str | None = None
    probe_sha256: str | None = None  # the binary a decision record must name
    other_sha256: str | None = None  # the helpers' `other`, for attr-two-binaries
    # What the host did at each barrier of a cell in phases, by phase name.
    phases: dict[str, Phase] | None = None
    # After the sandbox command ended: the processes of the cell still running on the
    # host ("PID ARGS", the first few; the probe leaves one behind on purpose), killed
    # then. [] where none was left; None where not looked for (execution.survivors).
    survivors: list[str] | None = None
    evidence_error: str | None = None  # the host could not be asked at all

    def __post_init__(self) -> None:
        # A fixture hands its parts over as plain data (`CellSetup.evidence`): typed here,
        # the one place, so that every reader sees the same types however it was made.
        if self.phases is not None and any(not isinstance(p, Phase) for p in self.phases.values()):
            typed = {
                name: p if isinstance(p, Phase) else Phase(**p) for name, p in self.phases.items()
            }
            object.__setattr__(self, "phases", typed)

    def row(self) -> dict[str, Any]:
        """`to_json` before its parts are made plain (`CellRecord.row`)."""
        data = fields_of(self) or {}
        return {k: v for k, v in data.items() if v is not None and v != ""}

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = _plain(self.row())
        return data


@dataclass(frozen=True, slots=True)
class CellRecord:
    """One attempt at one (host, runtime) cell, raw probe output included."""

    run_id: str
    host: str
    runtime: str
    kind: str
    scenarios: list[str]
    status: CellStatus
    reason: str | None
    started: str
    ended: str
    elapsed: float
    exit_status: int | None = None
    signal: str | None = None
    stdout: str = ""
    stderr: str = ""
    probe_start: dict[str, Any] | None = None
    facts: list[FactObservation] = field(default_factory=list)
    checks: list[ProbeCheck] = field(default_factory=list)
    info: dict[str, dict[str, Any]] = field(default_factory=dict)
    host_side: HostEvidence = field(default_factory=HostEvidence)
    control: bool = False  # an implicit host-runtime cell run only as the control
    attempt: int = 1  # >1 for `--reruns` of a mismatched cell
    host_kernel: str | None = None
    runtime_version: str | None = None

    def row(self) -> dict[str, Any]:
        """The record's line as a dict whose parts (checks, facts, phases) may still be
        records themselves: `to_json` makes them plain; the results store writes it as
        it is (`layout.dump_row`), each part made plain on the way, not copied first."""
        data = fields_of(self) or {}
        data["status"] = str(self.status)
        data["facts"] = _parts(self.facts)
        data["checks"] = _parts(self.checks)
        data["host_side"] = self.host_side.row()  # it drops empty fields
        return data

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = _plain(self.row())
        return data


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One attempt as it appears in a verdict: its outcome and why."""

    id: str
    outcome: str
    errno: str | None = None
    detail: str | None = None
    elapsed_ms: float | None = None
    control: str | None = None


@dataclass(frozen=True, slots=True)
class VerdictRecord:
    """The judgement for one (host, runtime, property or fact)."""

    host: str
    runtime: str
    expected: int | bool | str | None
    observed: int | bool | str | None
    verdict: Verdict
    reason: str | None = None
    fact: str | None = None
    property: str | None = None
    errno: str | None = None
    display: str = ""
    checks: list[CheckResult] = field(default_factory=list)

    def subject(self) -> str:
        """The fact or property this verdict is about."""
        return self.fact or self.property or "?"

    def row(self) -> dict[str, Any]:
        """`to_json` before its checks are made plain (`CellRecord.row`)."""
        data = fields_of(self) or {}
        data["verdict"] = str(self.verdict)
        data["checks"] = _parts(self.checks)
        if self.fact is None:
            del data["fact"]
        if self.property is None:
            del data["property"]
        return data

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = _plain(self.row())
        return data
