"""priv-setid-view: a set-id file in the sandbox's own view is a gain when it starts
with a uid that is not the workload's or a group it does not hold, root's or anyone
else's (a setgid-shadow program reads /etc/shadow); a file whose owner the workload's
user namespace does not map is none (the kernel honours no set-id bit of one); a
descriptor the workload holds of one counts as much as a path; and a folder it cannot
list cuts the walk only where set-id bits may be honoured below it.

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
view=$1 probe=$2 own_userns=$3 nosuid=$4 home=$5
shift 5
mount -t tmpfs -o "mode=0755$nosuid" harness-test-view "$view" || exit 1
if [ "$home" = yes ]; then mkdir -m 0711 "$view/home" || exit 1; fi  # passable, not listable
mkdir "$view/bin" "$view/dev" "$view/proc" && touch "$view/dev/null" &&
  mount --bind /dev/null "$view/dev/null" && mount --rbind /proc "$view/proc" &&
  cp "$probe" "$view/probe" || exit 1
while [ $# -gt 0 ]; do
  cp "$probe" "$view/bin/$4" && chown "$2:$3" "$view/bin/$4" && chmod "$1" "$view/bin/$4" || exit 1
  shift 4
done
if [ -e "$view/bin/held" ]; then  # handed to the workload as descriptor 7, then gone
  exec 7<"$view/bin/held" && rm "$view/bin/held" || exit 1
fi
if [ "$own_userns" = yes ]; then
  exec setpriv --reuid=1000 --regid=1000 --clear-groups -- unshare --user \
    --map-current-user --mount --root="$view" /probe run --tag t privilege-floor
fi
exec unshare --root="$view" /probe run --tag t privilege-floor
"""


def _setid_view_row(
    folder: Path,
    files: list[str],
    *,
    own_userns: bool = False,
    nosuid: bool = False,
    home: bool = False,
) -> dict:
    """The priv-setid-view row of a probe run in a view holding `files`, each
    "MODE UID GID NAME" (one named `held` is handed as descriptor 7 and removed); in a
    user namespace of uid 1000's own where `own_userns`; on a nosuid mount where
    `nosuid`; with a folder /home the workload may pass through but not list where
    `home`."""
    view = folder / "view"
    view.mkdir()
    argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", _VIEW, "view"]
    argv += [str(view), str(runnable_copy(folder)), "yes" if own_userns else "no"]
    argv += [",nosuid" if nosuid else "", "yes" if home else "no"]
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


def test_a_held_descriptor_of_a_setuid_file_is_a_gain(open_folder: Path) -> None:
    """A setuid-root file the launcher opened and then removed from the view: the walk
    cannot find it, the descriptor the workload holds starts it as root."""
    row = _setid_view_row(open_folder, ["4755 0 0 held"])
    assert row["outcome"] == "escaped", row
    assert "file it holds as descriptor 7" in str(row["detail"]) and "euid 0" in str(row["detail"])


def test_an_unlistable_folder_on_a_nosuid_mount_hides_no_gain(open_folder: Path) -> None:
    """/home (0711) cannot be listed, but the view's one mount is nosuid and none lies
    below it: nothing there could be honoured, so the walk is whole; and on that mount
    even a setuid-root file in view gains nothing."""
    row = _setid_view_row(open_folder, ["4755 0 0 tool"], nosuid=True, home=True)
    assert row["outcome"] == "blocked", row
    assert row["evidence"]["setid_in_view"] == 0, row


def test_an_unlistable_folder_where_set_id_is_honoured_is_a_cut(open_folder: Path) -> None:
    """The same folder on a mount that honours set-id bits: a set-id file inside could
    run by its path, so the walk is cut and the line is an error, not blocked."""
    row = _setid_view_row(open_folder, [], home=True)
    assert row["outcome"] == "error", row
    assert "a folder it may pass through but not list (/home)" in str(row["detail"]), row
