"""A scenario that hangs on purpose, for testing harness's own fault handling.

Never useful in a real matrix: its one check blocks until killed, so the cell
ends at its timeout. Tests use it to prove a hung sandbox is killed and cleaned.
"""

from __future__ import annotations

from harness.scenarios.base import Scenario

SELFTEST = Scenario(
    name="selftest",
    summary="for testing harness itself: one check that hangs until killed",
    facts={"selftest_hang": "blocks forever; the cell must be killed at its timeout"},
    internal=True,
)
