"""The results folder: manifest.json, cells.jsonl, verdicts.jsonl. Its one owner.

Everything that writes a folder (`harness run`, `--resume`, `merge`) and everything
that reads one (`report`, `diff`, `evidence`, `run --resume`, `merge`, `bisect
--from`) goes through this package, and nothing outside it opens those files: the
typed `Manifest`, the record types of `records.py`, one validation, and one error
wording (`ResultsError`, "DIR: not a results folder (why)"), exit 2.

Its parts, one job each: `layout.py` (the files' names, the error wording, how a
line is written), `manifest.py` (the manifest's models and how a run's is made),
`read.py` (`load_run`, `Run`, every line checked), `write.py` (`ResultsStore`, and
the torn-tail repair `--resume` does first). The names below are its entry point;
code inside harness imports from the part that owns a name.
"""

from harness.results.store.layout import (
    BLOCK,
    CELLS,
    LOCK,
    MANIFEST,
    MAX_DEPTH,
    MAX_MANIFEST,
    VERDICTS,
    holds_run,
    unreadable,
    utc_now,
)
from harness.results.store.manifest import (
    CanaryInfo,
    HelpersInfo,
    HostEntry,
    HostRuntime,
    Manifest,
    MatrixRef,
    RuntimeBuild,
    Segment,
    Selection,
    SshInfo,
    SupervisorInfo,
    merged_manifest,
    run_manifest,
    runtime_entry,
)
from harness.results.store.read import (
    CellsKept,
    Key,
    Line,
    Run,
    cell_from_json,
    iter_lines,
    load_run,
    load_runs,
    read_cells,
    read_jsonl,
    read_lines,
    read_manifest,
    read_verdicts,
    verdict_from_json,
)
from harness.results.store.write import ResultsStore, complete_blocks, default_folder

__all__ = [
    "BLOCK",
    "CELLS",
    "LOCK",
    "MANIFEST",
    "MAX_DEPTH",
    "MAX_MANIFEST",
    "VERDICTS",
    "CanaryInfo",
    "CellsKept",
    "HelpersInfo",
    "HostEntry",
    "HostRuntime",
    "Key",
    "Line",
    "Manifest",
    "MatrixRef",
    "ResultsStore",
    "Run",
    "RuntimeBuild",
    "Segment",
    "Selection",
    "SshInfo",
    "SupervisorInfo",
    "cell_from_json",
    "complete_blocks",
    "default_folder",
    "holds_run",
    "iter_lines",
    "load_run",
    "load_runs",
    "merged_manifest",
    "read_cells",
    "read_jsonl",
    "read_lines",
    "read_manifest",
    "read_verdicts",
    "run_manifest",
    "runtime_entry",
    "unreadable",
    "utc_now",
    "verdict_from_json",
]
