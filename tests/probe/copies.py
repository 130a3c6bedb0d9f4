"""A copy of the built probe that an unprivileged uid can run (the tests that start
it as nobody, or give it a file capability or a setuid bit)."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.probe.build import build_probe


def runnable_copy(folder: Path, name: str = "probe") -> Path:
    """`folder/name`, a copy of the probe, mode 0755, with every folder above it
    made traversable (pytest's own are 0700)."""
    for p in (folder, *folder.parents):
        if p == Path("/"):
            break
        p.chmod(p.stat().st_mode | 0o711)
    copy = folder / name
    shutil.copy(build_probe(cache=folder / "cache").path, copy)
    copy.chmod(0o755)
    return copy
