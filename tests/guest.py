"""The guest kernel that microVM tests boot: the one scripts/fetch-kernel leaves."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.lab import require_tool

# Where the shipped matrices look for it (`~/` is expanded on the host).
KERNEL_DIR = Path.home() / ".cache" / "harness" / "kernels" / "debian-cloud"
KERNEL = "~/.cache/harness/kernels/debian-cloud/vmlinux"
MODULES = "~/.cache/harness/kernels/debian-cloud/modules"


def require_guest() -> Path:
    """qemu and a fetched kernel; skip when missing, unless CI is set: then fail."""
    require_tool("qemu-system-x86_64")
    if (KERNEL_DIR / "vmlinux").is_file() and (KERNEL_DIR / "modules" / "modules.dep").is_file():
        return KERNEL_DIR
    why = f"no guest kernel in {KERNEL_DIR}: run scripts/fetch-kernel"
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)
