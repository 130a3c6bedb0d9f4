"""The privilege helpers are copies of the probe, staged on the host where any local
user can reach them: a setuid, setgid or file-capability copy answers `whoami` and
nothing else (its other modes run commands and open raw sockets), unless it is a
mutant's own workload copy, marked by its owner (root needed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.probe.copies import runnable_copy

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in ("setpriv", "setcap", "setfattr")),
    reason="needs root, setpriv, setcap and setfattr",
)
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


def _first(copy: Path, *args: str) -> dict[str, object]:
    done = subprocess.run([*AS_NOBODY, str(copy), *args], capture_output=True, text=True)
    line: dict[str, object] = json.loads(done.stdout.splitlines()[0])
    return line


@pytest.mark.parametrize("mode", [0o4755, 0o2755])
def test_a_setuid_or_setgid_copy_answers_whoami_only(open_folder: Path, mode: int) -> None:
    copy = runnable_copy(open_folder, "setid")
    copy.chmod(mode)
    who = _first(copy, "whoami")
    assert who["type"] == "whoami"
    for args in (("run", "--tag", "t", "mechanisms"), ("confine", "--", "/bin/true")):
        assert _first(copy, *args) == {
            "type": "fatal",
            "detail": "a setuid or setgid copy of the probe runs only `whoami`",
        }


def test_a_file_capability_copy_runs_only_whoami_unless_marked(open_folder: Path) -> None:
    copy = runnable_copy(open_folder, "fcap")
    subprocess.run(["setcap", "cap_net_raw+ep", str(copy)], check=True)
    who = _first(copy, "whoami")
    assert who["type"] == "whoami" and who["cap_eff"] == "0000000000002000"
    assert _first(copy, "run", "--tag", "t", "mechanisms") == {
        "type": "fatal",
        "detail": "a file-capability copy of the probe runs only `whoami`",
    }
    subprocess.run(["setfattr", "-n", "user.harness-workload", "-v", "1", str(copy)], check=True)
    assert _first(copy, "run", "--tag", "t", "mechanisms")["type"] == "start"
