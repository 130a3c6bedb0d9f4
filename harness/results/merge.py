"""Combine the results folders of a sharded run into one, as if run unsharded."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, UsageError
from harness.results.parse import read_cells, read_manifest, read_verdicts, verdict_from_json
from harness.results.records import CellRecord, CellStatus, VerdictRecord
from harness.results.store import CELLS, VERDICTS, ResultsStore
from harness.results.verdicts import exit_code


def _rank(cell: CellRecord, order: int) -> tuple[bool, bool, int]:
    """Which record of a cell merge keeps: a shard's own over a control-only copy,
    a finished one over one cancelled by an interruption, then the latest (after an
    interrupted shard is resumed, its final record comes last)."""
    return (not cell.control, cell.status is not CellStatus.CANCELLED, order)


def _check_shards(shards: list[str]) -> tuple[int, list[int]]:
    """Every shard of one split at most once; returns the split's size and the
    shards that are missing (their cells become inconclusive, never absent)."""
    if not all(re.fullmatch(r"[1-9][0-9]{0,5}/[1-9][0-9]{0,5}", s) for s in shards):
        raise UsageError("merge: every folder must come from `harness run --shard I/N`")
    totals = {s.split("/")[1] for s in shards}
    if len(totals) != 1:
        raise UsageError(
            f"merge: the shards come from different splits ({', '.join(sorted(shards))})"
        )
    total = int(totals.pop())
    have = sorted(int(s.split("/")[0]) for s in shards)
    repeated = sorted({i for i in have if have.count(i) > 1})
    if repeated or any(i > total for i in have):
        shown = ", ".join(f"{i}/{total}" for i in repeated) or "out of range"
        raise UsageError(f"merge: repeated {shown}")
    return total, sorted(set(range(1, total + 1)) - set(have))


def missing_cells(
    manifest: dict[str, Any], missing: list[int], total: int
) -> tuple[list[CellRecord], list[VerdictRecord]]:
    """The cells the missing shards would have run, each recorded as cancelled, and
    their verdicts (every property inconclusive), so a merged run never looks
    complete without them.

    The cells come from the matrix the shards ran, which must still be the same file
    (by sha256): a shard's folder alone does not name the other shards' cells.
    """
    from harness.judge import judge_cell  # judging needs the plan, not only the records
    from harness.plan import make_plan, shard
    from harness.spec import load_matrix

    recorded = manifest.get("matrix") or {}
    shown = ", ".join(f"{i}/{total}" for i in missing)
    try:
        matrix = load_matrix(Path(str(recorded.get("path"))))
    except HarnessError as exc:
        raise UsageError(f"merge: missing {shown}, and its cells cannot be named: {exc}") from None
    if matrix.sha256 != recorded.get("sha256"):
        raise UsageError(
            f"merge: missing {shown}, and {matrix.path} changed since the shards ran,"
            " so its cells cannot be named"
        )
    selection = manifest.get("selection") or {}
    plan = make_plan(
        matrix,
        hosts=selection.get("hosts") or (),
        runtimes=selection.get("runtimes") or (),
        scenarios=selection.get("scenarios") or (),
    )
    now = str(manifest.get("ended") or manifest.get("started") or "")
    cells, verdicts = [], []
    for index in missing:
        for cell in shard(plan, index, total).cells:
            if cell.control:
                continue
            record = CellRecord(
                run_id=str(manifest.get("run_id") or ""),
                host=cell.host.name,
                runtime=cell.runtime.name,
                kind=cell.runtime.kind,
                scenarios=list(cell.scenarios),
                status=CellStatus.CANCELLED,
                reason=f"shard {index}/{total} is missing from the merge: this cell never ran",
                started=now,
                ended=now,
                elapsed=0.0,
            )
            cells.append(record)
            verdicts.extend(judge_cell(cell, record, control=None))
    return cells, verdicts


def merge_runs(folders: list[Path], out: Path) -> dict[str, Any]:
    """Write `out` from shard folders of one matrix; returns the merged manifest.

    Cells are kept once per (host, runtime), preferring a shard's own cell over a
    control-only copy; verdicts are kept once per (host, runtime, subject).
    """
    manifests = [read_manifest(f) for f in folders]
    shas = {(m.get("matrix") or {}).get("sha256") for m in manifests}
    if len(shas) != 1:
        raise UsageError("merge: the folders come from different matrices (sha256 differs)")
    total, missing = _check_shards(
        [str((m.get("selection") or {}).get("shard") or "") for m in manifests]
    )
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
    if missing:
        lost_cells, lost_verdicts = missing_cells(manifests[0], missing, total)
        for cell in lost_cells:
            cells.setdefault(
                (cell.host, cell.runtime), ((False, False, 0), json.dumps(cell.to_json()))
            )
        for v in lost_verdicts:
            verdicts.setdefault((v.host, v.runtime, v.subject()), v.to_json())
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
        "missing_shards": [f"{i}/{total}" for i in missing],
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
