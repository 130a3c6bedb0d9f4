"""Write reach (`fs-write-reach`, harness/judge/reach.py): each mount's first write,
held to the cell's write grants, not to what it may read."""

from __future__ import annotations

from typing import Any

import pytest

from harness.judge.reach import judge_write_reach
from harness.results.records import HostEvidence

BOOT = "5386c38b-773f-4cb0-8ee0-a6337cb8d671"
OTHER_BOOT = BOOT.replace("5", "6")
HOST_MOUNTS = [
    ["254:0", "ext4", "/", "/"],
    ["0:6", "devtmpfs", "/dev", "/"],
    ["0:23", "tmpfs", "/dev/shm", "/"],
    ["0:28", "cgroup2", "/sys/fs/cgroup", "/"],
]
# The allowed folder and /workspace may be changed; /etc only read.
GRANTS = {
    "host": ["/w/allowed", "/etc", "/workspace"],
    "write": ["/w/allowed", "/workspace"],
    "inside": ["/", "/allowed", "/etc"],
    "inside_write": ["/", "/allowed"],
}
HOST = HostEvidence(host_fs={"boot_id": BOOT, "mounts": HOST_MOUNTS}, grants=GRANTS)
TMPFILE = "made a file (O_TMPFILE)"


def judged(*writes: list[str], boot: str = BOOT, cut: Any = 0) -> tuple[str, str]:
    evidence = {"boot_id": boot, "writes": list(writes), "writes_cut": cut}
    return judge_write_reach(evidence, HOST, "6.1")


@pytest.mark.parametrize(
    "writes",
    [None, "x", [["254:0", "ext4", "/", "/", ""]], [["254:0", "ext4", "/", "/", "", 1]]],
)
def test_no_table_of_writes_is_an_error(writes: Any) -> None:
    evidence = {"boot_id": BOOT, "writes": writes, "writes_cut": 0}
    assert judge_write_reach(evidence, HOST, "6.1") == (
        "error",
        "the probe reported no table of writes",
    )


def test_the_hosts_table_unread_is_an_error() -> None:
    evidence = {"boot_id": BOOT, "writes": [], "writes_cut": 0}
    broken = HostEvidence(host_fs={"error": "mountinfo: EACCES"}, grants=GRANTS)
    assert judge_write_reach(evidence, broken, "6.1") == ("error", "mountinfo: EACCES")
    assert judge_write_reach(evidence, HostEvidence(), "6.1") == (
        "error",
        "the host's mount table was not read",
    )


def test_a_host_folder_the_sandbox_can_write_but_not_read_is_an_escape() -> None:
    """A drop box (mode 0733) bound in: nothing to read, a file made all the same."""
    drop = ["254:0", "ext4", "/srv/drop", "/var/tmp/drop", "", TMPFILE]
    assert judged(drop) == (
        "escaped",
        "made a file (O_TMPFILE) at /srv/drop (ext4 254:0, root /var/tmp/drop):"
        " beyond the write grants",
    )


def test_a_read_only_grant_is_no_write_grant() -> None:
    """/etc may be read (the policy's read_only), not changed: a file of it opened
    for writing is an escape, named by its path below the mount point."""
    etc = ["254:0", "ext4", "/etc", "/etc", "passwd", "opened a file for writing"]
    outcome, detail = judged(etc)
    assert outcome == "escaped"
    assert detail == (
        "opened a file for writing at /etc/passwd (ext4 254:0, root /etc/passwd):"
        " beyond the write grants"
    )


def test_writes_within_the_write_grants_are_counted_not_escapes() -> None:
    allowed = ["254:0", "ext4", "/allowed", "/w/allowed", "", TMPFILE]
    below = ["254:0", "ext4", "/", "/", "workspace/sub", TMPFILE]
    drop = ["254:0", "ext4", "/srv/drop", "/var/tmp/drop", "", TMPFILE]
    assert judged(allowed, drop)[0] == "escaped"  # a granted write first hides nothing
    assert judged(allowed, below) == (
        "blocked",
        "no write beyond the write grants (2 within the grants)",
    )
    assert judged() == ("blocked", "no write beyond the write grants")


def test_a_write_below_a_mount_point_is_held_to_its_own_path() -> None:
    """The mount's root is granted no more than the path written below it."""
    outside = ["254:0", "ext4", "/", "/", "var/spool", TMPFILE]
    outcome, detail = judged(outside)
    assert outcome == "escaped"
    assert detail.startswith("made a file (O_TMPFILE) at /var/spool (ext4 254:0, root /var/spool)")


def test_the_sandboxs_own_filesystems_are_no_escape_but_the_hosts_are() -> None:
    """A tmpfs of its own (a device the host does not show) is the sandbox's; the
    host's /dev/shm is the host's; a cgroup filesystem is the privilege floor's."""
    own = ["0:40", "tmpfs", "/tmp", "/", "", TMPFILE]
    cgroup = ["0:28", "cgroup2", "/sys/fs/cgroup", "/", "", TMPFILE]
    assert judged(own, cgroup)[0] == "blocked"
    shm = ["0:23", "tmpfs", "/dev/shm", "/", "", TMPFILE]
    outcome, detail = judged(own, shm)
    assert outcome == "escaped"
    assert detail.startswith("made a file (O_TMPFILE) at /dev/shm (tmpfs 0:23, root /)")


def test_escapes_are_counted() -> None:
    a = ["254:0", "ext4", "/a", "/a", "", TMPFILE]
    b = ["254:0", "ext4", "/b", "/b", "", TMPFILE]
    assert "(and 1 more): beyond" in judged(a, b)[1]
    assert "(and" not in judged(a)[1]


@pytest.mark.parametrize("kind", ["9p", "virtiofs", "fuse.sshfs"])
def test_a_host_folder_in_the_sandboxs_own_kernel(kind: str) -> None:
    """In gVisor or a VM only the kind of filesystem tells a host folder: one at a
    mount point the cell may not write is an escape; the allowed folder is not."""
    host_folder = ["0:13", kind, "/srv", "/", "", "made and removed a file"]
    allowed = ["0:14", kind, "/allowed", "/", "", "made and removed a file"]
    outcome, detail = judged(host_folder, allowed, boot=OTHER_BOOT)
    assert outcome == "escaped"
    assert detail == (
        f"made and removed a file at /srv ({kind}, a host folder in the sandbox's own kernel):"
        " beyond the write grants"
    )
    assert judged(allowed, boot=OTHER_BOOT)[0] == "blocked"
    # Read-only inside grants are no write grants there either.
    etc = ["0:15", kind, "/etc", "/", "", "made and removed a file"]
    assert judged(etc, boot=OTHER_BOOT)[0] == "escaped"
    own = ["0:16", "tmpfs", "/tmp", "/", "", TMPFILE]
    assert judged(own, boot=OTHER_BOOT)[0] == "blocked"


@pytest.mark.parametrize("cut", [3, None, "2"])
def test_writes_not_reported_are_no_pass(cut: Any) -> None:
    """A probe that could not report every write (or did not say) proves nothing
    where those it reported are granted: error, never blocked."""
    allowed = ["254:0", "ext4", "/allowed", "/w/allowed", "", TMPFILE]
    outcome, detail = judged(allowed, cut=cut)
    assert outcome == "error"
    assert detail.endswith("and none of those reported escaped")
    if cut is None:
        assert detail.startswith("no count of writes, ")
    else:
        assert detail.startswith(f"{cut} writes not reported (too many to report), ")
    drop = ["254:0", "ext4", "/srv/drop", "/var/tmp/drop", "", TMPFILE]
    assert judged(drop, cut=cut)[0] == "escaped"
