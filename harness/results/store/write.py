"""Writing a results folder (`ResultsStore`), and repairing the torn tail a crash
leaves, so that `--resume` appends to whole lines and whole blocks.

Records are appended and flushed as they arrive, so an interrupted run keeps what it
finished. The manifest is replaced atomically (temp file + rename). A cell's
verdicts are one block, written with one write(2), each line saying how many lines
its block has (`cell_verdicts`). A crash or a full disk can still cut a block short;
such a cell is not judged. Resuming first cuts each file back to its last complete
line and drops cut blocks, so the cell is judged again, whole.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from harness.errors import ResultsError
from harness.files import output_error, write_atomic
from harness.results.records import CellRecord, VerdictRecord
from harness.results.store.layout import (
    BLOCK,
    CELLS,
    LOCK,
    MANIFEST,
    VERDICTS,
    dump,
    dump_row,
)
from harness.results.store.manifest import Manifest


def default_folder(matrix_name: str, root: Path = Path("results")) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in matrix_name)[:64]
    return root / f"{stamp}-{safe}"


class ResultsStore:
    """Owns one run's folder while it is written. Refuses a folder that already holds a run."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._cells: IO[str] | None = None
        self._verdicts: IO[str] | None = None
        self._lock: IO[str] | None = None

    def open(self, *, resume: bool = False) -> None:
        """Create the folder's files, or (resume) append to an interrupted run's.
        A lock keeps two runs from ever writing into one folder at once. Refused, it
        leaves nothing open."""
        try:
            self._open(resume)
        except ResultsError:
            self.close()
            raise

    def _open(self, resume: bool) -> None:
        taken = f"{self.folder}: already holds a run; choose another --out"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._lock = _open_own(self.folder / LOCK, "a")
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
            self._cells = _open_own(self.folder / CELLS, mode)
            self._verdicts = _open_own(self.folder / VERDICTS, mode)
        except FileExistsError:
            raise ResultsError(taken) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ResultsError(output_error(Path(exc.filename), exc)) from exc
            if exc.errno == errno.ENXIO:  # a FIFO nobody reads, opened without blocking
                why = f"{exc.filename}: not a regular file; harness writes only its own files"
                raise ResultsError(why) from exc
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
        self._append(self._cells, dump_row(cell.row()))

    def add_verdicts(self, verdicts: Iterable[VerdictRecord]) -> None:
        """One cell's verdicts, as one block in one write (see the module docstring).
        Given several cells' verdicts, each line counts its own cell's."""
        rows = [v.row() for v in verdicts]
        sizes: dict[tuple[str, str], int] = {}
        for row in rows:  # one cell's verdicts as a rule; each cell counts its own
            key = (str(row["host"]), str(row["runtime"]))
            sizes[key] = sizes.get(key, 0) + 1
        for row in rows:  # the block's size last, as written since blocks exist
            row[BLOCK] = sizes[(str(row["host"]), str(row["runtime"]))]
        if rows:
            self._append(self._verdicts, "\n".join(dump_row(row) for row in rows))

    def add_rows(
        self, *, cells: Iterable[Mapping[str, Any]], verdicts: Iterable[Mapping[str, Any]]
    ) -> None:
        """Records read from other folders, written as they were read (merge)."""
        for stream, rows in ((self._cells, cells), (self._verdicts, verdicts)):
            lines = [dump(row) for row in rows]
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


_FLAGS = {
    "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
    "rb+": os.O_RDWR,
}


def _open_own(path: Path, mode: str) -> IO[Any]:
    """Open a file of the run's folder, never through a symlink planted there (a
    dangling `.lock` would make root create its target): ELOOP instead; and only a
    regular file (a FIFO planted there would hold the open forever)."""
    flags = _FLAGS[mode] | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
    fd = os.open(path, flags, 0o644)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ResultsError(f"{path}: not a regular file; harness writes only its own files")
    os.set_blocking(fd, True)
    if mode == "rb+":
        return os.fdopen(fd, "rb+")
    return os.fdopen(fd, "a" if mode == "a" else "w", encoding="utf-8")


def _cut_torn_tail(path: Path) -> None:
    """Cut a file back to its last complete line: a line torn by a crash would
    otherwise have the next record glued onto it."""
    if not path.is_file():
        return
    with _open_own(path, "rb+") as fh:
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
    write_atomic(path, "".join(dump(row) + "\n" for row in kept))
