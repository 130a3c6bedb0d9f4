"""Read a results folder back, through the same typed models for every reader.

`harness report`, `diff`, `merge`, `evidence` and `run --resume` all read a folder
here: the manifest is checked against `Manifest`, each line of `cells.jsonl` and
`verdicts.jsonl` against the record it must be (pydantic validates the record
dataclasses themselves: one model, one error wording). Unknown keys are ignored,
so an older harness can read a newer run. Anything else that is wrong (not JSON,
not UTF-8, not an object, nested too deep, a wrong type, a missing key or file)
is one line naming the file, the line and the key: bad input, exit 2. A torn last
line, left by a run that was killed mid-write, is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from harness.errors import UsageError
from harness.results.records import CellRecord, VerdictRecord
from harness.results.store import CELLS, MANIFEST, VERDICTS

T = TypeVar("T")
MAX_DEPTH = 64  # deeper JSON is not a record harness wrote


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class MatrixRef(_Open):
    name: str | None = None
    path: str | None = None
    sha256: str | None = None


class Segment(_Open):
    run_id: str | None = None
    started: str | None = None
    ended: str | None = None


class Manifest(_Open):
    """The keys of manifest.json that readers use, with their types."""

    run_id: str | None = None
    matrix: MatrixRef | None = None
    started: str | None = None
    ended: str | None = None
    interrupted: bool | None = None
    exit_code: int | None = None
    hosts: dict[str, dict[str, Any]] | None = None
    runtimes: dict[str, dict[str, Any]] | None = None
    selection: dict[str, Any] | None = None
    segments: list[Segment] | None = None
    scenarios: list[str] | None = None


@dataclass(frozen=True, slots=True)
class Line:
    """One record line: its exact bytes (evidence digests them) and its object."""

    number: int
    raw: bytes
    data: dict[str, Any]


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def _adapter(cls: type[T]) -> TypeAdapter[T]:
    """Built once per record type, on first use (a report that reads no cells
    never builds the cell model)."""
    found = _ADAPTERS.get(cls)
    if found is None:
        found = _ADAPTERS[cls] = TypeAdapter(cls)
    return found


def _problem(exc: ValidationError) -> str:
    """The first error as `key.path: message (got value)`, on one short line."""
    from harness.text import shorten

    err = exc.errors()[0]
    key = ".".join(str(p) for p in err["loc"]) or "(record)"
    got = err.get("input")
    shown = "" if isinstance(got, dict | list) else f" (got {shorten(repr(got), 60)})"
    return f"{key}: {err['msg']}{shown}"


def _validate(cls: type[T], data: Any, where: str) -> T:
    try:
        return _adapter(cls).validate_python(data)
    except ValidationError as exc:
        raise UsageError(f"{where}: {_problem(exc)}") from None


def verdict_from_json(data: Mapping[str, Any], where: str = VERDICTS) -> VerdictRecord:
    return _validate(VerdictRecord, dict(data), where)


def cell_from_json(data: Mapping[str, Any], where: str = CELLS) -> CellRecord:
    return _validate(CellRecord, dict(data), where)


def _depth(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Is the value nested no deeper than `limit`? (Iterative: no recursion limit.)"""
    stack = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if level > limit:
            return False
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return True


def _loads(raw: bytes) -> Any:
    """JSON from bytes, or ValueError; nesting past json's recursion is refused too."""
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None


def read_manifest(folder: Path) -> dict[str, Any]:
    """manifest.json as a dict whose keys readers use have their types."""
    path = folder / MANIFEST
    if not folder.is_dir():
        raise UsageError(f"{folder}: not a results folder (no such directory)")
    try:
        data = _loads(path.read_bytes())
    except FileNotFoundError:
        raise UsageError(f"{folder}: not a results folder (no {MANIFEST})") from None
    except OSError as exc:
        raise UsageError(f"{path}: unreadable: {exc.strerror}") from None
    except ValueError as exc:
        raise UsageError(f"{path}: not JSON: {str(exc).splitlines()[0][:120]}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: not a manifest (a JSON object)")
    if not _depth(data):
        raise UsageError(f"{path}: nested deeper than {MAX_DEPTH} levels")
    _validate(Manifest, data, str(path))
    return data


def read_lines(path: Path, *, required: bool = True) -> list[Line]:
    """Every record line of a `.jsonl` file, each a JSON object; a torn last line
    (no newline at its end) is skipped."""
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        if not required:
            return []
        raise UsageError(f"{path.parent}: not a results folder (no {path.name})") from None
    except OSError as exc:
        raise UsageError(f"{path}: unreadable: {exc.strerror}") from None
    lines = []
    pieces = blob.split(b"\n")
    for number, raw in enumerate(pieces, start=1):
        last = number == len(pieces)
        if not raw.strip():
            continue
        try:
            data = _loads(raw)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            if not _depth(data):
                raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
        except ValueError as exc:
            if last:
                continue  # torn by a run killed mid-write
            why = str(exc).splitlines()[0][:120]
            raise UsageError(f"{path}: line {number}: {why}") from None
        lines.append(Line(number, raw + (b"" if last else b"\n"), data))
    return lines


def read_cells(folder: Path, *, required: bool = True) -> list[tuple[Line, CellRecord]]:
    path = folder / CELLS
    return [
        (line, cell_from_json(line.data, f"{path}: line {line.number}"))
        for line in read_lines(path, required=required)
    ]


def read_verdicts(folder: Path, *, required: bool = True) -> list[tuple[Line, VerdictRecord]]:
    path = folder / VERDICTS
    return [
        (line, verdict_from_json(line.data, f"{path}: line {line.number}"))
        for line in read_lines(path, required=required)
    ]
