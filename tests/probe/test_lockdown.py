"""The privilege helpers are copies of the probe, staged on the host where any local
user can reach them: a setuid, setgid or file-capability copy answers `whoami` and
nothing else (its other modes run commands and open raw sockets), unless it is a
mutant's own workload copy, marked by its owner (root needed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.probe.build import build_probe

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in ("setpriv", "setcap", "setfattr")),
    reason="needs root, setpriv, setcap and setfattr",
)
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    for p in (tmp_path, *tmp_path.parents):
        if p == Path("/"):
            break
        p.chmod(p.stat().st_mode | 0o711)  # nobody may reach the copies
    yield tmp_path


def _copy(folder: Path, name: str) -> Path:
    copy = folder / name
    shutil.copy(build_probe(cache=folder / "cache").path, copy)
    copy.chmod(0o755)
    return copy


def _first(copy: Path, *args: str) -> dict[str, object]:
    done = subprocess.run([*AS_NOBODY, str(copy), *args], capture_output=True, text=True)
    line: dict[str, object] = json.loads(done.stdout.splitlines()[0])
    return line


@pytest.mark.parametrize("mode", [0o4755, 0o2755])
def test_a_setuid_or_setgid_copy_answers_whoami_only(folder: Path, mode: int) -> None:
    copy = _copy(folder, "setid")
    copy.chmod(mode)
    who = _first(copy, "whoami")
    assert who["type"] == "whoami"
    for args in (("run", "--tag", "t", "mechanisms"), ("confine", "--", "/bin/true")):
        assert _first(copy, *args) == {
            "type": "fatal",
            "detail": "a setuid or setgid copy of the probe runs only `whoami`",
        }


def test_a_file_capability_copy_runs_only_whoami_unless_marked(folder: Path) -> None:
    copy = _copy(folder, "fcap")
    subprocess.run(["setcap", "cap_net_raw+ep", str(copy)], check=True)
    who = _first(copy, "whoami")
    assert who["type"] == "whoami" and who["cap_eff"] == "0000000000002000"
    assert _first(copy, "run", "--tag", "t", "mechanisms") == {
        "type": "fatal",
        "detail": "a file-capability copy of the probe runs only `whoami`",
    }
    subprocess.run(["setfattr", "-n", "user.harness-workload", "-v", "1", str(copy)], check=True)
    assert _first(copy, "run", "--tag", "t", "mechanisms")["type"] == "start"
