"""`fs-write-reach`'s walk on the real probe: a folder the workload may write,
deeper than anything the host listed, is found by walking every folder it can list
below a mount point, or below a listed folder where the mount point does not list;
a folder the cell may write is neither tried nor entered. As nobody, in a private
mount namespace (root needed)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.probe.copies import probe_for_nobody

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("setpriv"),
    reason="needs root, unshare and setpriv",
)

# In a private mount namespace: the tree bound at the mount point, then the probe as
# nobody.
SCRIPT = r"""tree=$1 point=$2; shift 2
mount --bind "$tree" "$point" && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
"""
TMPFILE = "made a file (O_TMPFILE)"


@pytest.fixture(scope="module")
def probe() -> Iterator[Path]:
    """The probe, built once, where nobody can reach it (pytest's folders are 0700)."""
    with probe_for_nobody("harness-test-walk-probe-") as path:
        yield path


@pytest.fixture
def tree() -> Iterator[Path]:
    """tree/a/b/c, only c writable by anyone (a drop box three folders down), beside
    a mount point."""
    top = Path(tempfile.mkdtemp(prefix="harness-test-walk-", dir="/tmp"))
    top.chmod(0o755)
    deep = top / "tree" / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (top / "tree" / "a" / "other").mkdir()
    deep.chmod(0o777)
    (top / "point").mkdir()
    yield top
    shutil.rmtree(top)


def _dev_fspath(path: Path) -> tuple[str, str]:
    """(device, path inside its filesystem) of a host path, from this mount table."""
    best = ("", "/", "")
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        f = line.split(" ")
        if (str(path) + "/").startswith(f[4].rstrip("/") + "/") and len(f[4]) >= len(best[2]):
            best = (f[2], f[3], f[4])
    dev, root, point = best
    return dev, root.rstrip("/") + str(path)[len(point.rstrip("/")) :]


def _write_reach(probe: Path, top: Path, *options: str) -> dict[str, Any]:
    """fs-write-reach's evidence, the host's own "/" skipped (its walk is another
    mount's business), with the given options."""
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", SCRIPT, "t"]
    argv += [str(top / "tree"), str(top / "point"), str(probe), "run", "--tag", "t"]
    # The host's kernel: --write-targets given (a later one in `options` wins).
    argv += ["--check-timeout-ms", "20000", "--write-targets", "", *options]
    argv += ["filesystem-confinement"]
    out = subprocess.run(argv, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        row = json.loads(line)
        if row.get("id") == "fs-write-reach":
            evidence: dict[str, Any] = row["evidence"]
            return evidence
    raise AssertionError(out.stdout + out.stderr)


def _at(evidence: dict[str, Any], point: Path) -> tuple[str, str] | None:
    """The mount point's first write: (path below it, how)."""
    found = [(w[4], w[5]) for w in evidence["writes"] if w[2] == str(point)]
    return found[0] if found else None


def test_a_drop_box_three_folders_down_is_found_by_the_walk(probe: Path, tree: Path) -> None:
    evidence = _write_reach(probe, tree, "--write-skip", "/")
    assert _at(evidence, tree / "point") == ("a/b/c", TMPFILE)
    assert evidence["walk_cut"] == 0
    assert evidence["walked"] >= 3


def test_in_a_kernel_of_its_own_there_is_no_walk(probe: Path, tree: Path) -> None:
    """Without --write-targets (gVisor, a VM: the host gives none) a write below a
    mount point is judged by the mount point alone: nothing is walked."""
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", SCRIPT, "t"]
    argv += [str(tree / "tree"), str(tree / "point"), str(probe), "run", "--tag", "t"]
    out = subprocess.run(
        [*argv, "--write-skip", "/", "filesystem-confinement"], capture_output=True, text=True
    )
    row = next(json.loads(x) for x in out.stdout.splitlines() if '"fs-write-reach"' in x)
    assert _at(row["evidence"], tree / "point") is None
    assert row["evidence"]["walked"] == 0


def test_a_folder_the_cell_may_write_is_not_entered(probe: Path, tree: Path) -> None:
    """--write-skip names the cell's write grants as the sandbox sees them: a granted
    folder is no proof, and what lies below it is the grant's."""
    point = tree / "point"
    evidence = _write_reach(probe, tree, "--write-skip", f"/\n{point}/a/b")
    assert _at(evidence, point) is None
    assert evidence["walk_cut"] == 0


def test_below_a_mount_point_that_does_not_list_the_walk_starts_at_listed_folders(
    probe: Path, tree: Path
) -> None:
    """The mount point 0711 (Landlock's "/" reading only /etc): nothing to walk from
    there; from the host's listed folder a, the drop box below it is found."""
    (tree / "tree").chmod(0o711)
    dev, fspath = _dev_fspath(tree / "tree")
    assert _at(_write_reach(probe, tree, "--write-skip", "/"), tree / "point") is None
    listed = f"{dev} {fspath}/a"
    evidence = _write_reach(probe, tree, "--write-skip", "/", "--write-targets", listed)
    assert _at(evidence, tree / "point") == ("a/b/c", TMPFILE)


def test_the_walk_stops_at_its_bound_and_says_so(probe: Path, tree: Path) -> None:
    """A host with more folders than the walk's bound (`--walk-folders`, here 2; a
    share of the check's time limit works alike): cut, said, never a silent pass."""
    evidence = _write_reach(probe, tree, "--write-skip", "/", "--walk-folders", "2")
    assert evidence["walk_cut"] >= 1
    assert evidence["walked"] == 3  # the third stopped it
    assert _at(evidence, tree / "point") is None


def test_a_grant_named_through_a_symlink_is_skipped_by_identity(probe: Path, tree: Path) -> None:
    """The policy's path is a symlink to the folder (Debian's site-tmac to /etc/groff):
    the folder it leads to is the grant, neither a proof nor the end of the walk."""
    point = tree / "point"
    (tree / "tree" / "a" / "b" / "c").chmod(0o755)
    (tree / "tree" / "a" / "other").chmod(0o777)
    (tree / "tree" / "link").symlink_to("a/other")
    evidence = _write_reach(probe, tree, "--write-skip", f"/\n{point}/link")
    assert _at(evidence, point) is None
    assert _at(_write_reach(probe, tree, "--write-skip", "/"), point) == ("a/other", TMPFILE)


def test_a_folder_where_only_a_folder_may_be_made_is_found(probe: Path, tree: Path) -> None:
    """Landlock handling every right but MAKE_DIR (a sandbox that forgot it): no file
    may be made anywhere, but a folder may, and that is a write. REMOVE_DIR handled,
    it stays, said (harness removes it from the host after the cell)."""
    point = tree / "point"
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", CONFINED, "t"]
    argv += [str(tree / "tree"), str(point), str(probe)]
    out = subprocess.run(argv, capture_output=True, text=True)
    row = next(json.loads(x) for x in out.stdout.splitlines() if '"fs-write-reach"' in x)
    assert _at(row["evidence"], point) == ("", "made a folder it could not remove")
    assert [p.name for p in (tree / "tree").glob(".harness-w-*")] == [".harness-w-t"]


# As root in a private mount namespace: the tree bound at the point, then the probe
# confined by Landlock (reading everything, writing nothing, MAKE_DIR unhandled). Every
# other mount point is skipped: a folder made in the host's /dev/shm would stay.
CONFINED = r"""tree=$1 point=$2 probe=$3
mount --bind "$tree" "$point" || exit
skip=$(awk -v p="$point" '$5 != p {print $5}' /proc/self/mountinfo)
exec "$probe" confine --read / --unhandled make-dir -- \
  "$probe" run --tag t --write-skip "$skip" --write-targets "" filesystem-confinement
"""


def test_below_folders_it_cannot_list_the_hosts_list_of_folders_is_tried(
    probe: Path, tree: Path
) -> None:
    """tree/a and tree/a/b mode 0711: no walk gets below them, and the host's listing
    stops at its first levels. The host's list of every folder (`--write-dirs`, as
    hostside/hostfs.py writes it) holds tree/a/b/c: tried, found. A list that says
    it was cut is no proof of the folders it left out."""
    for folder in (tree / "tree" / "a", tree / "tree" / "a" / "b"):
        folder.chmod(0o711)
    dev, fspath = _dev_fspath(tree / "tree")
    lines = [f"{dev} {fspath}{sub}" for sub in ("/a", "/a/b", "/a/b/c", "/a/other")]
    listed = tree / "dirs"
    listed.write_text("\n".join(lines) + "\n")
    listed.chmod(0o644)
    targets = f"{dev} {fspath}/a"  # the host's listing: only the first level
    options = ("--write-skip", "/", "--write-targets", targets)
    assert _at(_write_reach(probe, tree, *options), tree / "point") is None
    evidence = _write_reach(probe, tree, *options, "--write-dirs", str(listed))
    assert _at(evidence, tree / "point") == ("a/b/c", TMPFILE)
    assert evidence["walk_cut"] == 0
    listed.write_text("\n".join([lines[0], "# cut"]) + "\n")
    evidence = _write_reach(probe, tree, *options, "--write-dirs", str(listed))
    assert _at(evidence, tree / "point") is None
    assert evidence["walk_cut"] >= 1
    # A list the sandbox cannot read, on a host device: no proof either way.
    evidence = _write_reach(probe, tree, *options, "--write-dirs", f"{tree}/missing")
    assert evidence["walk_cut"] >= 1
    # A listed folder that lists, below ones that do not, is walked: a file in it that
    # anyone may write (one right on one file, no folder writable) is found there.
    listed.write_text("\n".join(lines) + "\n")
    (tree / "tree" / "a" / "b" / "c").chmod(0o755)
    notes = tree / "tree" / "a" / "b" / "c" / "notes"
    notes.write_text("n")
    notes.chmod(0o666)
    evidence = _write_reach(probe, tree, *options, "--write-dirs", str(listed))
    assert _at(evidence, tree / "point") == ("a/b/c/notes", "opened a file for writing")


def test_a_file_anyone_may_write_is_found_by_the_walk_never_an_executable(
    probe: Path, tree: Path
) -> None:
    """No folder may be written, but a file two folders down may (a Landlock rule on
    one file, or its mode): opened for appending, nothing written. A file with an
    execute bit is never opened for writing (a concurrent exec of it would fail)."""
    (tree / "tree" / "a" / "b" / "c").chmod(0o755)
    script = tree / "tree" / "a" / "b" / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o777)
    assert _at(_write_reach(probe, tree, "--write-skip", "/"), tree / "point") is None
    notes = tree / "tree" / "a" / "b" / "notes"
    notes.write_text("n")
    notes.chmod(0o666)
    evidence = _write_reach(probe, tree, "--write-skip", "/")
    assert _at(evidence, tree / "point") == ("a/b/notes", "opened a file for writing")
    assert notes.read_text() == "n"


# As root, the tree bound at the point, then two Landlock layers: the first reads
# everything and leaves one right unhandled (or none), the second grants everything
# below point/a/b. Only that right reaches a/b; nothing else may change there.
ONE_RIGHT = r"""tree=$1 point=$2 probe=$3 right=$4
mount --bind "$tree" "$point" || exit
skip=$(awk -v p="$point" '$5 != p {print $5}' /proc/self/mountinfo)
set -- "$probe" confine --read / --write "$point/a/b" -- \
  "$probe" run --tag t --write-skip "$skip" --write-targets "" filesystem-confinement
set -- -- "$@"
[ -n "$right" ] && set -- --unhandled "$right" "$@"
set -- "$probe" confine --read / "$@"
exec "$@"
"""


@pytest.mark.parametrize(
    ("right", "found"),
    [
        ("remove-file", ("a/b", "its files may be removed")),
        ("remove-dir", ("a/b", "its folders may be removed")),
        ("truncate", ("a/b/log", "a file may be truncated")),
        ("make-char", ("a/b", "made a whiteout")),
        ("make-sock", ("a/b", "made a socket's node it could not remove")),
        ("", None),
    ],
)
def test_a_grant_of_removal_or_truncation_alone_is_found_and_nothing_changes(
    probe: Path, tree: Path, right: str, found: tuple[str, str] | None
) -> None:
    """Landlock lets only files be removed, or only folders, or only files be
    truncated, or only character devices or sockets' nodes be made, below a/b (a
    folder and a log in it): no regular file may be made or written there. unlink of
    the folder (refused only as a folder), rmdir of the log (only as no folder),
    truncate of the log past the file-size limit (only by that limit) prove it, and
    the folder and the log stay as they were; a whiteout (0:0, no CAP_MKNOD needed)
    or a socket's node is made (here left: REMOVE_FILE is refused). The twin that
    grants none of them is not flagged."""
    log = tree / "tree" / "a" / "b" / "log"
    log.write_text("keep")
    point = tree / "point"
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", ONE_RIGHT, "t"]
    argv += [str(tree / "tree"), str(point), str(probe), right]
    out = subprocess.run(argv, capture_output=True, text=True)
    row = next(json.loads(x) for x in out.stdout.splitlines() if '"fs-write-reach"' in x)
    got = _at(row["evidence"], point)
    assert ((got[0], got[1].split(" (")[0]) if got else None) == found, out.stdout
    assert log.read_text() == "keep"
    assert (tree / "tree" / "a" / "b" / "c").is_dir()


def test_a_file_under_a_lease_is_never_truncated(probe: Path, tree: Path) -> None:
    """truncate(2) breaks a lease (Samba's oplock, nfsd's delegation) before any
    access check, and waits up to lease-break-time (45 s) for its holder: a file the
    host's /proc/locks shows leased is passed over, and said; the lease stays."""
    log = tree / "tree" / "a" / "b" / "log"
    log.write_text("keep")
    point = tree / "point"
    fd = os.open(log, os.O_RDONLY)
    try:
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", ONE_RIGHT, "t"]
        argv += [str(tree / "tree"), str(point), str(probe), "truncate"]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        row = next(json.loads(x) for x in out.stdout.splitlines() if '"fs-write-reach"' in x)
        assert _at(row["evidence"], point) is None
        assert row["evidence"]["lease_skips"] == 1
        assert fcntl.fcntl(fd, fcntl.F_GETLEASE) == fcntl.F_RDLCK
    finally:
        os.close(fd)
    assert log.read_text() == "keep"
