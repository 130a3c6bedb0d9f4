"""Reading a results folder: `load_run` and the `Run` it gives reports and diffs,
`read_manifest`, and each record line checked as the record it must be.

Unknown keys are ignored. Anything else that is wrong (not JSON, not UTF-8, not an
object, nested too deep, a wrong type, a missing key or file) is one line naming the
folder, the file, the line and the key (`layout.unreadable`), exit 2. A torn last
line, left by a run that was killed mid-write, is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import TypeAdapter, ValidationError

from harness.errors import ResultsError
from harness.files import Unreadable, open_regular, read_regular
from harness.results.records import CellRecord, VerdictRecord
from harness.results.store.layout import (
    CELLS,
    MANIFEST,
    MAX_DEPTH,
    MAX_MANIFEST,
    VERDICTS,
    unreadable,
)
from harness.results.store.manifest import HostEntry, HostRuntime, Manifest

T = TypeVar("T")
Key = tuple[str, str, str]  # (host, runtime, fact or property)


@dataclass(frozen=True, slots=True)
class Line:
    """One record line: its exact bytes (evidence digests them) and its object."""

    number: int
    raw: bytes
    data: dict[str, Any]
    offset: int = 0  # where the line starts in its file


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


class _Invalid(ValueError):
    """A record that is JSON but not the record it must be (a key, a type)."""


def _validate(cls: type[T], data: Any, where: str) -> T:
    try:
        return _adapter(cls).validate_python(data)
    except ValidationError as exc:
        raise _Invalid(f"{where}: {_problem(exc)}") from None


def _from_json(cls: type[T], data: Mapping[str, Any], where: str) -> T:
    try:
        return _validate(cls, dict(data), where)
    except _Invalid as exc:
        raise ResultsError(str(exc)) from None


def cell_from_json(data: Mapping[str, Any]) -> CellRecord:
    """One object of cells.jsonl as its record (`CellRecord.to_json`'s inverse)."""
    return _from_json(CellRecord, data, CELLS)


def verdict_from_json(data: Mapping[str, Any]) -> VerdictRecord:
    """One object of verdicts.jsonl as its record (`VerdictRecord.to_json`'s inverse)."""
    return _from_json(VerdictRecord, data, VERDICTS)


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
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None


def read_manifest(folder: Path) -> Manifest:
    """manifest.json, typed."""
    if not folder.is_dir():
        raise unreadable(folder, "not a directory" if folder.exists() else "no such directory")
    try:
        data = _loads(read_regular(folder / MANIFEST, limit=MAX_MANIFEST))
    except Unreadable as exc:
        why = f"no {MANIFEST}" if exc.missing else f"{MANIFEST}: {exc.why}"
        raise unreadable(folder, why) from None
    except ValueError as exc:
        why = str(exc).splitlines()[0][:120]
        raise unreadable(folder, f"{MANIFEST}: {why}") from None
    if not isinstance(data, dict):
        raise unreadable(folder, f"{MANIFEST}: not a JSON object")
    if not _depth(data):
        raise unreadable(folder, f"{MANIFEST}: nested deeper than {MAX_DEPTH} levels")
    try:
        return _validate(Manifest, data, MANIFEST)
    except _Invalid as exc:
        raise unreadable(folder, str(exc)) from None


def iter_lines(folder: Path, name: str, *, required: bool = True) -> Iterator[Line]:
    """Each record line of one of the folder's `.jsonl` files, each a JSON object,
    read one at a time (a report's memory never holds the whole file); a torn last
    line (no newline at its end) is skipped."""
    try:
        fh = open_regular(folder / name)
    except Unreadable as exc:
        if exc.missing and not required:
            return
        raise unreadable(folder, f"no {name}" if exc.missing else f"{name}: {exc.why}") from None
    with fh:
        try:
            offset = 0
            for number, raw in enumerate(fh, start=1):
                start, offset = offset, offset + len(raw)
                last = not raw.endswith(b"\n")
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
                    raise unreadable(folder, f"{name} line {number}: {why}") from None
                yield Line(number, raw, data, start)
        except OSError as exc:  # an I/O error part way through the file
            raise unreadable(folder, f"{name}: cannot read: {exc.strerror}") from None


def read_lines(folder: Path, name: str, *, required: bool = True) -> list[Line]:
    """Every record line of one of the folder's `.jsonl` files (`iter_lines`)."""
    return list(iter_lines(folder, name, required=required))


def _iter_records(
    folder: Path, name: str, cls: type[T], *, required: bool
) -> Iterator[tuple[Line, T]]:
    for line in iter_lines(folder, name, required=required):
        try:
            yield line, _validate(cls, line.data, f"{name} line {line.number}")
        except _Invalid as exc:
            raise unreadable(folder, str(exc)) from None


def _records(folder: Path, name: str, cls: type[T], *, required: bool) -> list[tuple[Line, T]]:
    return list(_iter_records(folder, name, cls, required=required))


def read_cells(folder: Path, *, required: bool = True) -> list[tuple[Line, CellRecord]]:
    return _records(folder, CELLS, CellRecord, required=required)


def read_verdicts(folder: Path, *, required: bool = True) -> list[tuple[Line, VerdictRecord]]:
    return _records(folder, VERDICTS, VerdictRecord, required=required)


CellsKept = Literal["all", "lazy", "none"]
ChecksKept = Literal["all", "lazy"]


@dataclass(frozen=True, slots=True)
class Run:
    """One results folder, read back."""

    folder: Path
    manifest: Manifest
    cells: list[CellRecord] = field(default_factory=list)
    verdicts: list[VerdictRecord] = field(default_factory=list)
    # Verdicts by host and judged cells by (host, runtime), built on first use: a
    # report asks per host, and scanning every record per host grew as hosts².
    _index: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def _of_host(self, host: str | None) -> list[VerdictRecord]:
        if host is None:
            return self.verdicts
        if "verdicts" not in self._index:
            grouped: dict[str, list[VerdictRecord]] = {}
            for v in self.verdicts:
                grouped.setdefault(v.host, []).append(v)
            self._index["verdicts"] = grouped
        found: list[VerdictRecord] = self._index["verdicts"].get(host, [])
        return found

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def run_id(self) -> str:
        return self.manifest.run_id or ""

    @property
    def matrix_name(self) -> str:
        matrix = self.manifest.matrix
        return matrix.name or "" if matrix else ""

    @property
    def started(self) -> str:
        return self.manifest.started or ""

    @property
    def ended(self) -> str | None:
        return self.manifest.ended or None

    @property
    def exit_code(self) -> int | None:
        return self.manifest.exit_code

    @property
    def interrupted(self) -> bool:
        return bool(self.manifest.interrupted)

    def hosts(self) -> list[str]:
        """Hosts in the manifest's order, then any that only the verdicts name."""
        order = list(self.manifest.hosts or {})
        return list(dict.fromkeys([*order, *(v.host for v in self.verdicts)]))

    def runtimes(self, host: str | None = None) -> list[str]:
        """Runtimes in matrix order (as the manifest lists them), for one host or all."""
        order: list[str] = []
        hosts = self.manifest.hosts or {}
        entries = hosts.values() if host is None else [hosts[host]] if host in hosts else []
        for entry in entries:
            order.extend(entry.runtimes or {})
        seen = [v.runtime for v in self._of_host(host)]
        present = set(seen)
        return [r for r in dict.fromkeys([*order, *seen]) if r in present]

    def subjects(self, host: str | None = None) -> list[str]:
        """Facts and properties in the order the cells report them."""
        return list(dict.fromkeys(v.subject() for v in self._of_host(host)))

    def verdicts_of(self, host: str) -> list[VerdictRecord]:
        """One host's verdicts, in file order."""
        return self._of_host(host)

    def by_key(self) -> dict[Key, VerdictRecord]:
        return {(v.host, v.runtime, v.subject()): v for v in self.verdicts}

    def cell(self, host: str, runtime: str) -> CellRecord | None:
        """The (last) record of a judged cell; implicit control cells are not judged."""
        offsets = self._index.get("offsets")
        if offsets is not None:
            at = offsets.get((host, runtime))
            return None if at is None else self._read_cell(at)
        if "cells" not in self._index:
            self._index["cells"] = {
                (c.host, c.runtime): c for c in self.cells if not c.control
            }  # the last record of each wins
        found: CellRecord | None = self._index["cells"].get((host, runtime))
        return found

    def _read_cell(self, offset: int) -> CellRecord:
        """The cell record whose line starts at `offset` (checked when first read)."""
        return self._reread(CELLS, CellRecord, offset)

    def _reread(self, name: str, cls: type[T], offset: int) -> T:
        """The record of file `name` whose line starts at `offset`, read again."""
        try:
            with open_regular(self.folder / name) as fh:
                fh.seek(offset)
                data = _loads(fh.readline())
            return _validate(cls, data, name)
        except Unreadable as exc:
            raise unreadable(self.folder, f"{name}: {exc.why}") from None
        except (ValueError, _Invalid) as exc:  # rewritten while the report was made
            raise unreadable(self.folder, f"{name}: changed while read: {exc}") from None

    def full(self, verdict: VerdictRecord) -> VerdictRecord:
        """The verdict with its check results: as kept, or, for a run loaded with
        checks="lazy", read again from its line (one verdict's checks at a time)."""
        at = self._index.get("verdict_offsets", {}).get(id(verdict))
        return verdict if at is None else self._reread(VERDICTS, VerdictRecord, at)

    def host_info(self, host: str) -> HostEntry:
        return self.manifest.host(host)

    def _runtime_info(self, host: str, runtime: str) -> HostRuntime:
        return (self.host_info(host).runtimes or {}).get(runtime) or HostRuntime()

    def runtime_version(self, host: str, runtime: str) -> str | None:
        """What the runtime said about itself (e.g. `runsc --version`), if anything."""
        version = self._runtime_info(host, runtime).version
        if version:
            return version
        cell = self.cell(host, runtime)
        return cell.runtime_version if cell else None

    def runtime_build(self, host: str, runtime: str) -> str | None:
        """The release build harness installed for the runtime, as
        `channel/version (sha512 prefix)`; None for a runtime not run by release."""
        build = self._runtime_info(host, runtime).build
        if build is None or not build.version:
            return None
        digest = (build.sha512 or "")[:16]
        return f"{build.channel}/{build.version} (sha512 {digest})"

    def kernel(self, host: str) -> str | None:
        return self.host_info(host).kernel_release or None


def load_run(folder: Path, *, cells: CellsKept = "all", checks: ChecksKept = "all") -> Run:
    """Read one results folder: its manifest, verdicts (required) and cells.

    Every cell line is read and checked, one at a time. `cells` says what is kept:
    "all" the records; "lazy" only where each judged cell's line starts, so that
    `Run.cell` reads it again when asked (a report holds one cell's probe output at
    a time, however many hosts); "none" nothing (a report of verdicts only).
    `checks="lazy"` keeps each verdict without its check results and where its line
    starts, for `Run.full` (a fleet's check results were most of a report's memory).
    """
    manifest = read_manifest(folder)
    verdicts: list[VerdictRecord] = []
    verdict_offsets: dict[int, int] = {}
    for line, verdict in _iter_records(folder, VERDICTS, VerdictRecord, required=True):
        if checks == "lazy" and verdict.checks:
            verdict = replace(verdict, checks=[])
            verdict_offsets[id(verdict)] = line.offset
        verdicts.append(verdict)
    kept: list[CellRecord] = []
    offsets: dict[tuple[str, str], int] = {}
    for line, cell in _iter_records(folder, CELLS, CellRecord, required=False):
        if cells == "all":
            kept.append(cell)
        elif cells == "lazy" and not cell.control:
            offsets[(cell.host, cell.runtime)] = line.offset  # the last record wins
    run = Run(folder=folder, manifest=manifest, cells=kept, verdicts=verdicts)
    if cells == "lazy":
        run._index["offsets"] = offsets
    if verdict_offsets:
        run._index["verdict_offsets"] = verdict_offsets
    return run


def load_runs(
    folders: Iterable[Path], *, cells: CellsKept = "all", checks: ChecksKept = "all"
) -> list[Run]:
    """Several folders, oldest first (by start time, then folder name)."""
    runs = [load_run(Path(f), cells=cells, checks=checks) for f in folders]
    return sorted(runs, key=lambda r: (r.started, r.name))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a results file, ignoring a torn last line from an interrupted write."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows
