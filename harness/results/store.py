"""The results folder: manifest.json, cells.jsonl, verdicts.jsonl. Its one owner.

Everything that writes a folder (`harness run`, `--resume`, `merge`) and everything
that reads one (`report`, `diff`, `evidence`, `run --resume`, `merge`, `bisect
--from`) goes through this module: the typed `Manifest`, the record types of
`records.py`, one validation, and one error wording (`ResultsError`, "DIR: not a
results folder (why)"), exit 2.

Writing: records are appended and flushed as they arrive, so an interrupted run
keeps what it finished. The manifest is replaced atomically (temp file + rename).
A cell's verdicts are one block, written with one write(2), each line saying how
many lines its block has (`cell_verdicts`). A crash or a full disk can still cut a
block short; such a cell is not judged. Resuming first cuts each file back to its
last complete line and drops cut blocks, so the cell is judged again, whole.

Reading: unknown keys are ignored (kept in the manifest), so an older harness can
read a newer run and a newer one an older run. Anything else that is wrong (not
JSON, not UTF-8, not an object, nested too deep, a wrong type, a missing key or
file) is one line naming the folder, the file, the line and the key. A torn last
line, left by a run that was killed mid-write, is skipped.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from harness.errors import ResultsError
from harness.files import Unreadable, open_regular, read_regular, write_atomic
from harness.results.records import CellRecord, VerdictRecord
from harness.text import redact_url

if TYPE_CHECKING:
    from harness.matrix import RuntimeSpec
    from harness.plan import Plan

MANIFEST = "manifest.json"
CELLS = "cells.jsonl"
VERDICTS = "verdicts.jsonl"
LOCK = ".lock"
BLOCK = "cell_verdicts"  # in each verdict line: how many lines its cell's block has
MAX_DEPTH = 64  # deeper JSON is not a record harness wrote
MAX_MANIFEST = 64 * 1024 * 1024  # a manifest names hosts and runtimes: far below this

T = TypeVar("T")
Key = tuple[str, str, str]  # (host, runtime, fact or property)


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def default_folder(matrix_name: str, root: Path = Path("results")) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in matrix_name)[:64]
    return root / f"{stamp}-{safe}"


def unreadable(folder: Path, why: str) -> ResultsError:
    """The one wording for a folder that cannot be read as a run, whatever is wrong."""
    return ResultsError(f"{folder}: not a results folder ({why})")


def holds_run(folder: Path) -> bool:
    """Does the folder look like a run (it has a manifest)? Reading it may still fail."""
    return (folder / MANIFEST).is_file()


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)


# -- the manifest ---------------------------------------------------------------------


class _Open(BaseModel):
    """Tolerant of keys it does not name: they are kept, and written back as read."""

    model_config = ConfigDict(extra="allow")

    def to_json(self) -> dict[str, Any]:
        """As written: the keys set, none added."""
        return self.model_dump(exclude_unset=True)


class MatrixRef(_Open):
    name: str | None = None
    path: str | None = None
    sha256: str | None = None


class Selection(_Open):
    """What `harness run` was asked to run: `--resume` and `merge` run it again."""

    hosts: list[str] | None = None
    runtimes: list[str] | None = None
    scenarios: list[str] | None = None
    shard: str | None = None
    index: str | None = None


class Segment(_Open):
    """One part of a run that was interrupted and resumed (`--resume`)."""

    run_id: str | None = None
    started: str | None = None
    ended: str | None = None


class SshInfo(_Open):
    """What an SSH connection negotiated (`Transport.describe`); local hosts have none."""

    server_version: str | None = None
    host_key: str | None = None
    host_key_fingerprint: str | None = None
    cipher: str | None = None


class CanaryInfo(_Open):
    """The canary a host ran (the canary fixture's `manifest()`)."""

    mode: str | None = None
    address: str | None = None
    address6: str | None = None
    high_port: int | None = None
    netns: str | None = None
    subnet: dict[str, str] | None = None  # the leased /30 and /64 and their addresses
    error: str | None = None


class HelpersInfo(_Open):
    """The privilege helpers staged on a host, and whether their bits took."""

    folder: str | None = None
    setuid: bool | None = None
    fcap: bool | None = None


class SupervisorInfo(_Open):
    """One reference supervisor a host ran, under its runtime's name."""

    kind: str | None = None
    sha256: str | None = None
    netns: str | None = None
    records: str | None = None
    fault: str | None = None
    error: str | None = None


class RuntimeBuild(_Open):
    """The release build harness installed on a host for a runtime (`build_record`)."""

    release: str | None = None
    channel: str | None = None
    version: str | None = None
    arch: str | None = None
    sha512: str | None = None
    source: str | None = None
    runsc_sha256: str | None = None
    path: str | None = None


class HostRuntime(_Open):
    """What a runtime said about itself on a host (`RuntimeStatus`)."""

    available: bool | None = None
    version: str | None = None
    reason: str | None = None
    fingerprint: dict[str, str] | None = None  # microvm and kata: what they run on
    build: RuntimeBuild | None = None


class HostEntry(_Open):
    """One host in the manifest: how it was reached, what the fixtures set up there
    and what preparing it learned (`HostState.manifest`), or why it failed.

    The runner fills it in this order, so the fields are declared in it: a folder
    read and written again (merge, resume) keeps its keys where they were.
    """

    transport: str | None = None
    address: str | None = None
    port: int | None = None  # None for the local transport
    user: str | None = None
    ssh: SshInfo | None = None
    cleaned_runs: list[str] | None = None  # dead runs this run cleaned up after
    canary: CanaryInfo | None = None
    helpers: HelpersInfo | None = None
    supervisors: dict[str, SupervisorInfo] | None = None
    workdir: str | None = None
    kernel_release: str | None = None
    machine: str | None = None
    arch: str | None = None
    probe_path: str | None = None
    probe_sha256: str | None = None
    probe_uploaded: bool | None = None
    runtimes: dict[str, HostRuntime] | None = None
    error: str | None = None  # why the host could not be used


class Manifest(_Open):
    """manifest.json. Every key is optional on reading, so older folders still read;
    only the keys given (or read) are written, in this order, then any others."""

    harness_version: str | None = None
    run_id: str | None = None
    matrix: MatrixRef | None = None
    started: str | None = None
    ended: str | None = None
    interrupted: bool | None = None
    settings: dict[str, Any] | None = None
    canary: dict[str, Any] | None = None
    probe: dict[str, Any] | None = None  # the controller's build: sha256, compiler
    probes: dict[str, Any] | None = None  # every architecture's build
    releases: dict[str, Any] | None = None  # the release index and what names resolved to
    runtimes: dict[str, dict[str, Any]] | None = None  # each entry as the matrix declares it
    scenarios: list[str] | None = None
    cells_planned: int | None = None
    hosts: dict[str, HostEntry] | None = None  # what each host said about itself
    selection: Selection | None = None
    exit_code: int | None = None  # None until the run ended
    segments: list[Segment] | None = None  # a resumed run's later parts
    merged_from: list[dict[str, Any]] | None = None  # a merged run's shards
    missing_shards: list[str] | None = None

    @property
    def shard(self) -> str:
        return str(self.selection.shard or "") if self.selection else ""

    @property
    def matrix_sha256(self) -> str | None:
        return self.matrix.sha256 if self.matrix else None

    def host(self, name: str) -> HostEntry:
        """What a host said about itself (kernel, runtimes, canary...); empty if nothing."""
        return (self.hosts or {}).get(name) or HostEntry()

    def runtime(self, name: str) -> dict[str, Any]:
        """A runtime's entry as the matrix declared it, or {}."""
        return (self.runtimes or {}).get(name) or {}


def runtime_entry(spec: RuntimeSpec) -> dict[str, Any]:
    """A runtime entry as recorded in the manifest: what it promised and declared.
    A URL's user:password part and secret query values are dropped; token values are
    never in the spec."""
    data = spec.model_dump(mode="json")
    source = data.get("attribution")
    if source and source.get("url"):
        source["url"] = redact_url(source["url"])
    return data


def _settings_entry(settings: dict[str, Any]) -> dict[str, Any]:
    """The matrix's settings as recorded: an index URL's credentials redacted."""
    if isinstance(settings.get("index"), str):
        settings["index"] = redact_url(settings["index"])
    return settings


def run_manifest(
    *,
    run_id: str,
    plan: Plan,
    started: str,
    ended: str | None,
    interrupted: bool,
    probe: dict[str, Any],
    probes: dict[str, Any],
    releases: dict[str, Any] | None,
    hosts: dict[str, Any],
    selection: Mapping[str, Any],
    exit_code: int | None,
    resumed_from: Mapping[str, Any] | None = None,
) -> Manifest:
    """The manifest of a run of `plan` (or of a resumed run's latest part).

    A resumed run keeps its first part's identity and hosts, lists each later part
    in `segments`, and its exit code covers every verdict in the folder.
    """
    from harness._version import __version__

    matrix = plan.matrix
    data: dict[str, Any] = {
        "harness_version": __version__,
        "run_id": run_id,
        "matrix": {"name": matrix.name, "path": str(matrix.path), "sha256": matrix.sha256},
        "started": started,
        "ended": ended,
        "interrupted": interrupted,
        "settings": _settings_entry(matrix.settings.model_dump()),
        "canary": matrix.canary.model_dump(mode="json"),
        "probe": probe,
        "probes": probes,
        **({"releases": releases} if releases is not None else {}),
        "runtimes": {c.runtime.name: runtime_entry(c.runtime.spec) for c in plan.cells},
        "scenarios": list(plan.scenarios),
        "cells_planned": len(plan.cells),
        "hosts": hosts,
        "selection": dict(selection),
        "exit_code": exit_code,
    }
    if resumed_from is not None:
        first = Manifest.model_validate(dict(resumed_from))
        data.update(
            run_id=first.run_id or run_id,
            started=first.started or started,
            hosts={**(first.hosts or {}), **hosts},
            segments=[
                *(s.to_json() for s in first.segments or ()),
                {"run_id": run_id, "started": started, "ended": ended},
            ],
        )
    return Manifest.model_validate(data)


def merged_manifest(
    shards: Sequence[tuple[Path, Manifest]], *, exit_code: int, missing_shards: list[str]
) -> Manifest:
    """The manifest of shards merged into one run: the first shard's, spanning them all."""
    manifests = [m for _folder, m in shards]
    return Manifest.model_validate(
        {
            **manifests[0].to_json(),
            "started": min(str(m.started) for m in manifests),
            "ended": max(str(m.ended) for m in manifests),
            "interrupted": any(m.interrupted for m in manifests),
            "hosts": {k: v for m in manifests for k, v in (m.hosts or {}).items()},
            "runtimes": {k: v for m in manifests for k, v in (m.runtimes or {}).items()},
            "merged_from": [
                {"folder": str(f), "run_id": m.run_id, "shard": m.selection and m.selection.shard}
                for f, m in shards
            ],
            "exit_code": exit_code,
            "missing_shards": missing_shards,
        }
    )


# -- reading ----------------------------------------------------------------------------


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
        try:
            with open_regular(self.folder / CELLS) as fh:
                fh.seek(offset)
                data = _loads(fh.readline())
            return _validate(CellRecord, data, CELLS)
        except Unreadable as exc:
            raise unreadable(self.folder, f"{CELLS}: {exc.why}") from None
        except (ValueError, _Invalid) as exc:  # rewritten while the report was made
            raise unreadable(self.folder, f"{CELLS}: changed while read: {exc}") from None

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


def load_run(folder: Path, *, cells: CellsKept = "all") -> Run:
    """Read one results folder: its manifest, verdicts (required) and cells.

    Every cell line is read and checked, one at a time. `cells` says what is kept:
    "all" the records; "lazy" only where each judged cell's line starts, so that
    `Run.cell` reads it again when asked (a report holds one cell's probe output at
    a time, however many hosts); "none" nothing (a report of verdicts only).
    """
    manifest = read_manifest(folder)
    verdicts = [v for _line, v in _iter_records(folder, VERDICTS, VerdictRecord, required=True)]
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
    return run


def load_runs(folders: Iterable[Path], *, cells: CellsKept = "all") -> list[Run]:
    """Several folders, oldest first (by start time, then folder name)."""
    runs = [load_run(Path(f), cells=cells) for f in folders]
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


# -- writing ----------------------------------------------------------------------------


class ResultsStore:
    """Owns one run's folder while it is written. Refuses a folder that already holds a run."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._cells: IO[str] | None = None
        self._verdicts: IO[str] | None = None
        self._lock: IO[str] | None = None

    def open(self, *, resume: bool = False) -> None:
        """Create the folder's files, or (resume) append to an interrupted run's.
        A lock keeps two runs from ever writing into one folder at once."""
        taken = f"{self.folder}: already holds a run; choose another --out"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._lock = open(self.folder / LOCK, "a", encoding="utf-8")  # noqa: SIM115
            try:
                fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ResultsError(f"{self.folder}: another run is writing here") from None
            if resume and not (self.folder / CELLS).exists():
                raise ResultsError(f"{self.folder}: no run to resume (no {CELLS})")
            if not resume and ((self.folder / MANIFEST).exists() or (self.folder / CELLS).exists()):
                raise ResultsError(taken)
            if resume:
                for name in (CELLS, VERDICTS):
                    _cut_torn_tail(self.folder / name)
                _drop_cut_blocks(self.folder / VERDICTS)
            mode = "a" if resume else "x"
            self._cells = open(self.folder / CELLS, mode, encoding="utf-8")  # noqa: SIM115
            self._verdicts = open(self.folder / VERDICTS, mode, encoding="utf-8")  # noqa: SIM115
        except FileExistsError:
            raise ResultsError(taken) from None
        except OSError as exc:
            raise ResultsError(f"{self.folder}: cannot write results: {exc.strerror}") from exc

    def _append(self, stream: IO[str] | None, line: str) -> None:
        if stream is None:
            raise ResultsError(f"{self.folder}: results store is not open")
        try:
            stream.write(line + "\n")
            stream.flush()
        except OSError as exc:
            raise ResultsError(f"{self.folder}: cannot append results: {exc.strerror}") from exc

    def add_cell(self, cell: CellRecord) -> None:
        self._append(self._cells, _dump(cell.to_json()))

    def add_verdicts(self, verdicts: Iterable[VerdictRecord]) -> None:
        """One cell's verdicts, as one block in one write (see the module docstring).
        Given several cells' verdicts, each line counts its own cell's."""
        rows = [v.to_json() for v in verdicts]
        sizes: dict[tuple[str, str], int] = {}
        for row in rows:  # one cell's verdicts as a rule; each cell counts its own
            key = (str(row["host"]), str(row["runtime"]))
            sizes[key] = sizes.get(key, 0) + 1
        if rows:
            block = "\n".join(
                _dump({**row, BLOCK: sizes[(str(row["host"]), str(row["runtime"]))]})
                for row in rows
            )
            self._append(self._verdicts, block)

    def add_rows(
        self, *, cells: Iterable[Mapping[str, Any]], verdicts: Iterable[Mapping[str, Any]]
    ) -> None:
        """Records read from other folders, written as they were read (merge)."""
        for stream, rows in ((self._cells, cells), (self._verdicts, verdicts)):
            lines = [_dump(row) for row in rows]
            if lines:
                self._append(stream, "\n".join(lines))

    def write_manifest(self, manifest: Manifest | Mapping[str, Any]) -> None:
        """Replace manifest.json atomically: readers see the old or the new, never half."""
        if not isinstance(manifest, Manifest):
            manifest = Manifest.model_validate(dict(manifest))
        try:
            text = json.dumps(manifest.to_json(), indent=2, ensure_ascii=False, default=str)
            write_atomic(self.folder / MANIFEST, text + "\n")
        except OSError as exc:
            raise ResultsError(f"{self.folder}: cannot write manifest: {exc.strerror}") from exc

    def close(self) -> None:
        for stream in (self._cells, self._verdicts, self._lock):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._cells = self._verdicts = self._lock = None


def _cut_torn_tail(path: Path) -> None:
    """Cut a file back to its last complete line: a line torn by a crash would
    otherwise have the next record glued onto it."""
    if not path.is_file():
        return
    with open(path, "rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        keep, step = 0, 65536
        pos = size
        while pos > 0:
            start = max(0, pos - step)
            fh.seek(start)
            chunk = fh.read(pos - start)
            at = chunk.rfind(b"\n")
            if at >= 0:
                keep = start + at + 1
                break
            pos = start
        if keep != size:
            fh.truncate(keep)


def complete_blocks(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The verdict rows whose cell's block is all there. Rows written before blocks
    existed (no `cell_verdicts`) count as complete."""
    have: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (str(row.get("host")), str(row.get("runtime")))
        have[key] = have.get(key, 0) + 1
    return [
        row
        for row in rows
        if not isinstance(row.get(BLOCK), int)
        or have[(str(row.get("host")), str(row.get("runtime")))] == row[BLOCK]
    ]


def _drop_cut_blocks(path: Path) -> None:
    """Rewrite verdicts.jsonl without the blocks a crash cut short (atomically)."""
    if not path.is_file():
        return
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = []
    for line in lines:
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    kept = complete_blocks([r for r in rows if isinstance(r, dict)])
    if len(kept) == len(lines):
        return
    write_atomic(path, "".join(_dump(row) + "\n" for row in kept))
