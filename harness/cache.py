"""The controller's cache: `$XDG_CACHE_HOME/harness`, or `~/.cache/harness`.

Each user keeps its own subfolder: `probe` (built probes, by source hash and
architecture) and `runsc` (release builds, by sha512). Hosts have their own work
folder (`workdir`, `.cache/harness` under the login's home by default); that is
not this one.
"""

from __future__ import annotations

import os
from pathlib import Path

PROBES = "probe"  # built probes
RUNSC_BUILDS = "runsc"  # release builds of runsc


def cache_dir(part: str) -> Path:
    """One user's folder in the controller's cache (not made here: users make what
    they write, atomically)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "harness" / part
