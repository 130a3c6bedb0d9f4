"""What a sandbox can reach: mounts beyond the grants, capabilities as started
(harness/judge/reach.py), through its public functions."""

from __future__ import annotations

from typing import Any

import pytest

from harness.caps import CAP_NAMES
from harness.judge.reach import exposures, judge_mounts, unplaced_mounts
from harness.judge.start import cap_names, judge_start
from harness.results.records import CheckOutcome, HostEvidence

HOST_MOUNTS = [["254:0", "ext4", "/", "/"], ["0:6", "devtmpfs", "/dev", "/"]]


def test_capability_names() -> None:
    """Known bits by name, unknown ones as CAP_<n>, and only the 64 bits of a mask."""
    assert cap_names(1 | 1 << 64) == [CAP_NAMES[0]]
    assert cap_names(1 << len(CAP_NAMES)) == [f"CAP_{len(CAP_NAMES)}"]
    assert cap_names(1 << (len(CAP_NAMES) - 1)) == [CAP_NAMES[-1]]


@pytest.mark.parametrize(
    ("host_mounts", "mounts", "exposed"),
    [
        # the granted folder lives on the longest matching host mount (/w), at /fs/allowed
        (
            [*HOST_MOUNTS, ["254:1", "ext4", "/w", "/"]],
            [["254:1", "ext4", "/allowed", "/fs/allowed"]],
            [],
        ),
        (
            [*HOST_MOUNTS, ["254:1", "ext4", "/w", "/"]],
            [["254:0", "ext4", "/allowed", "/w/fs/allowed"]],
            ["/allowed (ext4 254:0, root /w/fs/allowed)"],
        ),
        # mounted over: the later mount at the same point is the one in use
        (
            [*HOST_MOUNTS, ["254:1", "ext4", "/w", "/"], ["254:2", "ext4", "/w", "/"]],
            [["254:2", "ext4", "/allowed", "/fs/allowed"]],
            [],
        ),
        # the host mount's root is a subfolder of its filesystem (a bind mount)
        (
            [*HOST_MOUNTS, ["254:1", "ext4", "/w", "/data"]],
            [["254:1", "ext4", "/allowed", "/data/fs/allowed"]],
            [],
        ),
        (
            [*HOST_MOUNTS, ["254:1", "ext4", "/w", "/data"]],
            [["254:1", "ext4", "/allowed", "/fs/allowed"]],
            ["/allowed (ext4 254:1, root /fs/allowed)"],
        ),
        # cgroups are skipped, but never the mounts after them
        (
            HOST_MOUNTS,
            [["0:30", "cgroup2", "/sys/fs/cgroup", "/"], ["254:0", "ext4", "/host", "/"]],
            ["/host (ext4 254:0, root /)"],
        ),
        # a standard device node is fine; the host's whole /dev is not
        (HOST_MOUNTS, [["0:6", "devtmpfs", "/dev/null", "/null"]], []),
        (HOST_MOUNTS, [["0:6", "devtmpfs", "/dev", "/"]], ["/dev (devtmpfs 0:6, root /)"]),
        (HOST_MOUNTS, [["0:7", "tmpfs", "/null", "/null"]], []),  # the sandbox's own
        # the longest mount point wins, whatever the roots of the others
        (
            [["254:0", "ext4", "/", "/rootfs/of/a/long/name"], ["254:1", "ext4", "/w", "/"]],
            [["254:1", "ext4", "/allowed", "/fs/allowed"]],
            [],
        ),
        # a standard device node first does not hide the mounts after it
        (
            HOST_MOUNTS,
            [["0:6", "devtmpfs", "/dev/null", "/null"], ["254:0", "ext4", "/host", "/"]],
            ["/host (ext4 254:0, root /)"],
        ),
        # on the host's kernel a 9p filesystem the host does not have is the sandbox's own
        (HOST_MOUNTS, [["0:45", "9p", "/extra", "/"]], []),
        # a granted mount first does not hide the ones after it
        (
            [*HOST_MOUNTS, ["254:1", "ext4", "/w", "/"]],
            [["254:1", "ext4", "/allowed", "/fs/allowed"], ["254:0", "ext4", "/etc2", "/etc"]],
            ["/etc2 (ext4 254:0, root /etc)"],
        ),
    ],
)
def test_exposures_on_the_hosts_kernel(
    host_mounts: list[list[str]], mounts: list[list[str]], exposed: list[str]
) -> None:
    """On a shared kernel, a host filesystem mounted beyond the grants is an exposure."""
    grants = {"host": ["/w/fs/allowed"], "inside": ["/allowed"]}
    found = exposures(mounts, host_fs={"mounts": host_mounts}, grants=grants, shared=True)
    assert found == exposed


def test_exposures_in_the_sandboxs_own_kernel() -> None:
    """In its own kernel, only a passthrough filesystem off the granted points exposes."""
    mounts = [
        ["0:40", "9p", "/allowed", "/"],
        ["0:41", "9p", "/host", "/"],
        ["0:42", "ext4", "/", "/"],
        ["0:43", "fuse.sshfs", "/mnt", "/"],
    ]
    found = exposures(
        mounts, host_fs={"mounts": HOST_MOUNTS}, grants={"inside": ["/allowed"]}, shared=False
    )
    assert found == [
        "/host (9p 0:41, a host folder in the sandbox's own kernel)",
        "/mnt (fuse.sshfs 0:43, a host folder in the sandbox's own kernel)",
    ]


# Every member of the judging tables, one by one: a type dropped or misspelt there
# turns an exposure into none (or the reverse).
@pytest.mark.parametrize(
    "kind", ["9p", "virtiofs", "fuse", "nfs", "nfs4", "cifs", "smb3", "overlay", "fuse.sshfs"]
)
def test_every_passthrough_filesystem_exposes_in_the_sandboxs_own_kernel(kind: str) -> None:
    """Each filesystem through which a guest kernel reaches host files is an exposure off
    the granted points, and none at them."""
    mounts = [["0:41", kind, "/host", "/"], ["0:42", kind, "/allowed", "/"]]
    found = exposures(
        mounts, host_fs={"mounts": HOST_MOUNTS}, grants={"inside": ["/allowed"]}, shared=False
    )
    assert found == [f"/host ({kind} 0:41, a host folder in the sandbox's own kernel)"]


@pytest.mark.parametrize("node", ["/null", "/zero", "/full", "/random", "/urandom", "/tty"])
def test_every_standard_device_node_is_no_exposure(node: str) -> None:
    """A runtime binds these single nodes from the host's devtmpfs; any other is judged."""
    mounts = [["0:6", "devtmpfs", f"/dev{node}", node], ["0:6", "devtmpfs", "/dev/sda", "/sda"]]
    found = exposures(mounts, host_fs={"mounts": HOST_MOUNTS}, grants={}, shared=True)
    assert found == ["/dev/sda (devtmpfs 0:6, root /sda)"]


@pytest.mark.parametrize("kind", ["cgroup", "cgroup2"])
def test_a_host_cgroup_filesystem_is_left_to_the_privilege_floor(kind: str) -> None:
    """The host's own cgroup hierarchy, visible inside, is not a filesystem escape
    (release_agent is the privilege floor's check); the mounts after it still count."""
    host = [*HOST_MOUNTS, ["0:30", kind, "/sys/fs/cgroup", "/"]]
    mounts = [["0:30", kind, "/sys/fs/cgroup", "/"], ["254:0", "ext4", "/host", "/"]]
    found = exposures(mounts, host_fs={"mounts": host}, grants={}, shared=True)
    assert found == ["/host (ext4 254:0, root /)"]


BOOT = "5386c38b-773f-4cb0-8ee0-a6337cb8d671"
HOST_SIDE = HostEvidence(host_fs={"boot_id": BOOT, "mounts": HOST_MOUNTS}, grants={})


@pytest.mark.parametrize(
    "mounts",
    [
        None,
        "/ ext4",
        [["254:0", "ext4", "/"]],
        [["254:0", "ext4", "/", "/"], "x"],
        [("a", "b", "c", "d")],
    ],
)
def test_no_mount_table_is_an_error(mounts: Any) -> None:
    """A missing or malformed mount table proves nothing: error, never blocked."""
    assert judge_mounts({"mounts": mounts, "boot_id": BOOT}, HOST_SIDE, "6.1") == (
        "error",
        "the probe reported no mount table",
    )


def test_the_hosts_table_unread_is_an_error() -> None:
    """Without the host's own table nothing can be compared: error, with the reason."""
    evidence = {"mounts": [["0:40", "tmpfs", "/", "/"]], "boot_id": BOOT}
    assert judge_mounts(evidence, HostEvidence(host_fs={"error": "mountinfo: EACCES"}), "6.1") == (
        "error",
        "mountinfo: EACCES",
    )
    assert judge_mounts(evidence, HostEvidence(), "6.1") == (
        "error",
        "the host's mount table was not read",
    )


def test_mount_verdict_details() -> None:
    """Exposures are counted; a clean table is listed, cut at 300 characters."""
    two = [["254:0", "ext4", "/a", "/"], ["254:0", "ext4", "/b", "/"]]
    outcome, detail = judge_mounts({"mounts": two, "boot_id": BOOT}, HOST_SIDE, "6.1")
    assert outcome == "escaped"
    assert (
        detail
        == "mount /a (ext4 254:0, root /) (and 1 more) exposes a host filesystem beyond the grants"
    )
    one = judge_mounts({"mounts": two[:1], "boot_id": BOOT}, HOST_SIDE, "6.1")[1]
    assert "(and" not in one
    for length, shown in ((300, None), (301, 297)):
        point = "/" + "p" * (length - len(" tmpfs") - 1)
        mounts = [["0:40", "tmpfs", point, "/"]]
        outcome, detail = judge_mounts({"mounts": mounts, "boot_id": BOOT}, HOST_SIDE, "6.1")
        assert outcome == "blocked"
        seen = f"{point} tmpfs"
        assert detail.endswith(": " + (seen if shown is None else seen[:shown] + "..."))
        assert detail.startswith("1 mounts (the host's kernel), none exposing")
    other = {"mounts": [["0:40", "tmpfs", "/", "/"]], "boot_id": BOOT.replace("5", "6")}
    assert judge_mounts(other, HOST_SIDE, "6.1")[1].startswith("1 mounts (its own kernel), none")


@pytest.mark.parametrize("evidence", [{}, {"cap_eff": "zz", "cap_prm": "0"}, {"cap_eff": "0"}])
def test_no_capabilities_reported_is_an_error(evidence: dict[str, Any]) -> None:
    """Capabilities the probe did not report (or garbled) are no proof: error."""
    assert judge_start(evidence, allowed=(), own=False) == (
        "error",
        "the probe reported no capabilities",
    )


START = {"uid": 65534, "euid": 65534, "suid": 65534, "gid": 65534, "egid": 65534,
         "sgid": 65534, "groups": "65534", "user": "nobody", "group": "nogroup",
         "initial_userns": 0, "cap_eff": "0", "cap_prm": "0"}  # fmt: skip


@pytest.mark.parametrize(
    ("process", "outcome", "detail"),
    [
        ({}, "blocked", "0 capabilities, in a child user namespace only"),
        ({"run_as_user": 65534, "run_as_group": 65534}, "blocked", "0 capabilities"),
        ({"run_as_user": "nobody", "run_as_group": "nogroup"}, "blocked", "0 capabilities"),
        ({"run_as_user": "65534"}, "blocked", "0 capabilities"),
        (
            {"run_as_user": "sandbox"},
            "escaped",
            "started as uid 65534 (nobody), but the policy says run_as_user: sandbox",
        ),
        (
            {"run_as_user": 65534, "run_as_group": 0},
            "escaped",
            "started as gid 65534 (nogroup), but the policy says run_as_group: 0",
        ),
    ],
)
def test_the_workload_starts_as_the_policys_user(
    process: dict[str, Any], outcome: str, detail: str
) -> None:
    """Starting as anyone but the policy's user and group is a violation naming both."""
    from harness.policy.models import ProcessPolicy

    got = judge_start(START, allowed=(), own=False, process=ProcessPolicy(**process))
    assert got[0] == outcome and got[1].startswith(detail), got


@pytest.mark.parametrize(
    ("ids", "process", "detail"),
    [
        # A forged /etc/passwd calls uid 0 "nobody": still root.
        ({"uid": 0, "euid": 0, "suid": 0, "user": "nobody"}, {"run_as_user": "nobody"},
         "started as uid 0 (nobody), but the policy says run_as_user: nobody"),
        # ...or calls uid 65534 "root": not root.
        ({"user": "root"}, {"run_as_user": "root"},
         "started as uid 65534 (root), but the policy says run_as_user: root"),
        ({"gid": 0, "egid": 0, "sgid": 0, "groups": "0", "group": "nogroup"},
         {"run_as_group": "nogroup"}, "started as gid 0 (nogroup)"),
        ({"group": "root"}, {"run_as_group": "root"}, "started as gid 65534 (root)"),
    ],
)  # fmt: skip
def test_id_0_is_root_whatever_the_sandboxs_files_say(
    ids: dict[str, Any], process: dict[str, Any], detail: str
) -> None:
    """A policy naming its user is checked against the sandbox's own passwd file, which
    the sandbox may forge; id 0 is the one name it cannot hide."""
    from harness.policy.models import ProcessPolicy

    got = judge_start({**START, **ids}, allowed=(), own=False, process=ProcessPolicy(**process))
    assert got[0] == "escaped" and got[1].startswith(detail), got
    root = {**START, "uid": 0, "euid": 0, "suid": 0, "user": "root"}
    assert (
        judge_start(root, allowed=(), own=False, process=ProcessPolicy(run_as_user="root"))[0]
        == "blocked"
    )


@pytest.mark.parametrize(
    ("ids", "process", "detail"),
    [
        ({"uid": 0, "euid": 0, "suid": 0}, {}, "started as uid 0, but the policy names no"
         " run_as_user: OpenShell's default is a sandbox user that is not root"),
        ({"gid": 0, "egid": 0, "sgid": 0}, {"run_as_user": 65534}, "started as gid 0, but the"
         " policy names no run_as_group"),
        ({"groups": "65534,0"}, {"run_as_user": "nobody"}, "started as supplementary group 0,"
         " but the policy names no run_as_group"),
    ],
)  # fmt: skip
def test_a_policy_without_a_process_user_means_not_root(
    ids: dict[str, Any], process: dict[str, Any], detail: str
) -> None:
    """OpenShell runs no workload as root: where the policy names no user or group,
    its default sandbox user is meant, and id 0 (or group 0 among the supplementary
    ones) breaks it. Without a policy at all, harness's own floor alone applies."""
    from harness.policy.models import ProcessPolicy

    got = judge_start({**START, **ids}, allowed=(), own=False, process=ProcessPolicy(**process))
    assert got[0] == "escaped" and got[1].startswith(detail), got
    assert judge_start({**START, **ids}, allowed=(), own=False)[0] == "blocked"
    # A policy naming root as the user, by name or number, leaves root's group to it.
    root = {**START, "uid": 0, "euid": 0, "suid": 0, "gid": 0, "egid": 0, "sgid": 0}
    for user in ("root", 0, "0"):
        as_root = ProcessPolicy(run_as_user=user)
        assert judge_start(root, allowed=(), own=False, process=as_root)[0] == "blocked", user


def test_a_start_the_probe_could_not_name_is_not_a_pass() -> None:
    """A name in the policy and none for the uid inside (no /etc/passwd), or no ids at
    all: the start cannot be checked, an error (inconclusive), never a pass; except
    `root`, which is id 0 whatever the files say."""
    from harness.policy.models import ProcessPolicy

    bare = {k: v for k, v in START.items() if k != "user"}
    got = judge_start(bare, allowed=(), own=False, process=ProcessPolicy(run_as_user="nobody"))
    assert got[0] == "error" and "cannot be checked" in got[1], got
    assert (
        judge_start(bare, allowed=(), own=False, process=ProcessPolicy(run_as_user=65534))[0]
        == "blocked"
    )
    # "root" is id 0 with no file to say so: checkable, either way.
    bare_root = {
        **bare,
        "uid": 0,
        "euid": 0,
        "suid": 0,
        "gid": 0,
        "egid": 0,
        "sgid": 0,
        "groups": "0",
    }
    bare_root = {k: v for k, v in bare_root.items() if k != "group"}
    root = ProcessPolicy(run_as_user="root", run_as_group="root")
    assert judge_start(bare_root, allowed=(), own=False, process=root)[0] == "blocked"
    got = judge_start(bare, allowed=(), own=False, process=ProcessPolicy(run_as_user="root"))
    assert got[0] == "escaped" and "started as uid 65534" in got[1], got
    no_uid = {k: v for k, v in START.items() if k != "suid"}
    got = judge_start(no_uid, allowed=(), own=False, process=ProcessPolicy(run_as_user=1))
    assert got[0] == "error" and "suid" in got[1]


@pytest.mark.parametrize(
    ("change", "process", "detail"),
    [
        ({"euid": 0}, {"run_as_user": "nobody"}, "uid/euid/suid 65534/0/65534"),
        ({"suid": 0}, {"run_as_user": 65534}, "uid/euid/suid 65534/65534/0"),
        ({"egid": 0}, {"run_as_group": 65534}, "gid/egid/sgid 65534/0/65534"),
        ({"groups": "65534,42"}, {"run_as_group": 65534}, "supplementary groups 42"),
    ],
)
def test_every_id_the_workload_holds_is_held_to_the_policy(
    change: dict[str, Any], process: dict[str, Any], detail: str
) -> None:
    """The effective and saved ids, and supplementary groups, count as much as the real
    ones: a workload in the shadow group reads /etc/shadow whatever its gid."""
    from harness.policy.models import ProcessPolicy

    got = judge_start({**START, **change}, allowed=(), own=False, process=ProcessPolicy(**process))
    assert got[0] == "escaped" and detail in got[1], got


def test_what_the_policy_grants_read_is_no_exposure() -> None:
    """A co-located sandbox shows the host's /usr and /etc because its policy grants
    them; /var, which it does not, is still an exposure."""
    mounts = [
        ["254:0", "ext4", "/usr", "/usr"],
        ["254:0", "ext4", "/etc", "/etc"],
        ["254:0", "ext4", "/var", "/var"],
    ]
    grants = {"host": ["/w/fs/allowed", "/usr", "/etc"]}
    found = exposures(mounts, host_fs={"mounts": HOST_MOUNTS}, grants=grants, shared=True)
    assert found == ["/var (ext4 254:0, root /var)"]


@pytest.mark.parametrize(
    ("reach", "exposed"),
    [
        ("", []),  # visible, not readable: Landlock on the host's own view
        ("passwd", ["/etc (ext4 254:0, root /etc, read 'passwd' there)"]),
        (".", ["/etc (ext4 254:0, root /etc, read '.' there)"]),  # listed, empty
        ("(file)", ["/etc (ext4 254:0, root /etc, read '(file)' there)"]),
        ("?", ["/etc (ext4 254:0, root /etc)"]),  # not tried: counts as readable
    ],
)
def test_a_host_mount_counts_only_if_it_can_be_read(reach: str, exposed: list[str]) -> None:
    """What the probe could read at a mount point decides: a visible but unreadable host
    mount is no escape; one it read from is, shown by what was read."""
    mounts = [["254:0", "ext4", "/etc", "/etc", reach]]
    assert exposures(mounts, host_fs={"mounts": HOST_MOUNTS}, grants={}, shared=True) == exposed
    own = [["0:41", "9p", "/host", "/", reach]]
    found = exposures(own, host_fs={"mounts": HOST_MOUNTS}, grants={}, shared=False)
    assert bool(found) == bool(exposed)


def test_unreadable_mounts_are_named_in_the_blocked_detail() -> None:
    """An enforced verdict says how many host mounts were visible but not readable."""
    evidence = {
        "boot_id": BOOT,
        "mounts": [["254:0", "ext4", "/", "/", ""], ["0:99", "tmpfs", "/tmp", "/", "."]],
    }
    outcome, detail = judge_mounts(evidence, HOST_SIDE, "6.1")
    assert outcome == "blocked"
    assert "(1 host mounts visible but not readable)" in detail
    bad = {**evidence, "mounts": [["254:0", "ext4", "/", "/", 5]]}
    assert judge_mounts(bad, HOST_SIDE, "6.1")[0] == "error"


def test_an_unreadable_mount_first_does_not_hide_a_readable_one() -> None:
    """Every mount is weighed, whatever comes before it in the table."""
    mounts = [["254:0", "ext4", "/srv", "/srv", ""], ["254:0", "ext4", "/etc", "/etc", "passwd"]]
    found = exposures(mounts, host_fs={"mounts": HOST_MOUNTS}, grants={}, shared=True)
    assert found == ["/etc (ext4 254:0, root /etc, read 'passwd' there)"]


def test_a_policy_naming_only_the_group_is_held_to_it() -> None:
    """No run_as_user does not skip run_as_group."""
    from harness.policy.models import ProcessPolicy

    got = judge_start(START, allowed=(), own=False, process=ProcessPolicy(run_as_group=0))
    assert got[0] == "escaped" and "run_as_group: 0" in got[1]


def test_a_mount_of_its_own_below_a_granted_folder_is_granted() -> None:
    """A policy granting /var grants the host's /var/tmp on a device of its own: the
    host shows that filesystem within /var (V2). Its root elsewhere is still beyond."""
    host = [*HOST_MOUNTS, ["254:5", "ext4", "/var/tmp", "/"], ["254:6", "xfs", "/data", "/"]]
    mounts = [
        ["254:5", "ext4", "/var/tmp", "/", "x"],
        ["254:5", "ext4", "/deep", "/sub", "x"],
        ["254:6", "xfs", "/data", "/", "x"],
    ]
    found = exposures(mounts, host_fs={"mounts": host}, grants={"host": ["/var"]}, shared=True)
    assert found == ["/data (xfs 254:6, root /, read 'x' there)"]
    narrow = exposures(
        mounts, host_fs={"mounts": host}, grants={"host": ["/var/tmp/sub"]}, shared=True
    )
    assert [f.split(" ")[0] for f in narrow] == ["/var/tmp", "/data"]


def test_a_file_read_below_an_unreadable_mount_point_is_the_proof() -> None:
    """Landlock on "/" (or a 0711 folder): the mount point does not list, but a host
    file below it was read by name; that path is the proof of an exposure (F1, F3)."""
    mounts = [["254:0", "ext4", "/", "/", "root/rv-secret/secret.txt"]]
    found = exposures(mounts, host_fs={"mounts": HOST_MOUNTS}, grants={}, shared=True)
    assert found == ["/ (ext4 254:0, root /, read 'root/rv-secret/secret.txt' there)"]


def test_a_grants_own_filesystem_is_granted_where_the_host_mounts_over_it() -> None:
    """What lies in a granted folder's own filesystem is granted even where the host
    has mounted something else over part of it (a bind that does not carry the host's
    submount shows the folder's own files there); another device's is not."""
    host = [*HOST_MOUNTS, ["254:9", "ext4", "/w/sub", "/"]]
    mounts = [["254:0", "ext4", "/a", "/w/sub", "x"], ["254:1", "ext4", "/b", "/w/sub", "x"]]
    found = exposures(mounts, host_fs={"mounts": host}, grants={"host": ["/w"]}, shared=True)
    assert found == ["/b (ext4 254:1, root /w/sub, read 'x' there)"]


def test_a_grant_below_a_bind_mount_is_where_the_host_shows_it() -> None:
    """A grant below a host bind mount (mount point /w, root /data/long) is that much
    below the mount's root, not the whole root: a sibling is an exposure."""
    host = [*HOST_MOUNTS, ["254:1", "ext4", "/w", "/data/long"], ["254:9", "ext4", "/w/x/s", "/"]]
    mounts = [
        ["254:1", "ext4", "/a", "/data/long/x/s", "x"],
        ["254:1", "ext4", "/b", "/data/long/y", "x"],
    ]
    found = exposures(mounts, host_fs={"mounts": host}, grants={"host": ["/w/x"]}, shared=True)
    assert found == ["/b (ext4 254:1, root /data/long/y, read 'x' there)"]


def _declared(root: str) -> HostEvidence:
    """A sandbox someone else started, its root declared `root` (the exec kind)."""
    grants = {"host": [root], "write": [root], "root": [root]}
    return HostEvidence(host_fs={"boot_id": BOOT, "mounts": HOST_MOUNTS}, grants=grants)


SANDBOX_ROOT = [["254:0", "ext4", "/", "/srv/box/rootfs"]]


def test_a_declared_root_that_is_the_sandboxs_own_is_granted() -> None:
    """The sandbox shows at / the host's /srv/box/rootfs, as declared: no exposure."""
    evidence = {"mounts": SANDBOX_ROOT, "boot_id": BOOT}
    outcome, detail = judge_mounts(evidence, _declared("/srv/box/rootfs"), "6.1")
    assert outcome == CheckOutcome.BLOCKED, detail


@pytest.mark.parametrize("declared", ["/srv", "/srv/box/rootfs/usr", "/srv/other"])
def test_a_declared_root_that_is_not_the_sandboxs_is_an_error(declared: str) -> None:
    """Declared too wide (it would grant every host mount below it), too deep, or
    elsewhere: an error naming both, never a grant."""
    mounts = [*SANDBOX_ROOT, ["254:0", "ext4", "/data", "/srv/hostdata"]]
    outcome, detail = judge_mounts({"mounts": mounts, "boot_id": BOOT}, _declared(declared), "6.1")
    assert outcome == CheckOutcome.ERROR
    assert detail == (
        f"the declared root {declared} is not this sandbox's root: its / is /srv/box/rootfs of"
        f" device 254:0, the host serves {declared} of device 254:0 there"
    )


def test_a_declared_root_with_no_mount_at_slash_is_an_error() -> None:
    mounts = [["254:0", "ext4", "/data", "/srv/hostdata"]]
    outcome, detail = judge_mounts({"mounts": mounts, "boot_id": BOOT}, _declared("/srv"), "6.1")
    assert outcome == CheckOutcome.ERROR and "could not be held to the sandbox's /" in detail


def test_a_declared_root_is_not_checked_in_a_kernel_of_its_own() -> None:
    """A gVisor or VM sandbox's / is the sentry's or the guest's: not comparable."""
    evidence = {"mounts": SANDBOX_ROOT, "boot_id": "00000000-1111-2222-3333-444444444444"}
    outcome, _ = judge_mounts(evidence, _declared("/srv"), "6.1")
    assert outcome == CheckOutcome.BLOCKED


def _undeclared() -> HostEvidence:
    """A sandbox someone else started, no `root` declared (the exec kind without it)."""
    return HostEvidence(
        host_fs={"boot_id": BOOT, "mounts": HOST_MOUNTS}, grants={"host": [], "root": []}
    )


def test_an_undeclared_root_of_the_hosts_is_an_error_not_a_leak() -> None:
    """A container's rootfs folder at / is its own or a leak; only the matrix can say:
    an error asking for `root`, never violated (nor enforced)."""
    evidence = {"mounts": SANDBOX_ROOT, "boot_id": BOOT}
    outcome, detail = judge_mounts(evidence, _undeclared(), "6.1")
    assert outcome == CheckOutcome.ERROR
    assert detail.startswith("the sandbox's / is /srv/box/rootfs of device 254:0 (ext4)")
    assert "declare `root`" in detail


def test_the_hosts_own_root_undeclared_is_still_a_leak() -> None:
    """The host's / itself at the sandbox's /: no declaration could make it its own."""
    evidence = {"mounts": [["254:0", "ext4", "/", "/"]], "boot_id": BOOT}
    outcome, detail = judge_mounts(evidence, _undeclared(), "6.1")
    assert outcome == CheckOutcome.ESCAPED, detail


def test_an_undeclared_root_of_the_sandboxs_own_is_no_question() -> None:
    """A / the host does not serve (a filesystem of the sandbox's own): nothing to ask."""
    evidence = {"mounts": [["0:99", "overlay", "/", "/"]], "boot_id": BOOT}
    outcome, detail = judge_mounts(evidence, _undeclared(), "6.1")
    assert outcome == CheckOutcome.BLOCKED, detail


@pytest.mark.parametrize(
    "mounts",
    [
        [["254:0", "ext4", "/data", "/srv/hostdata", ""]],  # no / in view; /data unreadable
        [["254:0", "ext4", "/", "/srv/box/rootfs", ""]],  # a / it can read nothing of
    ],
)
def test_an_undeclared_root_with_nothing_to_read_is_no_question(mounts: list[list[str]]) -> None:
    outcome, detail = judge_mounts({"mounts": mounts, "boot_id": BOOT}, _undeclared(), "6.1")
    assert outcome == CheckOutcome.BLOCKED, detail


def test_a_loop_device_the_host_mounts_nowhere_is_no_proof_either_way() -> None:
    """A tool image the launcher made and loop-mounted for the sandbox alone (as
    Apptainer or AppImage ship software): its files are a file's content, which may be
    the sandbox's own or a host folder's copy. No escape, an error; a policy granting
    its mount point declares it. A disk the host mounts nowhere is still the host's,
    and a loop device the host mounts is judged as any host mount."""
    image = [["7:0", "ext4", "/opt/tools", "/", "tool.txt"]]
    host_fs = {"mounts": HOST_MOUNTS}
    assert exposures(image, host_fs=host_fs, grants={}, shared=True) == []
    unplaced = unplaced_mounts(image, host_fs=host_fs, grants={})
    assert unplaced == [
        "/opt/tools (ext4 7:0, a loop device the host mounts nowhere: its file may hold a"
        " host folder's image, read 'tool.txt' there)"
    ]
    assert unplaced_mounts(image, host_fs=host_fs, grants={"inside": ["/opt"]}) == []
    disk = [["8:16", "ext4", "/data", "/", "x"]]
    assert exposures(disk, host_fs=host_fs, grants={}, shared=True) == [
        "/data (ext4 8:16, root /, read 'x' there)"
    ]
    # An image first hides nothing after it; a disk is never unplaced, it is exposed.
    both = [*image, *disk]
    assert exposures(both, host_fs=host_fs, grants={}, shared=True) == [
        "/data (ext4 8:16, root /, read 'x' there)"
    ]
    assert unplaced_mounts([*disk, *image], host_fs=host_fs, grants={}) == unplaced
    host_fs = {"mounts": [*HOST_MOUNTS, ["7:0", "squashfs", "/snap/core/1", "/"]]}
    shown = [["7:0", "squashfs", "/snap", "/", "x"]]
    assert exposures(shown, host_fs=host_fs, grants={}, shared=True) == [
        "/snap (squashfs 7:0, root /, read 'x' there)"
    ]
    # The host mounts that loop device (as another kind too): judged as a host mount.
    other_kind = {"mounts": [*HOST_MOUNTS, ["7:0", "ext4", "/mnt/img", "/"]]}
    assert unplaced_mounts(shown, host_fs=other_kind, grants={}) == []
    assert unplaced_mounts(image, host_fs=other_kind, grants={"inside": ["/srv"]}) == []
