"""Combine the results folders of a sharded run into one, as if run unsharded."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from harness.errors import UsageError
from harness.results.parse import read_cells, read_manifest, read_verdicts, verdict_from_json
from harness.results.records import CellRecord, CellStatus
from harness.results.store import CELLS, VERDICTS, ResultsStore
from harness.results.verdicts import exit_code


def _rank(cell: CellRecord, order: int) -> tuple[bool, bool, int]:
    """Which record of a cell merge keeps: a shard's own over a control-only copy,
    a finished one over one cancelled by an interruption, then the latest (after an
    interrupted shard is resumed, its final record comes last)."""
    return (not cell.control, cell.status is not CellStatus.CANCELLED, order)


def _check_shards(shards: list[str]) -> None:
    """Every shard of one split, each exactly once: a missing or repeated shard
    would make the merged run look complete when it is not."""
    if not all(re.fullmatch(r"[1-9][0-9]{0,5}/[1-9][0-9]{0,5}", s) for s in shards):
        raise UsageError("merge: every folder must come from `harness run --shard I/N`")
    totals = {s.split("/")[1] for s in shards}
    if len(totals) != 1:
        raise UsageError(
            f"merge: the shards come from different splits ({', '.join(sorted(shards))})"
        )
    total = int(totals.pop())
    have = sorted(int(s.split("/")[0]) for s in shards)
    if have != list(range(1, total + 1)):
        missing = sorted(set(range(1, total + 1)) - set(have))
        repeated = sorted({i for i in have if have.count(i) > 1})
        detail = "; ".join(
            part
            for part in (
                f"missing {', '.join(f'{i}/{total}' for i in missing)}" if missing else "",
                f"repeated {', '.join(f'{i}/{total}' for i in repeated)}" if repeated else "",
            )
            if part
        )
        raise UsageError(f"merge: {detail}")


def merge_runs(folders: list[Path], out: Path) -> dict[str, Any]:
    """Write `out` from shard folders of one matrix; returns the merged manifest.

    Cells are kept once per (host, runtime), preferring a shard's own cell over a
    control-only copy; verdicts are kept once per (host, runtime, subject).
    """
    manifests = [read_manifest(f) for f in folders]
    shas = {(m.get("matrix") or {}).get("sha256") for m in manifests}
    if len(shas) != 1:
        raise UsageError("merge: the folders come from different matrices (sha256 differs)")
    _check_shards([str((m.get("selection") or {}).get("shard") or "") for m in manifests])
    cells: dict[tuple[str, str], tuple[tuple[bool, bool, int], str]] = {}
    verdicts: dict[tuple[str, str, str], dict[str, Any]] = {}
    order = 0
    for folder in folders:
        for line, cell in read_cells(folder):
            order += 1
            key, rank = (cell.host, cell.runtime), _rank(cell, order)
            if key not in cells or rank > cells[key][0]:
                cells[key] = (
                    rank,
                    json.dumps(line.data, ensure_ascii=False, separators=(",", ":")),
                )
        for line, verdict in read_verdicts(folder, required=False):
            verdicts[(verdict.host, verdict.runtime, verdict.subject())] = line.data
    first = manifests[0]
    merged = {
        **first,
        "started": min(str(m.get("started")) for m in manifests),
        "ended": max(str(m.get("ended")) for m in manifests),
        "interrupted": any(m.get("interrupted") for m in manifests),
        "hosts": {k: v for m in manifests for k, v in (m.get("hosts") or {}).items()},
        "runtimes": {k: v for m in manifests for k, v in (m.get("runtimes") or {}).items()},
        "merged_from": [
            {
                "folder": str(f),
                "run_id": m.get("run_id"),
                "shard": (m.get("selection") or {}).get("shard"),
            }
            for f, m in zip(folders, manifests, strict=True)
        ],
        "exit_code": exit_code(verdict_from_json(v) for v in verdicts.values()),
    }
    store = ResultsStore(out)
    store.open()
    try:
        with open(out / CELLS, "a", encoding="utf-8") as fh:
            fh.writelines(line + "\n" for _rank, line in cells.values())
        with open(out / VERDICTS, "a", encoding="utf-8") as fh:
            fh.writelines(
                json.dumps(v, ensure_ascii=False, separators=(",", ":")) + "\n"
                for v in verdicts.values()
            )
        store.write_manifest(merged)
    finally:
        store.close()
    return merged
