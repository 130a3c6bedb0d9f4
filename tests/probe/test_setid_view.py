"""priv-setid-view: a set-id file in the sandbox's own view is a gain when it starts
with a uid that is not the workload's or a group it does not hold, root's or anyone
else's (a setgid-shadow program reads /etc/shadow); a file whose owner the workload's
user namespace does not map is none (the kernel honours no set-id bit of one).

Each view is a tmpfs of the test's own, in a mount namespace of its own, holding only
the probe, /dev/null, /proc and the files made here, set as the sandbox's root
(`unshare --root`): the host's own set-id programs stay out of it (root needed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.probe.copies import runnable_copy

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("unshare"),
    reason="needs root, setpriv and unshare",
)

# A view of the test's own: the probe, /dev/null, /proc, and set-id copies of the
# probe ("mode uid gid name" each, from the script's arguments).
_VIEW = r"""
view=$1 probe=$2 own_userns=$3
shift 3
mount -t tmpfs -o mode=0755 harness-test-view "$view" || exit 1
mkdir "$view/bin" "$view/dev" "$view/proc" && touch "$view/dev/null" &&
  mount --bind /dev/null "$view/dev/null" && mount --rbind /proc "$view/proc" &&
  cp "$probe" "$view/probe" || exit 1
while [ $# -gt 0 ]; do
  cp "$probe" "$view/bin/$4" && chown "$2:$3" "$view/bin/$4" && chmod "$1" "$view/bin/$4" || exit 1
  shift 4
done
if [ "$own_userns" = yes ]; then
  exec setpriv --reuid=1000 --regid=1000 --clear-groups -- unshare --user \
    --map-current-user --mount --root="$view" /probe run --tag t privilege-floor
fi
exec unshare --root="$view" /probe run --tag t privilege-floor
"""


def _setid_view_row(folder: Path, files: list[str], *, own_userns: bool = False) -> dict:
    """The priv-setid-view row of a probe run in a view holding `files`, each
    "MODE UID GID NAME"; in a user namespace of uid 1000's own where `own_userns`."""
    view = folder / "view"
    view.mkdir()
    argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", _VIEW, "view"]
    argv += [str(view), str(runnable_copy(folder)), "yes" if own_userns else "no"]
    for file in files:
        argv += file.split()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    found = [r for r in rows if r.get("id") == "priv-setid-view"]
    assert found, done.stdout + done.stderr
    return found[0]


def test_setgid_to_a_service_group_is_a_gain(open_folder: Path) -> None:
    row = _setid_view_row(open_folder, ["2755 0 42 tool"])
    assert row["outcome"] == "escaped", row
    assert "egid 42" in str(row["detail"]), row
    assert row["evidence"]["via"] == "/bin/tool"


def test_setuid_to_a_service_user_is_a_gain(open_folder: Path) -> None:
    row = _setid_view_row(open_folder, ["4755 1 0 tool"])
    assert row["outcome"] == "escaped", row
    assert "euid 1" in str(row["detail"]), row


def test_root_first_among_more_than_are_tried(open_folder: Path) -> None:
    """Nine files setgid to a group the workload lacks and one setuid-root: the one
    that gains root is tried first, so the line escapes by it, not an error."""
    files = [f"2755 0 {100 + i} tool{i}" for i in range(9)] + ["4755 0 0 zz-root"]
    row = _setid_view_row(open_folder, files)
    assert row["outcome"] == "escaped", row
    assert row["evidence"]["via"] == "/bin/zz-root", row
    assert "euid 0" in str(row["detail"]), row


def test_setid_to_what_the_workload_is_gains_nothing(open_folder: Path) -> None:
    """Setuid to the workload's own uid (65534) and setgid to its own group: nothing
    to gain, nothing to try."""
    row = _setid_view_row(open_folder, ["4755 65534 0 own-uid", "2755 0 65534 own-gid"])
    assert row["outcome"] == "blocked", row
    assert row["evidence"]["setid_in_view"] == 0, row


def test_an_owner_the_user_namespace_does_not_map_is_none(open_folder: Path) -> None:
    """In a user namespace mapping only the workload's uid 1000, ten setuid-root files
    show the overflow uid: the kernel honours none of them, so none is counted (were
    they, more than 8 would leave the line an error)."""
    files = [f"4755 0 0 tool{i}" for i in range(10)]
    row = _setid_view_row(open_folder, files, own_userns=True)
    assert row["outcome"] == "blocked", row
    assert row["evidence"]["setid_in_view"] == 0, row
