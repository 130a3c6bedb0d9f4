"""What a bisection records: its target, each step, and the whole report.

The session fills these in and the report renders them, so they live here, below
both: `report.py` never imports the session, which imports the runner.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from harness.bisect.search import SearchResult, StepOutcome
from harness.releases.versions import Version
from harness.results.records import VerdictRecord
from harness.results.store.layout import utc_now

if TYPE_CHECKING:
    from harness.matrix import Matrix
    from harness.releases.artifacts import Candidate


@dataclass(frozen=True, slots=True)
class Target:
    """What each step judges: one property or one fact, and the scenario that has it."""

    kind: Literal["property", "fact"]
    name: str
    scenario: str


@dataclass(slots=True)
class StepRecord:
    """One tried version: what happened, and where its runs are recorded."""

    number: int
    version: Version
    outcome: StepOutcome = StepOutcome.SKIPPED
    reason: str | None = None
    verdicts: list[str] = field(default_factory=list)
    judged: VerdictRecord | None = None  # the first run's verdict, when there was one
    folder: str = ""
    candidate: Candidate | None = None
    remote_path: str | None = None
    uploaded: bool | None = None
    reported_version: str | None = None  # what the candidate's `--version` says
    elapsed: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.number,
            "version": self.version.name,
            "verdict": str(self.outcome),
            "verdicts": self.verdicts,
            "observed": self.judged.display if self.judged else None,
            "reason": self.reason,
            "folder": self.folder,
            "downloaded": self.candidate.downloaded if self.candidate else None,
            # Which bytes ran: this version's own verified artifact and its runsc.
            "sha512": self.candidate.sha512 if self.candidate else None,
            "runsc_sha256": self.candidate.sha256 if self.candidate else None,
            "uploaded": self.uploaded,
            "reported_version": self.reported_version,
            "elapsed": round(self.elapsed, 3),
        }


@dataclass(slots=True)
class BisectReport:
    """Everything a bisection produced; report.py renders it."""

    matrix: Matrix
    runtime: str
    host: str
    target: Target
    good: Version
    bad: Version
    index: str
    folder: Path
    repeat: int
    versions: list[Version] = field(default_factory=list)
    arch: str | None = None
    steps: list[StepRecord] = field(default_factory=list)
    result: SearchResult | None = None
    started: str = field(default_factory=utc_now)
    ended: str | None = None
    interrupted: bool = False
