"""Write reach (`fs-write-reach`) and descriptors held at start (`fs-inherited-fds`),
harness/judge/reach.py: each held to the cell's grants, writes to its write grants."""

from __future__ import annotations

from typing import Any

import pytest

from harness.judge.reach import judge_held, judge_write_reach
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


# ---- descriptors held at start (`fs-inherited-fds`' held_files) -------------------


def held(*rows: list[str], boot: str = BOOT) -> tuple[str, str] | None:
    return judge_held({"boot_id": boot, "held_files": list(rows)}, HOST, "6.1")


def test_a_file_held_at_start_beyond_the_grants_is_read_through_it() -> None:
    """A launcher's leaked descriptor to a host file the policy does not grant: no
    sentinel in it, no path to it, and still an escape."""
    secret = ["3", "file", "254:0", "/var/tmp/secret", "", "", "r", "read"]
    assert held(secret) == (
        "escaped",
        "read the file /var/tmp/secret through descriptor 3 held at start",
    )
    folder = ["4", "dir", "254:0", "/root", "", "", "r", "listed"]
    assert held(folder) == ("escaped", "listed the folder /root through descriptor 4 held at start")


def test_what_the_grants_cover_may_be_held() -> None:
    """The allowed folder, a read-only grant read, a write grant open for writing."""
    rows = [
        ["3", "dir", "254:0", "/w/allowed", "", "", "r", "listed"],
        ["4", "file", "254:0", "/etc/hosts", "", "", "r", "read"],
        ["5", "file", "254:0", "/workspace/log", "", "", "w", "read"],
    ]
    assert held(*rows) is None
    # Read-only is no leave to hold a grant open for writing.
    etc = ["6", "file", "254:0", "/etc/hosts", "", "", "rw", "read"]
    assert held(*rows, etc) == (
        "escaped",
        "descriptor 6 held at start is open for writing on the file /etc/hosts",
    )
    log = ["7", "file", "254:0", "/var/log/app.log", "", "", "w", ""]
    assert held(log) == (
        "escaped",
        "descriptor 7 held at start is open for writing on the file /var/log/app.log",
    )


def test_a_descriptor_in_the_sandboxs_own_table_is_placed_by_its_mount() -> None:
    """Opened inside the sandbox's mount namespace, a descriptor names the path the
    sandbox sees (/workspace/x): its mount's root tells where it lies on the host."""
    inside = ["3", "file", "254:0", "/work2/x", "/work2", "/w/allowed", "r", "read"]
    assert held(inside) is None
    beyond = ["3", "file", "254:0", "/data/x", "/data", "/srv/data", "r", "read"]
    assert held(beyond) == ("escaped", "read the file /data/x through descriptor 3 held at start")
    # A path its mount does not hold, or a deleted file's, is never granted.
    odd = ["3", "file", "254:0", "/elsewhere/x", "/workspace", "/w/allowed", "r", "read"]
    assert held(odd) is not None
    gone = ["3", "file", "254:0", "/w/allowed/x (deleted)", "", "", "r", "read"]
    assert held(gone) is None  # still within the allowed folder by name
    moved = ["3", "file", "254:1", "/w/allowed/x", "", "", "r", "read"]
    host = HostEvidence(
        host_fs={"boot_id": BOOT, "mounts": [*HOST_MOUNTS, ["254:1", "xfs", "/data", "/"]]},
        grants=GRANTS,
    )
    assert judge_held({"boot_id": BOOT, "held_files": [moved]}, host, "6.1") is not None


def test_a_path_named_from_outside_is_placed_by_the_host_mount_that_serves_it() -> None:
    """From outside the sandbox's namespace a descriptor names a host path: below the
    host mount serving it, on that mount's own device only."""
    data = ["254:1", "xfs", "/data", "/"]
    host = HostEvidence(
        host_fs={"boot_id": BOOT, "mounts": [*HOST_MOUNTS, data]},
        grants={"host": ["/data/ok"], "write": []},
    )

    def judged_held(row: list[str]) -> tuple[str, str] | None:
        return judge_held({"boot_id": BOOT, "held_files": [row]}, host, "6.1")

    assert judged_held(["3", "file", "254:1", "/data/ok/f", "", "", "r", "read"]) is None
    assert judged_held(["3", "file", "254:1", "/data/no/f", "", "", "r", "read"]) is not None
    # /ok/f is the root filesystem's on the host: device 254:1 there is not what it names.
    assert judged_held(["3", "file", "254:1", "/ok/f", "", "", "r", "read"]) is not None


def test_nothing_to_judge_is_no_escape_and_a_broken_table_an_error() -> None:
    own = ["3", "file", "0:40", "/tmp/x", "/tmp", "/", "rw", "read"]
    assert held(own) is None  # a tmpfs of the sandbox's own
    neither = ["3", "file", "254:0", "/var/tmp/secret", "", "", "path", ""]
    assert held(neither) is None  # an O_PATH handle that gives nothing by itself
    assert held() is None
    assert judge_held({"boot_id": BOOT, "held_files": []}, HostEvidence(), "6.1") is None
    secret_after_own = held(own, ["3", "file", "254:0", "/var/tmp/s", "", "", "r", "read"])
    assert secret_after_own is not None and secret_after_own[0] == "escaped"
    secret = ["3", "file", "254:0", "/var/tmp/secret", "", "", "r", "read"]
    assert held(secret, boot=OTHER_BOOT) is None  # a sandbox's own kernel
    assert judge_held({"boot_id": BOOT}, HOST, "6.1") is None  # an older probe
    assert judge_held({"held_files": [["3"]]}, HOST, "6.1") == (
        "error",
        "the probe's table of held files is malformed",
    )
    assert judge_held({"boot_id": BOOT, "held_files": [secret]}, HostEvidence(), "6.1") == (
        "error",
        "held files, but the host's mount table was not read",
    )
