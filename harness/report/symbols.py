"""Verdict order and symbols, and which verdicts need attention: the same in every
report as in the terminal table.

Apart from the console (which adds colours), so that the writers that do not draw
(JUnit, Markdown, HTML, JSON) never load rich.
"""

from __future__ import annotations

from harness.judge.verdicts import MISMATCH
from harness.results.records import Verdict

ORDER: tuple[Verdict, ...] = (
    Verdict.PASS,
    Verdict.REGRESSION,
    Verdict.UNEXPECTED,
    Verdict.FLAKY,
    Verdict.INCONCLUSIVE,
    Verdict.SKIPPED,
)
# One symbol per verdict, so that a report reads without colour.
SYMBOL: dict[Verdict, str] = {
    Verdict.PASS: "✓",
    Verdict.REGRESSION: "✗",
    Verdict.UNEXPECTED: "!",
    Verdict.INCONCLUSIVE: "?",
    Verdict.SKIPPED: "·",
    Verdict.FLAKY: "~",
}
ATTENTION = MISMATCH | {Verdict.INCONCLUSIVE}  # a mismatch, or a lab that could not tell
