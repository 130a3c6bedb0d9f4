"""Combine the results folders of a sharded run into one, as if run unsharded."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, UsageError
from harness.judge.verdicts import exit_code
from harness.results.records import CellRecord, CellStatus, VerdictRecord
from harness.results.store.manifest import Manifest, merged_manifest
from harness.results.store.read import read_cells, read_manifest, read_verdicts
from harness.results.store.write import ResultsStore


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


def missing_shard_reason(shard: str) -> str:
    """How a missing shard's cells are marked: `merge` counts them by it."""
    return f"shard {shard} is missing from the merge"


def missing_cells(
    manifest: Manifest, missing: list[int], total: int
) -> tuple[list[CellRecord], list[VerdictRecord]]:
    """The cells the missing shards would have run, each recorded as cancelled, and
    their verdicts (every property inconclusive), so a merged run never looks
    complete without them.

    The cells come from the matrix the shards ran, which must still be the same file
    (by sha256): a shard's folder alone does not name the other shards' cells.
    """
    from harness.judge.cell import judge_cell  # judging needs the plan, not only the records
    from harness.matrix import load_matrix
    from harness.plan import make_plan, shard

    recorded = manifest.matrix
    shown = ", ".join(f"{i}/{total}" for i in missing)
    try:
        matrix = load_matrix(Path(str(recorded and recorded.path)))
    except HarnessError as exc:
        raise UsageError(f"merge: missing {shown}, and its cells cannot be named: {exc}") from None
    if matrix.sha256 != manifest.matrix_sha256:
        raise UsageError(
            f"merge: missing {shown}, and {matrix.path} changed since the shards ran,"
            " so its cells cannot be named"
        )
    selection = manifest.selection
    plan = make_plan(
        matrix,
        hosts=(selection and selection.hosts) or (),
        runtimes=(selection and selection.runtimes) or (),
        scenarios=(selection and selection.scenarios) or (),
    )
    now = str(manifest.ended or manifest.started or "")
    cells, verdicts = [], []
    for index in missing:
        for cell in shard(plan, index, total).cells:
            if cell.control:
                continue
            record = CellRecord(
                run_id=str(manifest.run_id or ""),
                host=cell.host.name,
                runtime=cell.runtime.name,
                kind=cell.runtime.kind,
                scenarios=list(cell.scenarios),
                status=CellStatus.CANCELLED,
                reason=f"{missing_shard_reason(f'{index}/{total}')}: this cell never ran",
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
    if len({m.matrix_sha256 for m in manifests}) != 1:
        raise UsageError("merge: the folders come from different matrices (sha256 differs)")
    total, missing = _check_shards([m.shard for m in manifests])
    cells: dict[tuple[str, str], tuple[tuple[bool, bool, int], dict[str, Any]]] = {}
    verdicts: dict[tuple[str, str, str], tuple[VerdictRecord, dict[str, Any]]] = {}
    order = 0
    for folder in folders:
        for line, cell in read_cells(folder):
            order += 1
            key, rank = (cell.host, cell.runtime), _rank(cell, order)
            if key not in cells or rank > cells[key][0]:
                cells[key] = (rank, line.data)
        for line, verdict in read_verdicts(folder, required=False):
            verdicts[(verdict.host, verdict.runtime, verdict.subject())] = (verdict, line.data)
    if missing:
        lost_cells, lost_verdicts = missing_cells(manifests[0], missing, total)
        for cell in lost_cells:
            cells.setdefault((cell.host, cell.runtime), ((False, False, 0), cell.to_json()))
        for v in lost_verdicts:
            verdicts.setdefault((v.host, v.runtime, v.subject()), (v, v.to_json()))
    merged = merged_manifest(
        list(zip(folders, manifests, strict=True)),
        exit_code=exit_code(v for v, _row in verdicts.values()),
        missing_shards=[f"{i}/{total}" for i in missing],
    )
    store = ResultsStore(out)
    store.open()
    try:
        store.add_rows(
            cells=[row for _rank, row in cells.values()],
            verdicts=[row for _v, row in verdicts.values()],
        )
        store.write_manifest(merged)
    finally:
        store.close()
    return merged.to_json()
