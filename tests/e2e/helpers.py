"""Helpers for whole runs through the CLI."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any


def verdicts_of(folder: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    """verdicts.jsonl keyed by (host, runtime, fact or property)."""
    rows = [json.loads(line) for line in (folder / "verdicts.jsonl").read_text().splitlines()]
    return {(r["host"], r["runtime"], r.get("fact") or r.get("property")): r for r in rows}


def cells_of(folder: Path) -> dict[tuple[str, str], dict[str, Any]]:
    rows = [json.loads(line) for line in (folder / "cells.jsonl").read_text().splitlines()]
    return {(r["host"], r["runtime"]): r for r in rows}


def leftovers(marker: str, *, wait: float = 5.0) -> list[str]:
    """Processes whose command line mentions `marker`, after giving teardown a moment."""
    deadline = time.monotonic() + wait
    while True:
        found = subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True).stdout
        mine = [line for line in found.splitlines() if "pgrep" not in line]
        if not mine or time.monotonic() > deadline:
            return mine
        time.sleep(0.2)


def runsc_containers(root: Path) -> list[str]:
    """Containers runsc still knows about under a private state root."""
    if not root.exists():
        return []
    done = subprocess.run(
        ["runsc", "--root", str(root), "list", "-quiet"], capture_output=True, text=True
    )
    return done.stdout.split()
