"""An overlay of the sandbox's own judged by its layers (harness/judge/overlay.py and
`fs-mounts` in harness/judge/reach.py): a layer counts as a host folder only where
the host shows one of the files the sandbox saw, with the same inode."""

from __future__ import annotations

from typing import Any

import pytest

from harness.judge.overlay import MAX_LAYER_PATHS, layer_paths, layers, ungranted_layers
from harness.judge.reach import judge_mounts
from harness.results.records import HostEvidence

BOOT = "5386c38b-773f-4cb0-8ee0-a6337cb8d671"
HOST_MOUNTS = [["254:0", "ext4", "/", "/"], ["0:23", "tmpfs", "/dev/shm", "/"]]
GRANTS = {"host": ["/usr", "/w/allowed"], "write": ["/w/allowed"]}
OPTIONS = "rw,lowerdir=/var/log,upperdir=/mnt/u,workdir=/mnt/w,uuid=on"
# The sandbox's view: its own tmpfs root, the overlay bound at /logs.
MOUNTS = [
    ["0:45", "tmpfs", "/", "/newroot", "tmp"],
    ["0:41", "overlay", "/logs", "/", "dpkg.log"],
]
OVERLAY = ["/logs", OPTIONS, "dpkg.log", "403217", "apt/history.log", "403214"]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (OPTIONS, ["/var/log", "/mnt/u"]),
        ("ro,lowerdir=/a:/b\\:c::/data,xino=on", ["/a", "/b:c", "/data"]),
        ("rw,lowerdir+=/a,lowerdir+=/b\\054c,datadir+=/d,upperdir=/u", ["/a", "/b,c", "/d", "/u"]),
        ("rw,lowerdir=/lo\\134\\054x:/lo\\134:y", ["/lo,x", "/lo:y"]),
        ("rw,lowerdir=relative:/abs", ["relative", "/abs"]),
        ("rw", []),
    ],
)
def test_layers_are_read_from_the_super_options(options: str, expected: list[str]) -> None:
    """lowerdir's colon list ("\\:" a colon in a name, "::" before data-only layers),
    each lowerdir+ and datadir+ ("\\054" a comma), upperdir; never workdir. The
    mounter's own backslashes are kept in the options, as mountinfo's \\134."""
    assert layers(options) == expected


def test_the_host_is_asked_about_each_layer_and_name_not_the_sandboxs_root() -> None:
    root = ["/", "rw,lowerdir=/var/lib/img/1,upperdir=/var/lib/img/up", "bin", "7"]
    paths = layer_paths({"overlays": [OVERLAY, root, ["/odd", OPTIONS, "x", "not-a-number"]]})
    assert paths == [
        "/var/log/dpkg.log",
        "/var/log/apt/history.log",
        "/mnt/u/dpkg.log",
        "/mnt/u/apt/history.log",
    ]


def test_malformed_rows_are_passed_over_and_the_rest_kept() -> None:
    """A row of odd width, too short, not a list, or with a field not a string asks
    nothing; the rows after it are still asked about (and the sandbox's / never)."""
    root = ["/", "rw,lowerdir=/var/lib/img/1", "bin", "7"]
    bad: list[Any] = [["/a", OPTIONS, "x"], ["/a"], "row", ["/a", OPTIONS, "x", 7]]
    assert layer_paths({"overlays": [*bad, root, OVERLAY]}) == layer_paths({"overlays": [OVERLAY]})
    seen = {"/var/log/dpkg.log": "254:0 403217", "/var/lib/img/1/bin": "254:0 7"}
    assert ungranted_layers({"overlays": [*bad, root, OVERLAY]}, seen, []) == {
        "/logs": ("/var/log", "dpkg.log")
    }


def test_the_host_is_asked_about_a_bounded_number_of_paths() -> None:
    rows = [
        [f"/p{i}", f"lowerdir=/l{i}", *[x for n in range(16) for x in (f"n{n}", "1")]]
        for i in range(13)
    ]
    paths = layer_paths({"overlays": rows})
    assert len(paths) == MAX_LAYER_PATHS == 192
    assert paths[0] == "/l0/n0"


def test_a_granted_layer_does_not_hide_the_next() -> None:
    """lowerdir=/usr/share/doc:/var/log: the first layer granted, the second the host's
    logs."""
    row = ["/logs", "rw,lowerdir=/usr/share/doc:/var/log", "dpkg.log", "403217"]
    seen = {"/usr/share/doc/dpkg.log": "", "/var/log/dpkg.log": "254:0 403217"}
    assert ungranted_layers({"overlays": [row]}, seen, ["/usr"]) == {
        "/logs": ("/var/log", "dpkg.log")
    }


def test_a_layer_counts_only_where_the_host_shows_the_same_inode() -> None:
    evidence = {"overlays": [OVERLAY]}
    same = {"/var/log/dpkg.log": "254:0 403217", "/mnt/u/dpkg.log": ""}
    assert ungranted_layers(evidence, same, GRANTS["host"]) == {"/logs": ("/var/log", "dpkg.log")}
    # Another file of that name (another inode), or nothing: not that folder.
    assert ungranted_layers(evidence, {"/var/log/dpkg.log": "254:0 9"}, GRANTS["host"]) == {}
    assert ungranted_layers(evidence, {}, GRANTS["host"]) == {}
    # xino's layer index in the high bits is no other inode; a low bit is.
    for bits in (1 << 40, 1 << 32):
        high = {"/var/log/apt/history.log": f"254:0 {403214 + bits}"}
        assert ungranted_layers(evidence, high, GRANTS["host"])["/logs"][0] == "/var/log"
    low = {"/var/log/apt/history.log": f"254:0 {403214 ^ 1}"}
    assert ungranted_layers(evidence, low, GRANTS["host"]) == {}
    assert ungranted_layers(evidence, {"/var/log/dpkg.log": "254:0"}, GRANTS["host"]) == {}
    # A granted layer is no exposure.
    assert ungranted_layers(evidence, same, ["/var"]) == {}


def judged(overlays: Any, held_paths: dict[str, str] | None) -> tuple[str, str]:
    evidence = {"boot_id": BOOT, "mounts": MOUNTS, "overlays": overlays}
    host = HostEvidence(
        host_fs={"boot_id": BOOT, "mounts": HOST_MOUNTS}, grants=GRANTS, held_paths=held_paths
    )
    return judge_mounts(evidence, host, "6.1")


def test_an_overlay_of_a_host_folder_is_an_exposure() -> None:
    outcome, detail = judged([OVERLAY], {"/var/log/dpkg.log": "254:0 403217"})
    assert outcome == "escaped"
    assert detail == (
        "mount /logs (overlay 0:41, a layer of it is the host's /var/log: 'dpkg.log' is one"
        " file in both, read 'dpkg.log' there) exposes a host filesystem beyond the grants"
    )


def test_an_overlay_of_granted_folders_is_not() -> None:
    granted = ["/logs", "rw,lowerdir=/usr/share/doc:/usr/share/man", "README", "12"]
    assert judged([granted], {"/usr/share/doc/README": "254:0 12"})[0] == "blocked"
    assert judged([], None)[0] == "blocked"


@pytest.mark.parametrize(
    ("options", "layer"),
    [
        # Its layers nowhere on the host: the mounter's own tmpfs, or a host folder by
        # another name (a private bind of it, a relative path, a descriptor).
        (OPTIONS, "/var/log"),
        ("rw,lowerdir=/mnt/b,upperdir=/mnt/u,workdir=/mnt/w", "/mnt/b"),
        ("rw,lowerdir=log,upperdir=/mnt/u,workdir=/mnt/w", "log"),
        ("rw,lowerdir=/proc/self/fd/3", "/proc/self/fd/3"),
        # A granted layer, and decoys in an upper layer of its own.
        ("rw,lowerdir=/usr/share/doc,upperdir=/mnt/u,workdir=/mnt/w", "/mnt/u"),
    ],
)
def test_an_overlay_with_a_layer_no_grant_holds_is_no_proof(options: str, layer: str) -> None:
    """Unconfirmed, a layer no grant holds may still be a host folder: its name is the
    mounter's word, and the files the probe saw may be decoys of a layer of its own
    listed before the host's. An error, unless its mount point is granted or nothing
    of it is readable."""
    row = ["/logs", options, "a1", "5"]
    outcome, detail = judged([row], {})
    assert outcome == "error"
    assert detail.startswith(f"mount /logs (overlay 0:41, its layer {layer} not placed on the host")
    evidence = {"boot_id": BOOT, "mounts": MOUNTS, "overlays": [row]}
    mounts = {"boot_id": BOOT, "mounts": HOST_MOUNTS}
    declared = {**GRANTS, "inside": ["/", "/logs"]}
    host = HostEvidence(host_fs=mounts, grants=declared, held_paths={})
    assert judge_mounts(evidence, host, "6.1")[0] == "blocked"
    unread = {**evidence, "mounts": [MOUNTS[0], [*MOUNTS[1][:4], ""]]}
    host = HostEvidence(host_fs=mounts, grants=GRANTS, held_paths={})
    assert judge_mounts(unread, host, "6.1")[0] == "blocked"


def _fuse(kind: str, point: str = "/data", reach: str = "notes.txt", **kw: Any) -> tuple[str, str]:
    """A sandbox with a mount of `kind` at `point`, after its tmpfs root, a tmpfs of its
    own and an unreadable FUSE mount, all of which are no matter."""
    before = [["0:48", "tmpfs", "/run", "/", "x"], ["0:49", "fuse.sshfs", "/mnt", "/", ""]]
    mounts = [*MOUNTS[:1], *before, ["0:50", kind, point, "/", reach]]
    grants = {**GRANTS, "inside": kw.get("inside", ["/", "/workspace"])}
    evidence = {"boot_id": kw.get("boot", BOOT), "mounts": mounts, "overlays": []}
    host_mounts = HOST_MOUNTS + kw.get("host_mounts", [])
    grants["host"] = grants["host"] + kw.get("host_grants", [])
    host = HostEvidence(host_fs={"boot_id": BOOT, "mounts": host_mounts}, grants=grants)
    return judge_mounts(evidence, host, "6.1")


@pytest.mark.parametrize("kind", ["fuse.bindfs", "fuse.sshfs", "fuseblk", "nfs4", "cifs", "9p"])
def test_a_fuse_or_network_mount_of_its_own_cannot_be_placed(kind: str) -> None:
    """bindfs of a host folder shows it under a device the host does not show, like a
    tmpfs: on the host's kernel, no proof either way, unless a grant declares it."""
    outcome, detail = _fuse(kind)
    assert outcome == "error"
    assert detail.startswith(f"mount /data ({kind} 0:50, a device the host does not show, read")
    assert "whose files harness cannot place on the host" in detail
    assert _fuse(kind, inside=["/", "/workspace", "/data"])[0] == "blocked"
    # The host's own mount of it (the same device in its table), granted: judged as one.
    host_mount = [["0:50", kind, "/srv/data", "/"]]
    assert _fuse(kind, host_mounts=host_mount, host_grants=["/srv/data"])[0] == "blocked"
    assert _fuse(kind, reach="")[0] == "blocked"  # nothing of it readable
    assert _fuse(kind, point="/")[0] == "blocked"  # its image
    assert _fuse(kind, boot=BOOT.replace("5", "6"))[0] == "escaped"  # its own kernel: a host folder


def test_the_fuse_control_filesystem_and_tmpfs_are_its_own() -> None:
    assert _fuse("fusectl")[0] == "blocked"
    assert _fuse("tmpfs")[0] == "blocked"


def test_an_overlay_the_host_was_not_asked_about_is_no_pass() -> None:
    """Unless every layer is granted: then there is nothing to ask."""
    granted = ["/logs", "rw,lowerdir=/usr/share/doc", "README", "12"]
    assert judged([granted], None)[0] == "blocked"
    outcome, detail = judged([OVERLAY], None)
    assert outcome == "error"
    assert detail.startswith("mount /logs (overlay 0:41, its layer /var/log not placed on the host")


def test_the_sandboxs_own_root_overlay_is_its_image_and_the_next_one_still_judged() -> None:
    """An overlay at / (an image's layers, which no grant names) is the sandbox's own;
    an overlay of granted folders is no matter; the one after each is still judged."""
    root = ["/", "rw,lowerdir=/var/lib/img/1,upperdir=/var/lib/img/up", "bin", "7"]
    granted = ["/docs", "rw,lowerdir=/usr/share/doc", "README", "12"]
    mounts = [
        ["0:40", "overlay", "/", "/", "bin"],
        ["0:42", "overlay", "/docs", "/", "README"],
        *MOUNTS[1:],
        ["0:50", "fuse.sshfs", "/data", "/", "notes.txt"],
    ]
    evidence = {"boot_id": BOOT, "mounts": mounts, "overlays": [root, granted, OVERLAY]}
    host = HostEvidence(
        host_fs={"boot_id": BOOT, "mounts": HOST_MOUNTS}, grants=GRANTS, held_paths={}
    )
    outcome, detail = judge_mounts(evidence, host, "6.1")
    assert outcome == "error"
    assert detail.startswith("mount /logs (overlay 0:41, its layer /var/log not placed")
    without = {**evidence, "overlays": [root, granted]}
    assert judge_mounts(without, host, "6.1")[1].startswith("mount /data (fuse.sshfs 0:50")
