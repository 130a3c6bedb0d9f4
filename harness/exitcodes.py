"""The exit-code contract (design.md), named once for the CLI, the runner and the results."""

from __future__ import annotations

import signal
from enum import IntEnum


class ExitCode(IntEnum):
    """What `harness` exits with; CI jobs and bisect scripts depend on these numbers."""

    OK = 0  # every verdict passed or was skipped
    MISMATCH = 1  # a regression, unexpected or flaky verdict
    INPUT = 2  # bad input: matrix, names, flags, results folder
    INCONCLUSIVE = 3  # no mismatch, but the lab is broken (not the sandbox)
    INTERNAL = 70  # EX_SOFTWARE: a bug in harness, distinct from every verdict code
    SIGINT = 130
    SIGTERM = 143


def for_signal(signum: int) -> ExitCode:
    """The code for a run stopped by a signal (SIGTERM's, or SIGINT's for any other)."""
    return ExitCode.SIGTERM if signum == signal.SIGTERM else ExitCode.SIGINT
