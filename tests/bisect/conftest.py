"""Fixtures for bisect tests: stand-in releases in a loopback bucket.

Everything here is a stand-in. No test contacts gVisor's real bucket.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bisect.bucket import Bucket, Releases, publish

ARCH = "x86_64"


def stand_ins(root: Path, **overrides: int) -> Releases:
    """13 nightlies; first bad at 9; broken at 5; checksum wrong at 6; flaky at 11."""
    layout = {"count": 13, "first_bad": 9, "broken": 5, "corrupt": 6, "flaky": 11, **overrides}
    return publish(
        root,
        runsc=shutil.which("runsc") or "/usr/bin/runsc",
        python=sys.executable,
        state=root.parent / "flaky-state",
        arch=ARCH,
        **layout,
    )


@pytest.fixture
def releases(tmp_path: Path) -> Releases:
    return stand_ins(tmp_path / "mirror")


@pytest.fixture
def bucket(releases: Releases) -> Iterator[Bucket]:
    """The stand-in releases served like the bucket, 4 entries a page."""
    server = Bucket(releases.root).start()
    try:
        yield server
    finally:
        server.stop()
