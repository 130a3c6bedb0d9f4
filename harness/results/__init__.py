"""Records, verdicts and the results folder."""

from harness.results.records import (
    CellRecord,
    CellStatus,
    CheckResult,
    FactObservation,
    Verdict,
    VerdictRecord,
)
from harness.results.store.read import read_jsonl
from harness.results.store.write import ResultsStore, default_folder

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
