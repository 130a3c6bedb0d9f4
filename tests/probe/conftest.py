"""Fixtures of the probe's tests."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder any uid can traverse, outside pytest's own (0700, which other tests
    rely on): under /tmp, removed after the test."""
    folder = Path(tempfile.mkdtemp(prefix="harness-test-open-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
