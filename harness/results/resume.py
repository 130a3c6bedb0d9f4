"""What an interrupted run already finished, so `--resume` runs only the rest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.errors import UsageError
from harness.results.parse import verdict_from_json
from harness.results.records import CellStatus, VerdictRecord
from harness.results.store import CELLS, MANIFEST, VERDICTS, complete_blocks, read_jsonl


def read_resumable(
    folder: Path,
) -> tuple[dict[str, Any], set[tuple[str, str]], list[VerdictRecord]]:
    """(manifest, finished (host, runtime) cells, their verdicts).

    A cell is finished when it has a record other than `cancelled`; control-only
    cells never count, they are rerun as needed.
    """
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"{folder}: cannot resume: no readable {MANIFEST} ({exc})") from None
    if not (folder / CELLS).is_file():
        raise UsageError(f"{folder}: cannot resume: no {CELLS}")
    recorded = {
        (str(c["host"]), str(c["runtime"]))
        for c in read_jsonl(folder / CELLS)
        if c.get("status") != CellStatus.CANCELLED and not c.get("control")
    }
    rows = complete_blocks(read_jsonl(folder / VERDICTS) if (folder / VERDICTS).is_file() else [])
    judged = {(str(r.get("host")), str(r.get("runtime"))) for r in rows}
    # Finished means recorded AND judged, all of it: a mismatch whose verdicts were
    # held for reruns, lost to a failed write, or cut short by a crash, is run
    # again rather than forgotten.
    done = recorded & judged
    prior = [
        verdict_from_json(row)
        for row in rows
        if (str(row.get("host")), str(row.get("runtime"))) in done
    ]
    return manifest, done, prior
