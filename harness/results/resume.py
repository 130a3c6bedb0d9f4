"""What an interrupted run already finished, so `--resume` runs only the rest."""

from __future__ import annotations

from pathlib import Path

from harness.results.records import CellStatus, VerdictRecord
from harness.results.store.manifest import Manifest
from harness.results.store.read import read_cells, read_manifest, read_verdicts
from harness.results.store.write import complete_blocks


def read_resumable(
    folder: Path,
) -> tuple[Manifest, set[tuple[str, str]], list[VerdictRecord]]:
    """(manifest, finished (host, runtime) cells, their verdicts).

    A cell is finished when it has a record other than `cancelled`; control-only
    cells never count, they are rerun as needed.
    """
    manifest = read_manifest(folder)
    cells = read_cells(folder)
    rows = read_verdicts(folder, required=False)
    recorded = {
        (cell.host, cell.runtime)
        for _line, cell in cells
        if cell.status is not CellStatus.CANCELLED and not cell.control
    }
    complete = {id(d) for d in complete_blocks([line.data for line, _v in rows])}
    judged = {(v.host, v.runtime) for line, v in rows if id(line.data) in complete}
    # Finished means recorded AND judged, all of it: a mismatch whose verdicts were
    # held for reruns, lost to a failed write, or cut short by a crash, is run
    # again rather than forgotten.
    done = recorded & judged
    prior = [v for line, v in rows if id(line.data) in complete and (v.host, v.runtime) in done]
    return manifest, done, prior
