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
from harness.results.verdicts import exit_code, judge_facts

__all__ = [
    "CellRecord",
    "CellStatus",
    "CheckResult",
    "FactObservation",
    "ResultsStore",
    "Verdict",
    "VerdictRecord",
    "default_folder",
    "exit_code",
    "judge_facts",
    "read_jsonl",
]
