"""Read a results folder into what evidence documents are made of, per (host, runtime).

The digest covers the exact bytes of the cell record and the verdict records the
document was built from, so a document can be traced back to its results folder.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import UsageError


@dataclass(slots=True)
class CellEvidence:
    """Everything a results folder says about one (host, runtime)."""

    host: str
    runtime: str
    cell: dict[str, Any]
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    runtime_spec: dict[str, Any] = field(default_factory=dict)
    host_info: dict[str, Any] = field(default_factory=dict)
    raw_lines: list[bytes] = field(default_factory=list)

    @property
    def digest(self) -> str:
        h = hashlib.sha256()
        for line in self.raw_lines:
            h.update(line.rstrip(b"\n") + b"\n")
        return f"sha256:{h.hexdigest()}"

    def facts(self) -> dict[str, dict[str, Any]]:
        """Measured facts by id, as the probe reported them."""
        return {f["id"]: f for f in self.cell.get("facts", [])}

    def property_rows(self) -> dict[str, dict[str, Any]]:
        return {v["property"]: v for v in self.verdicts if v.get("property")}

    def checks(self) -> dict[str, dict[str, Any]]:
        return {c["id"]: c for c in self.cell.get("checks", [])}


def _lines(path: Path) -> Iterator[tuple[bytes, dict[str, Any]]]:
    with open(path, "rb") as fh:
        for raw in fh:
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError:
                continue  # a torn last line from an interrupted run
            if isinstance(obj, dict):
                yield raw, obj


def load_evidence(folder: Path) -> tuple[dict[str, Any], list[CellEvidence]]:
    """The manifest and one CellEvidence per completed-or-not, non-control cell."""
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file() or not (folder / "cells.jsonl").is_file():
        raise UsageError(f"{folder}: not a results folder (no manifest.json and cells.jsonl)")
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"{folder}/manifest.json: unreadable: {exc}") from None
    cells: dict[tuple[str, str], CellEvidence] = {}
    for raw, cell in _lines(folder / "cells.jsonl"):
        if cell.get("control"):
            continue
        key = (str(cell.get("host")), str(cell.get("runtime")))
        cells[key] = CellEvidence(
            host=key[0],
            runtime=key[1],
            cell=cell,
            runtime_spec=manifest.get("runtimes", {}).get(key[1], {}),
            host_info=manifest.get("hosts", {}).get(key[0], {}),
            raw_lines=[raw],
        )
    verdicts = folder / "verdicts.jsonl"
    if verdicts.is_file():
        for raw, row in _lines(verdicts):
            found = cells.get((str(row.get("host")), str(row.get("runtime"))))
            if found is not None:
                found.verdicts.append(row)
                found.raw_lines.append(raw)
    return manifest, list(cells.values())
