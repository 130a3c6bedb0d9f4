"""JSON Schemas of the results folder's records, generated from the types that write them.

`python -m harness.results.schema [DIR]` writes `manifest.schema.json`,
`cell.schema.json` (one line of cells.jsonl) and `verdict.schema.json` (one line of
verdicts.jsonl) into DIR (default `docs/schemas`). A test holds the committed files
to this output, and a real run's three files to the schemas, so the schemas cannot
drift from what harness writes.

The types say what a reader accepts; what the writer always writes is added here
as `required`, taken from the writer itself (`to_json` of an empty record), so a
key the writer leaves out when unset (a host-side field, `fact` or `property`)
is never required. Unknown keys are allowed everywhere: an older harness reads a
newer run's folder, and the reverse.
"""

from __future__ import annotations

import json
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from harness.files import write_atomic
from harness.results.records import (
    CellRecord,
    CellStatus,
    CheckResult,
    FactObservation,
    ProbeCheck,
    Verdict,
    VerdictRecord,
)
from harness.results.store.layout import BLOCK
from harness.results.store.manifest import Manifest

DIALECT = "https://json-schema.org/draft/2020-12/schema"
BASE = "https://harness.invalid/schemas"
DEFAULT_FOLDER = Path("docs/schemas")


# Nested records the writer turns into objects field by field (`records._plain`):
# every field is written, set or not.
WHOLE = (FactObservation, ProbeCheck, CheckResult)


def _schema(name: str, title: str, body: dict[str, Any]) -> dict[str, Any]:
    """The generated body under harness's own `$schema`, `$id` and title."""
    for cls in WHOLE:
        found = body.get("$defs", {}).get(cls.__name__)
        if found is not None:
            found["required"] = [f.name for f in fields(cls)]
    head = {"$schema": DIALECT, "$id": f"{BASE}/harness-{name}-v1.json", "title": title}
    return {**head, **body, "title": title}


def manifest_schema() -> dict[str, Any]:
    """manifest.json: every key optional, as `read_manifest` reads it (older folders)."""
    body = TypeAdapter(Manifest).json_schema()
    return _schema("manifest", "harness results folder: manifest.json", body)


def cell_schema() -> dict[str, Any]:
    """One line of cells.jsonl, as `CellRecord.to_json` writes it."""
    empty = CellRecord(
        run_id="",
        host="",
        runtime="",
        kind="",
        scenarios=[],
        status=CellStatus.COMPLETE,
        reason=None,
        started="",
        ended="",
        elapsed=0.0,
    )
    body = TypeAdapter(CellRecord).json_schema()
    body["required"] = list(empty.to_json())
    return _schema("cell", "harness results folder: one line of cells.jsonl", body)


def verdict_schema() -> dict[str, Any]:
    """One line of verdicts.jsonl: `VerdictRecord.to_json` plus the store's block size."""
    empty = VerdictRecord(host="", runtime="", expected=None, observed=None, verdict=Verdict.PASS)
    body = TypeAdapter(VerdictRecord).json_schema()
    body["properties"][BLOCK] = {
        "title": "Cell Verdicts",
        "description": "How many lines this verdict's cell block has (results/store/write.py).",
        "type": "integer",
        "minimum": 1,
    }
    body["required"] = [*empty.to_json(), BLOCK]
    # `to_json` leaves out whichever of the two is unset: a verdict is about one.
    body["oneOf"] = [{"required": ["fact"]}, {"required": ["property"]}]
    return _schema("verdict", "harness results folder: one line of verdicts.jsonl", body)


SCHEMAS = {
    "manifest.schema.json": manifest_schema,
    "cell.schema.json": cell_schema,
    "verdict.schema.json": verdict_schema,
}


def render(schema: dict[str, Any]) -> str:
    """The file's exact text: a committed schema is compared with this byte for byte."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def write(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, make in SCHEMAS.items():
        path = folder / name
        write_atomic(path, render(make()))
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else DEFAULT_FOLDER
    for path in write(folder):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
