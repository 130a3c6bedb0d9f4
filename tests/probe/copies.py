"""A copy of the built probe that an unprivileged uid can run (the tests that start
it as nobody, or give it a file capability or a setuid bit), in a folder such as the
`open_folder` fixture's."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.probe.build import build_probe


def runnable_copy(folder: Path, name: str = "probe") -> Path:
    """`folder/name`, a copy of the probe, mode 0755."""
    copy = folder / name
    shutil.copy(build_probe().path, copy)
    copy.chmod(0o755)
    return copy
