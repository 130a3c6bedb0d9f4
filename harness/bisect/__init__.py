"""Find the first runsc build where a verdict changes, by bisecting gVisor releases.

versions: names and ordering; index: listing (bucket XML API or a folder);
artifacts: download, sha512, cache; install: upload to the host by sha256;
search: the pure bisection; session: one bisection's steps; report: text and JSON.
"""

from harness.bisect.search import Bisection, Outcome, SearchResult, Status
from harness.bisect.session import BisectReport, BisectSession, StepRecord, Target
from harness.bisect.versions import Version, parse_version

__all__ = [
    "BisectReport",
    "BisectSession",
    "Bisection",
    "Outcome",
    "SearchResult",
    "Status",
    "StepRecord",
    "Target",
    "Version",
    "parse_version",
]
