"""A copy of the built probe that an unprivileged uid can run (the tests that start
it as nobody, or give it a file capability or a setuid bit), in a folder such as the
`open_folder` fixture's."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from harness.probe.build import build_probe


def runnable_copy(folder: Path, name: str = "probe") -> Path:
    """`folder/name`, a copy of the probe, mode 0755."""
    copy = folder / name
    shutil.copy(build_probe().path, copy)
    copy.chmod(0o755)
    return copy


@contextlib.contextmanager
def probe_for_nobody(prefix: str) -> Iterator[Path]:
    """The probe built into a cache of its own below /tmp/`prefix`*, every folder up to
    there opened to anyone (pytest's own are 0700), removed afterwards."""
    top = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    try:
        path = build_probe(cache=top / "cache").path
        for p in (path.parent, *path.parent.parents):
            p.chmod(0o755)
            if p == top:
                break
        yield path
    finally:
        shutil.rmtree(top)
