"""Fixtures for release tests: stand-in releases in a loopback bucket.

Everything here is a stand-in. No test contacts gVisor's real bucket.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.releases.bucket import Bucket, Releases, stand_ins


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
