"""`fs-mounts`' overlays on the real probe: an overlay made in a private mount
namespace, its lower layer a host folder, is reported with its options and the files
it shows (at its top and one folder down) with their inodes, which are the host's:
what judge/overlay.py holds a layer to. Root needed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.judge.overlay import layer_paths, layers
from harness.probe.build import build_probe

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root and unshare"
)

SCRIPT = r"""lower=$1 top=$2; shift 2
mount -t tmpfs harness-test "$top" && mkdir "$top/u" "$top/w" "$top/m" &&
mount -t overlay harness-test -o "lowerdir=$lower,upperdir=$top/u,workdir=$top/w" "$top/m" &&
exec "$@"
"""


def test_an_overlay_is_reported_with_its_layers_files_and_their_inodes(tmp_path: Path) -> None:
    lower = tmp_path / "lower,with comma"
    (lower / "sub").mkdir(parents=True)
    (lower / "top.txt").write_text("t")
    (lower / "sub" / "deep.txt").write_text("d")
    top = tmp_path / "top"
    top.mkdir()
    probe = build_probe().path
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", SCRIPT, "t"]
    argv += [str(lower).replace(",", "\\,"), str(top), str(probe), "run", "--tag", "t"]
    out = subprocess.run([*argv, "filesystem-confinement"], capture_output=True, text=True)
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    mounts = next(r for r in rows if r.get("id") == "fs-mounts")["evidence"]
    [row] = [o for o in mounts["overlays"] if o[0] == f"{top}/m"]
    assert layers(row[1])[0] == str(lower)
    names = dict(zip(row[2::2], row[3::2], strict=True))
    assert names == {
        "top.txt": str((lower / "top.txt").stat().st_ino),
        "sub/deep.txt": str((lower / "sub" / "deep.txt").stat().st_ino),
    }
    assert f"{lower}/top.txt" in layer_paths(mounts)
