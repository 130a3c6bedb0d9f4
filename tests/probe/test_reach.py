"""`fs-mounts` and `fs-write-reach` on the real probe: what it reads, and where it
can write, at and below a mount point it cannot list, as an unprivileged user in a
private mount namespace (root needed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.probe.build import build_probe
from tests.probe.copies import seed_probe_cache

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("setpriv"),
    reason="needs root, unshare and setpriv",
)

# In a private mount namespace: the 0711 folder bound at a mount point, then /dev/null
# bound on a file after it (its mount point is a device), then the probe as nobody.
SCRIPT = r"""hidden=$1 point=$2 devpoint=$3; shift 3
mount --bind "$hidden" "$point" && mount --bind /dev/null "$devpoint" &&
exec setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
"""


def _fs_path(path: Path) -> tuple[str, str]:
    """(device, path inside its filesystem) of a host path, from this mount table."""
    best = ("", "/", "")
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        f = line.split(" ")
        point = f[4]
        if (str(path) + "/").startswith(point.rstrip("/") + "/") and len(point) >= len(best[2]):
            best = (f[2], f[3], point)
    dev, root, point = best
    return dev, root.rstrip("/") + str(path)[len(point.rstrip("/")) :]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The probe's build cache, made once (the session's build copied in): each test's
    folder gets a copy (a build costs seconds; a copy of the cache, found by
    build_probe, none)."""
    cache = tmp_path_factory.mktemp("reach-build") / "cache"
    seed_probe_cache(cache)
    return cache


@pytest.fixture
def made(built: Path) -> Iterator[Path]:
    """The 0711 folder with a file two levels below, the mount points, the probe, in
    a folder nobody can traverse to (pytest's own is 0700)."""
    tmp_path = Path(tempfile.mkdtemp(prefix="harness-test-reach-", dir="/tmp"))
    tmp_path.chmod(0o755)
    hidden = tmp_path / "hidden"
    (hidden / "sub").mkdir(parents=True)
    (hidden / "sub" / "secret.txt").write_text("s")
    (hidden / "drop").mkdir()
    (hidden / "drop").chmod(0o733)  # anyone may make files in it, not list it
    (hidden / "w.txt").write_text("w")
    (hidden / "w.txt").chmod(0o622)  # anyone may write it, not read it
    (hidden / "x.sh").write_text("#!/bin/sh\n")
    (hidden / "x.sh").chmod(0o777)  # writable too, but never opened: it may be run
    for p in (tmp_path, hidden / "sub"):
        p.chmod(0o755)
    hidden.chmod(0o711)  # listing refused, files readable by name
    (tmp_path / "point").mkdir()
    (tmp_path / "dev").write_text("")
    shutil.copytree(built, tmp_path / "cache", symlinks=True)
    probe = build_probe(cache=tmp_path / "cache").path
    for p in (probe.parent, *probe.parent.parents):
        if p == tmp_path:
            break
        p.chmod(0o755)
    yield tmp_path
    shutil.rmtree(tmp_path)


def _evidence(tmp_path: Path, check: str, option: str, targets: str | None) -> dict[str, Any]:
    """A check's evidence as the probe reports it, with the given targets."""
    hidden = tmp_path / "hidden"
    probe = build_probe(cache=tmp_path / "cache").path
    run = [str(probe), "run", "--tag", "t"]
    if targets is not None:
        run += [option, targets]
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", SCRIPT, "t"]
    argv += [str(hidden), str(tmp_path / "point"), str(tmp_path / "dev"), *run]
    out = subprocess.run([*argv, "filesystem-confinement"], capture_output=True, text=True)
    for line in out.stdout.splitlines():
        row = json.loads(line)
        if row.get("id") == check:
            evidence: dict[str, Any] = row["evidence"]
            return evidence
    raise AssertionError(out.stdout + out.stderr)


def _mounts(tmp_path: Path, targets: str | None) -> dict[str, str]:
    """Each mount point's reach as the probe reports it, with the given targets."""
    evidence = _evidence(tmp_path, "fs-mounts", "--reach-targets", targets)
    return {m[2]: m[4] for m in evidence["mounts"]}


def _writes(tmp_path: Path, targets: str | None) -> dict[str, tuple[str, str]]:
    """Each mount point's first write (path below it, how), with the given targets."""
    evidence = _evidence(tmp_path, "fs-write-reach", "--write-targets", targets)
    assert evidence["writes_cut"] == 0
    return {w[2]: (w[4], w[5]) for w in evidence["writes"]}


def test_a_folder_that_does_not_list_is_read_below(made: Path) -> None:
    """A 0711 host folder bound in: unlistable at its mount point, but a file the
    host listed below it is readable by name, and that is the proof (F3)."""
    tmp_path = made
    dev, fspath = _fs_path(tmp_path / "hidden")
    point = str(tmp_path / "point")
    assert _mounts(tmp_path, None)[point] == ""
    targets = f"{dev} {fspath}/elsewhere\n{dev} {fspath}/sub/secret.txt\n{dev} {fspath}/sub"
    assert _mounts(tmp_path, targets)[point] == "sub/secret.txt"


def test_another_device_or_root_is_not_tried(made: Path) -> None:
    """Targets on another device, or outside the mount's root, prove nothing."""
    tmp_path = made
    dev, fspath = _fs_path(tmp_path / "hidden")
    other = "999:999" if dev != "999:999" else "998:0"
    targets = f"{other} {fspath}/sub/secret.txt\n{dev} {fspath}-not/sub/secret.txt"
    assert _mounts(tmp_path, targets)[str(tmp_path / "point")] == ""


def test_a_device_mount_point_is_not_tried_even_after_a_refusal(made: Path) -> None:
    """A device bound after a mount whose open was refused is "?" (not tried), not
    "" (F5: a stale errno from the refusal made it unreadable, and no exposure)."""
    tmp_path = made
    assert _mounts(tmp_path, None)[str(tmp_path / "dev")] == "?"


def test_a_folder_it_can_write_but_not_list_is_found_below(made: Path) -> None:
    """Below a mount point nobody may write (0711): the host's listed folders first,
    a file made in one without touching it (O_TMPFILE); where none takes one, a
    listed file opened for writing, never one with an execute bit."""
    tmp_path = made
    hidden = tmp_path / "hidden"
    dev, fspath = _fs_path(hidden)
    point = str(tmp_path / "point")
    assert point not in _writes(tmp_path, None)
    listed = [f"{dev} {fspath}/{name}" for name in ("sub", "x.sh", "w.txt", "drop")]
    assert _writes(tmp_path, "\n".join(listed))[point] == ("drop", "made a file (O_TMPFILE)")
    no_drop = "\n".join(listed[:3])
    assert _writes(tmp_path, no_drop)[point] == ("w.txt", "opened a file for writing")
    assert point not in _writes(tmp_path, "\n".join(listed[:2]))  # x.sh is never opened
    # Nothing was made or changed: the drop box is empty, the files as they were.
    assert os.listdir(hidden / "drop") == []
    assert (hidden / "w.txt").read_text() == "w"
    assert (hidden / "x.sh").read_text() == "#!/bin/sh\n"


def test_a_writable_mount_point_is_its_own_proof(made: Path) -> None:
    """The drop box bound at the mount point itself: written there, no target needed."""
    tmp_path = made
    hidden = tmp_path / "hidden"
    hidden.chmod(0o733)
    assert _writes(tmp_path, None)[str(tmp_path / "point")] == ("", "made a file (O_TMPFILE)")


def test_an_append_only_file_is_opened_for_appending(made: Path) -> None:
    """A file of the host's with the append-only flag (chattr +a, a log) refuses a
    plain open for writing, not one for appending: that is a write, and found."""
    tmp_path = made
    hidden = tmp_path / "hidden"
    log = hidden / "a.log"
    log.write_text("l\n")
    log.chmod(0o666)
    if subprocess.run(["chattr", "+a", str(log)], capture_output=True).returncode != 0:
        pytest.skip("no append-only flag on this filesystem")
    try:
        dev, fspath = _fs_path(hidden)
        listed = "\n".join(f"{dev} {fspath}/{name}" for name in ("sub", "x.sh", "a.log"))
        found = _writes(tmp_path, listed)[str(tmp_path / "point")]
        assert found == ("a.log", "opened a file for writing")
        assert log.read_text() == "l\n"
    finally:
        subprocess.run(["chattr", "-a", str(log)], check=True)
