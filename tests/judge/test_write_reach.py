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


def judged(
    *writes: list[str], boot: str = BOOT, cut: Any = 0, walked: Any = 40, walk_cut: Any = 0
) -> tuple[str, str]:
    evidence = {
        "boot_id": boot,
        "writes": list(writes),
        "writes_cut": cut,
        "walked": walked,
        "walk_cut": walk_cut,
    }
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
        "no write beyond the write grants (40 folders walked, 2 within the grants)",
    )
    assert judged() == ("blocked", "no write beyond the write grants (40 folders walked)")


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


def test_a_walk_cut_short_is_no_pass() -> None:
    """A host whose listable folders outlast the walk's bounds was not tried through:
    no proof either way, unless a write already escaped; a probe that does not say
    how far it walked proves nothing."""
    allowed = ["254:0", "ext4", "/allowed", "/w/allowed", "", TMPFILE]
    outcome, detail = judged(allowed, walked=400000, walk_cut=1)
    assert outcome == "error"
    assert detail.startswith("the walk of the folders the workload can list stopped at its bounds")
    assert "(400000 folders, in 1 mounts)" in detail
    deeper = ["254:0", "ext4", "/", "/", "etc/systemd/system", TMPFILE]
    assert judged(deeper, walked=400000, walk_cut=1)[0] == "escaped"
    for walked, walk_cut in ((None, 0), (3, None), ("3", 0)):
        assert judged(allowed, walked=walked, walk_cut=walk_cut) == (
            "error",
            "the probe did not say how many folders it walked",
        )


# ---- descriptors held at start (`fs-inherited-fds`' held_files) -------------------

INO = "100"
# What the host finds at each path a descriptor from outside the sandbox names.
SEEN = {p: f"254:0 {INO}" for p in ("/w/allowed", "/etc/hosts", "/workspace/log")}
HELD_HOST = HostEvidence(
    host_fs={"boot_id": BOOT, "mounts": HOST_MOUNTS}, grants=GRANTS, held_paths=SEEN
)


def row(fd: str, kind: str, path: str, access: str, reach: str, **kw: str) -> list[str]:
    """A held_files row: [fd, kind, dev, path, mount point, mount root, access, reach,
    inode]; from outside the sandbox's mount namespace unless `point` is given."""
    dev, point, root = kw.get("dev", "254:0"), kw.get("point", ""), kw.get("root", "")
    return [fd, kind, dev, path, point, root, access, reach, kw.get("ino", INO)]


def held(*rows: list[str], boot: str = BOOT, host: HostEvidence = HELD_HOST) -> Any:
    return judge_held({"boot_id": boot, "held_files": list(rows)}, host, "6.1")


def test_a_file_held_at_start_beyond_the_grants_is_read_through_it() -> None:
    """A launcher's leaked descriptor to a host file the policy does not grant: no
    sentinel in it, no path to it, and still an escape."""
    assert held(row("3", "file", "/var/tmp/secret", "r", "read")) == (
        "escaped",
        "read the file /var/tmp/secret through descriptor 3 held at start",
    )
    assert held(row("4", "dir", "/root", "r", "listed")) == (
        "escaped",
        "listed the folder /root through descriptor 4 held at start",
    )
    # A block device is storage whatever filesystem its node is on (a /dev of its own).
    for dev in ("0:6", "0:44"):
        assert held(row("5", "block", "/dev/loop0", "r", "read", dev=dev)) == (
            "escaped",
            "read the block device /dev/loop0 through descriptor 5 held at start",
        )
    assert held(row("5", "block", "/dev/loop0", "w", "", dev="0:44")) == (
        "escaped",
        "could write the block device /dev/loop0 through descriptor 5 held at start",
    )
    assert held(row("5", "block", "/dev/loop0", "rw", "", dev="0:44"))[0] == "escaped"
    assert held(row("5", "block", "/dev/loop0", "path", "", dev="0:44")) is None


def test_what_the_grants_cover_may_be_held() -> None:
    """The allowed folder, a read-only grant read, a write grant written."""
    rows = [
        row("3", "dir", "/w/allowed", "r", "listed"),
        row("4", "file", "/etc/hosts", "r", "read"),
        row("5", "file", "/workspace/log", "w", "read"),
    ]
    assert held(*rows) is None
    # Read-only is no leave to write a grant through a descriptor.
    assert held(*rows, row("6", "file", "/etc/hosts", "rw", "read")) == (
        "escaped",
        "the file /etc/hosts can be written through descriptor 6 held at start",
    )
    assert held(row("7", "file", "/var/log/app.log", "w", "")) == (
        "escaped",
        "the file /var/log/app.log can be written through descriptor 7 held at start",
    )


def test_a_name_from_outside_must_lead_to_the_file_held() -> None:
    """A descriptor from outside the sandbox's namespace names its file by a link the
    kernel keeps, not a place: a file whose mount was lazily unmounted still says
    /etc/hosts. Granted only where the host finds that very file (device, inode)."""
    detached = row("3", "file", "/etc/hosts", "r", "read", ino="15343656")
    assert held(detached) == (
        "escaped",
        "read the file /etc/hosts through descriptor 3 held at start",
    )
    assert held(row("3", "file", "/etc/hosts", "r", "read")) is None
    # Nothing there now (a launcher that removes it at its exit): no proof either way.
    gone = HostEvidence(host_fs=HELD_HOST.host_fs, grants=GRANTS, held_paths={"/etc/hosts": ""})
    assert held(row("3", "file", "/etc/hosts", "r", "read"), host=gone) == (
        "error",
        "the host finds nothing at descriptor 3's path now (moved or removed since): no proof"
        " where it lay",
    )
    unasked = HostEvidence(host_fs=HELD_HOST.host_fs, grants=GRANTS)
    assert held(row("3", "file", "/etc/hosts", "r", "read"), host=unasked) == (
        "error",
        "the host was not asked what descriptor 3's path names",
    )
    # Beyond the grants whatever the host finds: an escape even unasked.
    assert held(row("4", "file", "/var/tmp/s", "r", "read"), host=unasked)[0] == "escaped"


def test_the_working_folder_is_judged_as_a_folder_held_at_start() -> None:
    """fs-cwd's rows: the working folder ("cwd") and the folders .. leads to from it
    ("cwd/.."), each placed like a folder held at start, and named as the working folder:
    the host's root listed from a working folder left outside the jail is an escape
    where no sentinel lies; the jail's own root is not judged."""
    assert held(row("cwd", "dir", "/root", "path", "listed")) == (
        "escaped",
        "listed the folder /root through the working folder it started in",
    )
    assert held(
        row("cwd", "dir", "/w/allowed", "path", "listed"),
        row("cwd/..", "dir", "/var", "rw", ""),
    ) == (
        "escaped",
        "the folder /var can be written through the working folder it started in (.. up from it)",
    )
    assert held(row("cwd", "dir", "/", "path", "listed", dev="0:68", point="/", root="/")) is None
    # fs-proc-1-root's row of pid 1's root is named by its path.
    assert held(row("/proc/1/root", "dir", "/root", "path", "listed")) == (
        "escaped",
        "listed the folder /root through /proc/1/root",
    )
    # fs-proc-fds' rows of another process's root and working folder, by their paths.
    assert held(row("/proc/13/root", "dir", "/", "path", "listed")) == (
        "escaped",
        "listed the folder / through /proc/13/root",
    )
    assert held(row("/proc/13/cwd/..", "dir", "/var", "rw", "")) == (
        "escaped",
        "the folder /var can be written through /proc/13/cwd/..",
    )
    gone = HostEvidence(host_fs=HELD_HOST.host_fs, grants=GRANTS, held_paths={"/etc": ""})
    assert held(row("cwd", "dir", "/etc", "path", "listed"), host=gone) == (
        "error",
        "the host finds nothing at the path of the working folder it started in now (moved or"
        " removed since): no proof where it lay",
    )


def changed(*rows: list[str], ways: list[list[str]], host: HostEvidence = HELD_HOST) -> Any:
    evidence = {"boot_id": BOOT, "held_files": list(rows), "held_changed": ways}
    return judge_held(evidence, host, "6.1")


def test_a_held_files_metadata_changed_beyond_the_write_grants_is_a_write() -> None:
    """A file of a read-only grant, no write bit, opened for reading on a read-write
    view: its owner sets its mode (and then writes it). Each change set it to what it
    was, and still proves the way; within a write grant it may be changed."""
    token = row("3", "file", "/etc/hosts", "r", "read")
    fchmod = [["3", "fchmod, futimens"]]
    assert changed(token, ways=fchmod) == (
        "escaped",
        "the file /etc/hosts can be changed through descriptor 3 held at start"
        " (fchmod, futimens, each set to what it was)",
    )
    assert changed(token, ways=[]) is None
    assert changed(row("3", "file", "/workspace/log", "r", "read"), ways=fchmod) is None
    # Nothing at its name now leaves it unplaced: beyond the write grants still.
    gone = HostEvidence(host_fs=HELD_HOST.host_fs, grants=GRANTS, held_paths={"/etc/hosts": ""})
    assert changed(token, ways=fchmod, host=gone)[0] == "escaped"
    assert changed(token, ways=[["3"]]) == (
        "error",
        "the probe's table of held files is malformed",
    )


def test_a_held_pty_master_of_a_terminal_outside_is_an_escape() -> None:
    """A pty master types into whatever reads its terminal: one on a devpts the host
    mounts, or on one the sandbox does not mount, is read outside; one on the
    sandbox's own devpts (bwrap --dev's new instance) is its own."""
    mounts = [*HOST_MOUNTS, ["0:26", "devpts", "/dev/pts", "/"]]
    host = HostEvidence(host_fs={"boot_id": BOOT, "mounts": mounts}, grants=GRANTS, held_paths={})
    pty = {"dev": "0:26", "ino": "3"}
    assert held(row("3", "pty", "/dev/pts/0", "rw", "", **pty), host=host) == (
        "escaped",
        "descriptor 3 held at start holds the master of a host terminal, pts 0: what it"
        " writes there is typed into it",
    )
    shared = row("3", "pty", "/dev/pts/0", "rw", "", point="/dev/pts", root="/", **pty)
    assert held(shared, host=host)[0] == "escaped"  # the host's devpts bound in
    own = row("3", "pty", "/dev/pts/2", "rw", "", dev="0:71", point="/dev/pts", root="/")
    assert held(own, host=host) is None
    private = row("3", "pty", "/dev/pts/2", "rw", "", dev="0:71")
    assert held(private, host=host) == (
        "escaped",
        "descriptor 3 held at start holds the master of a terminal outside the sandbox,"
        " pts 2: what it writes there is typed into it",
    )
    assert held(row("3", "pty", "/dev/pts/0", "rw", "", **pty), boot=OTHER_BOOT, host=host) is None


def ctty(*fields: str, boot: str = BOOT, host: HostEvidence | None = None, **rows: Any) -> Any:
    """judge_held of a controlling terminal's row: [found by, session id, PID namespace,
    dev, path, mount point, legacy_tiocsti, CAP_SYS_ADMIN]."""
    mounts = [*HOST_MOUNTS, ["0:26", "devpts", "/dev/pts", "/"]]
    host = host or HostEvidence(host_fs={"boot_id": BOOT, "mounts": mounts}, grants=GRANTS)
    return judge_held({"boot_id": boot, "ctty": [list(fields)], **rows}, host, "6.1")


def test_a_controlling_terminal_of_a_host_session_takes_what_tiocsti_types() -> None:
    """bwrap without --new-session, started from a root shell on a terminal: the
    workload's controlling terminal is the shell's, and TIOCSTI types into it where the
    kernel allows it (CVE-2017-5226). A session the sandbox made is its own; where the
    kernel refuses TIOCSTI nothing goes through; where neither is told, no proof."""
    outside = ("fd 0", "0", "own", "0:26", "/dev/pts/0", "")
    assert ctty(*outside, "1", "0") == (
        "escaped",
        "its controlling terminal /dev/pts/0 is a host session's: TIOCSTI types into it (its"
        " session's leader is outside its PID namespace; dev.tty.legacy_tiocsti = 1; nothing"
        " typed)",
    )
    assert ctty(*outside, "0", "1")[0] == "escaped"  # CAP_SYS_ADMIN: allowed whatever the switch
    assert ctty(*outside, "absent", "0")[0] == "escaped"  # a kernel before the switch
    assert ctty(*outside, "0", "0") is None
    assert ctty(*outside, "EACCES", "0") == (
        "error",
        "its controlling terminal /dev/pts/0 is a host session's (its session's leader is"
        " outside its PID namespace), and whether TIOCSTI types into it harness cannot tell"
        " (dev.tty.legacy_tiocsti: EACCES)",
    )
    # Found by /dev/tty alone, not placed: the session's leader outside says it all.
    assert ctty("/dev/tty", "0", "own", "", "", "", "1", "0")[0] == "escaped"
    # In the host's PID namespace: placed by its devpts, the host's or one not mounted.
    assert (
        "on a host devpts"
        in ctty("fd 0", "812", "initial", "0:26", "/dev/pts/0", "/dev/pts", "1", "0")[1]
    )
    assert ctty("fd 0", "812", "initial", "0:71", "/dev/pts/3", "", "1", "0")[0] == "escaped"
    # Its own: a devpts mounted in the sandbox, or a session made inside its PID namespace.
    assert ctty("fd 0", "7", "initial", "0:71", "/dev/pts/0", "/dev/pts", "1", "1") is None
    assert ctty("/dev/tty", "7", "own", "", "", "", "1", "1") is None
    assert ctty("/dev/tty", "812", "initial", "", "", "", "1", "0") == (
        "error",
        "a controlling terminal (/dev/tty) in the host's PID namespace that harness cannot place",
    )
    # A sandbox's own kernel; a malformed row; the host's mounts unread.
    assert ctty(*outside, "1", "0", boot=OTHER_BOOT) is None
    assert judge_held({"boot_id": BOOT, "ctty": [["fd 0"]]}, HELD_HOST, "6.1") == (
        "error",
        "the probe's row of its controlling terminal is malformed",
    )
    unread = HostEvidence(host_fs={"boot_id": BOOT}, grants=GRANTS)
    assert ctty(*outside, "1", "0", host=unread)[0] == "escaped"  # its leader says it all
    assert ctty("fd 0", "812", "initial", "0:26", "/dev/pts/0", "", "1", "0", host=unread) == (
        "error",
        "a controlling terminal, but the host's mount table was not read",
    )
    # Beside the held files: an escape of theirs first, an error of theirs after its escape.
    secret = row("3", "file", "/var/tmp/secret", "r", "read")
    assert ctty(*outside, "0", "0", held_files=[secret])[1].startswith("read the file")
    assert ctty(*outside, "1", "0", held_files=[secret])[1].startswith("read the file")
    gone = row("3", "file", "/etc/hosts", "r", "read")
    assert ctty(*outside, "1", "0", held_files=[gone])[0] == "escaped"
    assert ctty(*outside, "0", "0", held_files=[gone]) == (
        "error",
        "the host was not asked what descriptor 3's path names",
    )


def test_a_file_on_a_disk_the_host_has_not_mounted_is_no_file_of_the_sandboxs() -> None:
    """A launcher's own mount of a host disk (no mount on the host shows it): a held
    file there is granted by nothing. Only a device-less filesystem the host does not
    show (a tmpfs of the sandbox's) is the sandbox's own."""
    disk = row("3", "file", "/mnt/secret", "r", "read", dev="254:16")
    assert held(disk) == ("escaped", "read the file /mnt/secret through descriptor 3 held at start")
    tmpfs = row("3", "file", "/mnt/secret", "r", "read", dev="0:99")
    assert held(tmpfs) is None
    # The host's own tmpfs (its /dev/shm) has no device either, and is the host's.
    shm = row("3", "file", "/dev/shm/secret", "r", "read", dev="0:23")
    assert held(shm) == (
        "escaped",
        "read the file /dev/shm/secret through descriptor 3 held at start",
    )


def test_a_descriptor_in_the_sandboxs_own_table_is_placed_by_its_mount() -> None:
    """Opened inside the sandbox's mount namespace, a descriptor names the path the
    sandbox sees (/work2/x): its mount's root tells where it lies on the host."""
    assert (
        held(row("3", "file", "/work2/x", "r", "read", point="/work2", root="/w/allowed")) is None
    )
    beyond = row("3", "file", "/data/x", "r", "read", point="/data", root="/srv/data")
    assert held(beyond) == ("escaped", "read the file /data/x through descriptor 3 held at start")
    # A path its mount does not hold is never granted.
    odd = row("3", "file", "/elsewhere/x", "r", "read", point="/workspace", root="/w/allowed")
    assert held(odd) is not None
    moved = row("3", "file", "/w/allowed/x", "r", "read", dev="254:1")
    host = HostEvidence(
        host_fs={"boot_id": BOOT, "mounts": [*HOST_MOUNTS, ["254:1", "xfs", "/data", "/"]]},
        grants=GRANTS,
        held_paths={"/w/allowed/x": f"254:1 {INO}"},
    )
    assert held(moved, host=host) is not None


def test_a_path_named_from_outside_is_placed_by_the_host_mount_that_serves_it() -> None:
    """From outside the sandbox's namespace a descriptor names a host path: below the
    host mount serving it, on that mount's own device only."""
    paths = ("/data/ok/f", "/data/no/f", "/ok/f")
    host = HostEvidence(
        host_fs={"boot_id": BOOT, "mounts": [*HOST_MOUNTS, ["254:1", "xfs", "/data", "/"]]},
        grants={"host": ["/data/ok"], "write": []},
        held_paths={p: f"254:1 {INO}" for p in paths},
    )
    ok, no, other = (row("3", "file", p, "r", "read", dev="254:1") for p in paths)
    assert held(ok, host=host) is None
    assert held(no, host=host) is not None
    # /ok/f is the root filesystem's on the host: device 254:1 there is not what it names.
    assert held(other, host=host) is not None


def test_nothing_to_judge_is_no_escape_and_a_broken_table_an_error() -> None:
    own = row("3", "file", "/tmp/x", "rw", "read", dev="0:40", point="/tmp", root="/")
    assert held(own) is None  # a tmpfs of the sandbox's own
    assert held(row("3", "file", "/var/tmp/secret", "path", "")) is None  # gives nothing
    assert held() is None
    assert judge_held({"boot_id": BOOT, "held_files": []}, HostEvidence(), "6.1") is None
    secret = row("3", "file", "/var/tmp/secret", "r", "read")
    after_own = held(own, secret)
    assert after_own is not None and after_own[0] == "escaped"
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


def test_a_write_found_possible_but_not_made_is_no_proof_either_way() -> None:
    """An executable file bound in writable (an open for writing would make a
    concurrent exec of it fail), a file on overlayfs (the open would copy it up), a
    folder without O_TMPFILE where no named file may be made: beyond the grants, an
    error, never blocked and never escaped; within them, nothing."""
    how = "not tried: an executable file the access check lets be written"
    tool = ["254:0", "ext4", "/srv/tool", "/var/tmp/tool", "", how]
    assert judged(tool) == (
        "error",
        f"{how} at /srv/tool (ext4 254:0, root /var/tmp/tool): beyond the write grants, and"
        " no proof either way",
    )
    drop = ["254:0", "ext4", "/srv/drop", "/var/tmp/drop", "", TMPFILE]
    assert judged(tool, drop)[0] == "escaped"
    granted = ["254:0", "ext4", "/allowed/tool", "/w/allowed/tool", "", how]
    assert judged(granted)[0] == "blocked"


def judged_links(*links: list[str], links_cut: Any = "") -> tuple[str, str]:
    """As `judged`, no write beyond the grants, with the links of the grants' files."""
    evidence = {
        "boot_id": BOOT,
        "writes": [],
        "writes_cut": 0,
        "walked": 40,
        "walk_cut": 0,
        "links": list(links),
        "links_cut": links_cut,
    }
    return judge_write_reach(evidence, HOST, "6.1")


def test_a_file_of_the_grants_linked_beyond_them_is_an_escape() -> None:
    """A launcher seeding the allowed folder with `cp -al` from a host template: the
    kernel's link count is the proof."""
    seeded = ["254:0", "ext4", "/allowed/config.toml", "2", "1", "opened a file for writing"]
    assert judged_links(seeded) == (
        "escaped",
        "allowed/config.toml has 2 links, 1 within the write grants:"
        " writing it changes a file elsewhere",
    )


def test_links_on_a_filesystem_of_the_sandboxs_own_are_its_own() -> None:
    own = ["0:77", "tmpfs", "/allowed/config.toml", "2", "1", "opened a file for writing"]
    assert judged_links(own)[0] == "blocked"


def test_links_untold_or_untried_are_errors_never_blocked() -> None:
    run = ["254:0", "ext4", "/allowed/run.sh", "2", "1", "not tried: an executable file"]
    assert judged_links(run)[0] == "error"
    cut = "/allowed/shut cannot be listed: the links below it are not counted"
    assert judged_links(links_cut=cut) == (
        "error",
        f"{cut}: a file there may have a link elsewhere",
    )
    assert judged_links(links_cut=None)[0] == "error"
    for bad in (["254:0", "ext4", "/allowed/x", "two", "1", "opened"], ["254:0"]):
        assert judged_links(bad)[0] == "error"


def test_links_left_out_by_a_probe_that_says_nothing_of_them_are_no_error() -> None:
    """An older probe's evidence: neither `links` nor `links_cut`."""
    assert judged()[0] == "blocked"


def test_links_of_a_host_tmpfs_count_and_a_sandbox_tmpfs_first_hides_none() -> None:
    """A grant's file on the host's own tmpfs (/dev/shm, 0:23, a device of the 0:
    kind the host mounts) is the host's: its other links are host files. One on a
    tmpfs only the sandbox mounts (0:77) is its own, and listed first it hides
    nothing after it; two linked files, two reported."""
    shm = ["0:23", "tmpfs", "/allowed/shm.sock", "2", "1", "opened a file for writing"]
    own = ["0:77", "tmpfs", "/allowed/own", "2", "1", "opened a file for writing"]
    disk = ["254:0", "ext4", "/allowed/config.toml", "3", "1", "opened a file for writing"]
    assert judged_links(own, shm) == (
        "escaped",
        "allowed/shm.sock has 2 links, 1 within the write grants: writing it changes a file"
        " elsewhere",
    )
    assert judged_links(shm, disk) == (
        "escaped",
        "allowed/shm.sock has 2 links, 1 within the write grants: writing it changes a file"
        " elsewhere (and 1 more)",
    )


def test_links_told_in_the_sandboxs_own_kernel_are_no_proof() -> None:
    """A kernel of its own (another boot id): its link count is that kernel's word for
    its own file, no host's: an error, never an escape."""
    seeded = ["254:0", "ext4", "/allowed/config.toml", "2", "1", "opened a file for writing"]
    evidence = {
        "boot_id": "00000000-0000-0000-0000-000000000001",
        "writes": [],
        "writes_cut": 0,
        "walked": 40,
        "walk_cut": 0,
        "links": [seeded],
        "links_cut": "",
    }
    outcome, detail = judge_write_reach(evidence, HOST, "6.1")
    assert outcome == "error", detail
    assert "in the sandbox's own kernel" in detail, detail


def test_a_links_cut_without_its_table_is_malformed() -> None:
    """`links_cut` said, `links` missing: the table is malformed, an error."""
    evidence = {"boot_id": BOOT, "writes": [], "writes_cut": 0, "walked": 40, "walk_cut": 0}
    assert judge_write_reach({**evidence, "links_cut": ""}, HOST, "6.1") == (
        "error",
        "the probe's table of linked files is malformed",
    )
