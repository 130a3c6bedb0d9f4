"""Rebuild typed records from the lines of a results folder.

Unknown keys are ignored, so an older harness can read a newer run; a missing
required key or an unknown verdict is bad input (exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, TypeVar

from harness.errors import UsageError
from harness.results.records import (
    CellRecord,
    CellStatus,
    CheckResult,
    FactObservation,
    ProbeCheck,
    Verdict,
    VerdictRecord,
)
from harness.results.store import CELLS, VERDICTS

T = TypeVar("T")


def _build(cls: type[T], data: Mapping[str, Any], where: str, **override: Any) -> T:
    """Make a record from a JSON object: unknown keys ignored, missing required ones refused."""
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    kwargs = {k: v for k, v in data.items() if k in names}
    kwargs.update(override)
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise UsageError(f"{where}: not a {cls.__name__} record ({exc})") from None


def verdict_from_json(data: Mapping[str, Any], where: str = VERDICTS) -> VerdictRecord:
    try:
        verdict = Verdict(str(data.get("verdict")))
    except ValueError:
        raise UsageError(f"{where}: unknown verdict {data.get('verdict')!r}") from None
    checks = [_build(CheckResult, c, where) for c in data.get("checks") or []]
    return _build(VerdictRecord, data, where, verdict=verdict, checks=checks)


def cell_from_json(data: Mapping[str, Any], where: str = CELLS) -> CellRecord:
    try:
        status = CellStatus(str(data.get("status")))
    except ValueError:
        raise UsageError(f"{where}: unknown cell status {data.get('status')!r}") from None
    facts = [_build(FactObservation, f, where) for f in data.get("facts") or []]
    checks = [_build(ProbeCheck, c, where) for c in data.get("checks") or []]
    return _build(CellRecord, data, where, status=status, facts=facts, checks=checks)
