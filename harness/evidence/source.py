"""Read a results folder into what evidence documents are made of, per (host, runtime).

The digest covers the exact bytes of the cell record and the verdict records the
document was built from, so a document can be traced back to its results folder.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.results.records import CellRecord
from harness.results.store.manifest import HostEntry, Manifest
from harness.results.store.read import read_cells, read_manifest, read_verdicts


def commitment(lines: list[bytes]) -> str:
    """`sha256:` over the exact record lines, each ending with one newline."""
    h = hashlib.sha256()
    for line in lines:
        h.update(line.rstrip(b"\n") + b"\n")
    return f"sha256:{h.hexdigest()}"


@dataclass(slots=True)
class CellEvidence:
    """Everything a results folder says about one (host, runtime)."""

    host: str
    runtime: str
    cell: dict[str, Any]
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    runtime_spec: dict[str, Any] = field(default_factory=dict)
    host_info: HostEntry = field(default_factory=HostEntry)
    raw_lines: list[bytes] = field(default_factory=list)
    # The cell as a record, and each property's verdict line as read: what the outer
    # fence's guarantees are judged from and commit to (evidence/fence.py).
    record: CellRecord | None = None
    verdict_lines: dict[str, bytes] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        return commitment(self.raw_lines)

    def facts(self) -> dict[str, dict[str, Any]]:
        """Measured facts by id, as the probe reported them."""
        return {f["id"]: f for f in self.cell.get("facts", [])}

    def property_rows(self) -> dict[str, dict[str, Any]]:
        return {v["property"]: v for v in self.verdicts if v.get("property")}

    def checks(self) -> dict[str, dict[str, Any]]:
        return {c["id"]: c for c in self.cell.get("checks", [])}


def load_evidence(folder: Path) -> tuple[Manifest, list[CellEvidence]]:
    """The manifest and one CellEvidence per completed-or-not, non-control cell.
    Every line is validated as the record it must be (`results/store/read.py`)."""
    manifest = read_manifest(folder)
    cells: dict[tuple[str, str], CellEvidence] = {}
    for line, record in read_cells(folder):
        if record.control:
            continue
        key = (record.host, record.runtime)
        cells[key] = CellEvidence(
            host=key[0],
            runtime=key[1],
            cell=line.data,
            runtime_spec=manifest.runtime(key[1]),
            host_info=manifest.host(key[0]),
            raw_lines=[line.raw],
            record=record,
        )
    for line, verdict in read_verdicts(folder, required=False):
        found = cells.get((verdict.host, verdict.runtime))
        if found is not None:
            found.verdicts.append(line.data)
            found.raw_lines.append(line.raw)
            if verdict.property:
                found.verdict_lines[verdict.property] = line.raw
    return manifest, list(cells.values())
