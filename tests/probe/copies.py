"""A copy of the built probe that an unprivileged uid can run (the tests that start
it as nobody, or give it a file capability or a setuid bit), in a folder such as the
`open_folder` fixture's; and a probe cache of a test's own that holds the session's
build already, where a test needs a cache folder of its own but not a compile (one
costs about 8 s of CPU: the suite made a dozen)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from harness.cache import PROBES, cache_dir
from harness.probe.build import build_probe


def runnable_copy(folder: Path, name: str = "probe") -> Path:
    """`folder/name`, a copy of the probe, mode 0755."""
    copy = folder / name
    shutil.copy(build_probe().path, copy)
    copy.chmod(0o755)
    return copy


def seed_probe_cache(cache: Path, *, arch: str | None = None) -> Path:
    """`cache` (a probe cache, as `build_probe(cache=...)` takes) given a copy of the
    probe for `arch` (default: this machine's) of the default cache (built there first
    if need be) at the same place below it, where `build_probe(cache=cache)` finds it
    and builds nothing. Read the default cache before a test points XDG_CACHE_HOME
    elsewhere."""
    default = cache_dir(PROBES)
    built = build_probe(arch=arch, cache=default)
    copy = cache / built.path.relative_to(default)
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(built.path, copy)
    return copy


@contextlib.contextmanager
def probe_for_nobody(prefix: str) -> Iterator[Path]:
    """The probe in a cache of its own below /tmp/`prefix`*, every folder up to there
    opened to anyone (pytest's own are 0700), removed afterwards."""
    top = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    try:
        seed_probe_cache(top / "cache")
        path = build_probe(cache=top / "cache").path
        for p in (path.parent, *path.parent.parents):
            p.chmod(0o755)
            if p == top:
                break
        yield path
    finally:
        shutil.rmtree(top)
