"""A scenario that hangs on purpose, for testing harness's own fault handling.

Never useful in a real matrix: its first check blocks until killed, so the cell
ends at its timeout. Tests use it to prove a hung sandbox is killed and cleaned,
and (with a short check timeout) that light rows sharing a child each end alone.
"""

from __future__ import annotations

from harness.scenarios.base import Scenario

SELFTEST = Scenario(
    name="selftest",
    summary="for testing harness itself: one check that hangs until killed",
    facts={
        "selftest_hang": "blocks forever; the cell must be killed at its timeout",
        "selftest_light_pid": "a light row: the pid of the child the light rows share",
        "selftest_light_hang": "a light row that blocks forever: only it times out",
        "selftest_light_after_hang": "the pid of the fresh child after the hang",
        "selftest_light_crash": "a light row killed by SIGSEGV: only it is an error",
        "selftest_light_after_crash": "the pid of the fresh child after the crash",
        "selftest_light_evidence": "an error with its pid, without the row before's evidence",
    },
    internal=True,
)
