"""priv-setgid-exec: egid 0 from the setgid-root helper is a gain only for a workload
that did not hold group 0 already. A uid started in group 0 (`ctr task exec --user
UID`, OpenShift's arbitrary uids) gains nothing; one in another group does (root
needed: setpriv, and a helper owned by root)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.probe.copies import runnable_copy

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv"
)


def _setgid_row(folder: Path, *, gid: int) -> dict[str, object]:
    probe = runnable_copy(folder)
    helper = runnable_copy(folder, "setgid")
    os.chown(helper, 0, 0)
    helper.chmod(0o2755)
    argv = ["setpriv", "--reuid=65534", f"--regid={gid}", "--clear-groups", "--"]
    argv += [str(probe), "run", "--tag", "t", "--setgid-helper", str(helper), "privilege-floor"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    lines = map(json.loads, done.stdout.splitlines())
    rows = [r for r in lines if r.get("id") == "priv-setgid-exec"]
    assert rows, done.stdout + done.stderr
    return rows[0]


def test_group_0_held_from_the_start_is_no_gain(open_folder: Path) -> None:
    row = _setgid_row(open_folder, gid=0)
    assert row["outcome"] == "blocked", row
    assert "a group the workload held already" in str(row["detail"])


def test_group_0_gained_is_the_escape(open_folder: Path) -> None:
    row = _setgid_row(open_folder, gid=65534)
    assert row["outcome"] == "escaped", row
