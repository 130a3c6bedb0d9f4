"""Records, verdicts and the results folder."""

from harness.results.records import (
    CellRecord,
    CellStatus,
    CheckResult,
    FactObservation,
    Verdict,
    VerdictRecord,
)
from harness.results.store import ResultsStore, default_folder, read_jsonl

__all__ = [
    "CellRecord",
    "CellStatus",
    "CheckResult",
    "FactObservation",
    "ResultsStore",
    "Verdict",
    "VerdictRecord",
    "default_folder",
    "read_jsonl",
]
