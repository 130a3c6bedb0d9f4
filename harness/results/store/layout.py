"""The results folder's layout: its three files' names, the one error wording, how a
record line is written, and the clock records are stamped with.

Shared by the manifest, the reader and the writer, so that none of them spells a
file's name or the "not a results folder" wording itself.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.errors import ResultsError
from harness.results.records import fields_of

MANIFEST = "manifest.json"
CELLS = "cells.jsonl"
VERDICTS = "verdicts.jsonl"
LOCK = ".lock"
BLOCK = "cell_verdicts"  # in each verdict line: how many lines its cell's block has
MAX_DEPTH = 64  # deeper JSON is not a record harness wrote
MAX_MANIFEST = 64 * 1024 * 1024  # a manifest names hosts and runtimes: far below this


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def unreadable(folder: Path, why: str) -> ResultsError:
    """The one wording for a folder that cannot be read as a run, whatever is wrong."""
    return ResultsError(f"{folder}: not a results folder ({why})")


def holds_run(folder: Path) -> bool:
    """Does the folder look like a run (it has a manifest)? Reading it may still fail."""
    return (folder / MANIFEST).is_file()


def dump(obj: Any) -> str:
    """One record as its line: compact, UTF-8 kept, anything else as its str()."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)


def _part(value: Any) -> Any:
    """A part of a record's row as `dump(to_json())` would have it: a record's own
    dataclass as its fields (`_plain`), anything else as its str() (`dump`)."""
    data = fields_of(value)
    return str(value) if data is None else data


_ROW = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_part)


def dump_row(row: dict[str, Any]) -> str:
    """A record's `row()` as its line: the very line `dump(record.to_json())` gives,
    without making a plain copy of every part first (most of writing a full cell)."""
    return _ROW.encode(row)
