"""What a sandbox can reach, judged from what the probe saw inside and what the
host showed of itself (`hostside/hostfs.py`): which mounts expose a host
filesystem beyond the grants, which writes reach beyond the write grants, and what
the descriptors held at start reach (how the workload started is `start.py`'s).

A sandbox shares the host's kernel unless it proves otherwise: a boot id other
than the host's, or, where the sandbox has no boot id (gVisor), another kernel
release. On a shared kernel, device numbers and mount roots mean the same inside
and out; in a sandbox's own kernel (gVisor's sentry, a VM guest) they do not,
and only the kind of filesystem (9p, virtiofs, fuse...) tells a host folder from
a private one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.judge.overlay import ungranted_layers, unplaced_layers
from harness.policy.models import within
from harness.results.records import CheckOutcome, HostEvidence

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# Filesystems through which a sandbox with its own kernel reaches host files (and
# every `fuse.*` type, matched by prefix).
PASSTHROUGH_TYPES = frozenset({"9p", "virtiofs", "nfs", "nfs4", "cifs", "smb3", "overlay"})
# Single device nodes a sandbox may bind from the host's devtmpfs.
STANDARD_DEVICES = frozenset({"/null", "/zero", "/full", "/random", "/urandom", "/tty"})
# cgroup filesystems are the privilege floor's business (release_agent).
CGROUP_TYPES = frozenset({"cgroup", "cgroup2"})
# A loop device's filesystem is a file's content: the launcher's own image, or a host
# folder's copied in; harness cannot tell which (devices.txt: block major 7).
LOOP_MAJOR = "7"


def own_kernel(
    evidence: Mapping[str, Any], host_fs: Mapping[str, Any], host_kernel: str | None
) -> bool:
    """True only when the sandbox proved it runs on a kernel other than the host's:
    a boot id (a UUID, as the kernel writes it) other than the host's, or, with no
    trustworthy boot id, another release."""
    inside, host = str(evidence.get("boot_id") or ""), str(host_fs.get("boot_id") or "")
    if UUID.fullmatch(inside) and UUID.fullmatch(host):
        return inside != host
    release = str(evidence.get("release") or "")
    return bool(release and host_kernel and release != host_kernel)


def _fs_roots(grants: Iterable[str], host_mounts: Sequence[Sequence[str]]) -> list[tuple[str, str]]:
    """Each granted host path as (device, path inside that filesystem)."""
    found = []
    for path in grants:
        best = _serving(path, host_mounts)
        if best is not None:
            rest = path[len(best[2].rstrip("/")) :]
            found.append((best[0], best[3].rstrip("/") + rest or "/"))
    return found


def _serving(path: str, host_mounts: Sequence[Sequence[str]]) -> Sequence[str] | None:
    """The host mount that serves a host path: the longest mount point holding it,
    the later of two at the same point (mounted over)."""
    best: Sequence[str] | None = None
    for mount in host_mounts:
        if within(path, mount[2]) and (best is None or len(mount[2]) >= len(best[2])):
            best = mount
    return best


def _host_paths(dev: str, root: str, host_mounts: Sequence[Sequence[str]]) -> list[str]:
    """Where the host shows a filesystem's `root` of device `dev`: each host mount of
    that device whose root holds it, at its mount point plus the path below, unless
    another host mount hides that path."""
    found = []
    for m in host_mounts:
        if m[0] == dev and within(root, m[3]):
            path = m[2].rstrip("/") + root[len(m[3].rstrip("/")) :] or "/"
            if _serving(path, host_mounts) is m:
                found.append(path)
    return found


def _granted(
    dev: str,
    root: str,
    granted: Sequence[tuple[str, str]],
    grants: Sequence[str],
    host_mounts: Sequence[Sequence[str]],
) -> bool:
    """A sandbox mount is granted if it lies within a grant's own filesystem, or if
    the host shows it within a granted host path (a mount of its own below a grant:
    /var/tmp of its own device, under a policy granting /var)."""
    return any(dev == d and within(root, r) for d, r in granted) or any(
        within(path, g) for path in _host_paths(dev, root, host_mounts) for g in grants
    )


def _reach(mount: Sequence[str]) -> str | None:
    """What the probe could read at a mount point (`fs-mounts`' fifth field): an entry's
    name, "(file)", "" for nothing (visible, not readable) or "?" (not tried); None
    from a probe that did not say."""
    return mount[4] if len(mount) > 4 else None


def _described(mount: Sequence[str], where: str) -> str:
    reach = _reach(mount)
    proof = f", read {reach!r} there" if reach not in (None, "?", "") else ""
    return f"{mount[2]} ({mount[1]} {mount[0]}, {where}{proof})"


def exposures(
    mounts: Sequence[Sequence[str]],
    *,
    host_fs: Mapping[str, Any],
    grants: Mapping[str, Sequence[str]],
    shared: bool,
    readable_only: bool = True,
    overlays: Mapping[str, tuple[str, str]] | None = None,
) -> list[str]:
    """The mounts that expose a host filesystem beyond the grants, described with
    what was read there. A host mount the sandbox can see but not read (Landlock on
    the host's own view) is no exposure, unless `readable_only` is False. An overlay
    of the sandbox's own is one where `overlays` (`overlay.ungranted_layers`) names
    a layer of it the host shows and no grant holds."""
    found = []
    host_mounts: list[list[str]] = host_fs.get("mounts") or []
    beyond = []
    if shared:
        host = {(m[0], m[1]) for m in host_mounts}
        granted = _fs_roots(grants.get("host", ()), host_mounts)
        host_grants = list(grants.get("host", ()))
        for mount in mounts:
            dev, kind, _point, root = mount[:4]
            if kind in CGROUP_TYPES:
                continue
            if (dev, kind) not in host and dev.startswith("0:"):
                layer = (overlays or {}).get(_point) if kind == "overlay" else None
                if layer is not None:
                    where = (
                        f"a layer of it is the host's {layer[0]}: {layer[1]!r} is one file in both"
                    )
                    beyond.append((mount, where))
                continue  # a filesystem of the sandbox's own (a new tmpfs, proc...)
            if kind == "devtmpfs" and root in STANDARD_DEVICES:
                continue
            if _granted(dev, root, granted, host_grants, host_mounts):
                continue
            if dev.split(":")[0] == LOOP_MAJOR and not any(m[0] == dev for m in host_mounts):
                continue  # a file's image the host mounts nowhere: `unplaced_mounts`
            beyond.append((mount, f"root {root}"))
    else:
        inside = set(grants.get("inside", ()))
        for mount in mounts:
            kind, point = mount[1], mount[2]
            if (kind in PASSTHROUGH_TYPES or kind.startswith("fuse")) and point not in inside:
                beyond.append((mount, "a host folder in the sandbox's own kernel"))
    for mount, where in beyond:
        if readable_only and _reach(mount) == "":
            continue
        found.append(_described(mount, where))
    return found


def unplaced_mounts(
    mounts: Sequence[Sequence[str]],
    *,
    host_fs: Mapping[str, Any],
    grants: Mapping[str, Any],
    layers: Mapping[str, str] | None = None,
) -> list[str]:
    """On the host's kernel, the readable mounts of the sandbox's own (a device the
    host does not show) of a kind that passes files through from elsewhere (FUSE,
    NFS, CIFS, 9p, virtiofs), and the overlays with a layer no grant holds
    (`layers`, `overlay.unplaced_layers`): bindfs or sshfs of a host folder, or an
    overlay of it, shows it under a new device, like a tmpfs; and a loop device the
    host mounts nowhere (a file's image). Not its / (its image), nor a mount point a
    grant holds."""
    host_mounts = host_fs.get("mounts") or []
    host = {(m[0], m[1]) for m in host_mounts}
    inside = [g for g in grants.get("inside", ()) if g != "/"]  # "/": its own root
    found = []
    for mount in mounts:
        dev, kind, point = mount[0], mount[1], mount[2]
        if (dev, kind) in host or point == "/":
            continue
        if not dev.startswith("0:"):
            if dev.split(":")[0] != LOOP_MAJOR or any(m[0] == dev for m in host_mounts):
                continue
            where = "a loop device the host mounts nowhere: its file may hold a host folder's image"
        elif kind == "overlay":
            layer = (layers or {}).get(point)
            if layer is None:
                continue
            where = f"its layer {layer} not placed on the host"
        elif (kind in PASSTHROUGH_TYPES or kind.startswith("fuse")) and kind != "fusectl":
            where = "a device the host does not show"
        else:
            continue
        if _reach(mount) == "" or any(within(point, g) for g in inside):
            continue
        found.append(_described(mount, where))
    return found


def root_mismatch(
    declared: str, mounts: Sequence[Sequence[str]], host_mounts: Sequence[Sequence[str]]
) -> str | None:
    """Why a declared root (a sandbox someone else started, `root` in the matrix) is not
    the sandbox's own /, or None if it is: the filesystem and the path in it that the
    sandbox shows at / must be the ones the host serves at `declared`. A root declared
    too wide (`/`, `/tmp`) would otherwise grant every host mount below it."""
    at_root = [m for m in mounts if m[2] == "/"]
    expected = _fs_roots([declared], host_mounts)
    if not at_root or not expected:
        return f"the declared root {declared} could not be held to the sandbox's / (no mount seen)"
    dev, root = at_root[-1][0], at_root[-1][3]
    if (dev, root) != expected[0]:
        return (
            f"the declared root {declared} is not this sandbox's root: its / is {root} of"
            f" device {dev}, the host serves {expected[0][1]} of device {expected[0][0]} there"
        )
    return None


def undeclared_root(
    mounts: Sequence[Sequence[str]], *, host_fs: Mapping[str, Any], grants: Mapping[str, Any]
) -> str | None:
    """Why the / of a sandbox someone else started, with no `root` declared, cannot be
    judged: a host filesystem that is not the host's own root (a container's rootfs
    folder, its snapshot's overlay) is the sandbox's own or a leak, and only the matrix
    can say which. None where there is nothing to tell: its / is no host filesystem,
    nothing of it is readable, or it is the host's own root (a leak, judged as one)."""
    at_root = [m for m in mounts if m[2] == "/"]
    if not at_root:
        return None
    mount = at_root[-1]
    host_mounts = host_fs.get("mounts") or []
    if (mount[0], mount[3]) in _fs_roots(["/"], host_mounts):
        return None
    if not exposures([mount], host_fs=host_fs, grants=grants, shared=True):
        return None  # nothing of it readable: no exposure to ask about
    return (
        f"the sandbox's / is {mount[3]} of device {mount[0]} ({mount[1]}), a host filesystem"
        " harness did not make: declare `root` (where it is on the host) to have it judged as"
        " the sandbox's own"
    )


def judge_mounts(
    evidence: Mapping[str, Any], host: HostEvidence, host_kernel: str | None
) -> tuple[CheckOutcome, str]:
    """(outcome, detail) of the `fs-mounts` check."""
    host_fs = host.host_fs or {}
    mounts = evidence.get("mounts")
    if not isinstance(mounts, list) or not all(
        isinstance(m, list) and len(m) in (4, 5) and all(isinstance(f, str) for f in m)
        for m in mounts
    ):
        return CheckOutcome.ERROR, "the probe reported no mount table"
    if "mounts" not in host_fs:
        return CheckOutcome.ERROR, str(
            host_fs.get("error") or "the host's mount table was not read"
        )
    shared = not own_kernel(evidence, host_fs, host_kernel)
    grants = host.grants or {}
    if shared and "root" in grants:
        declared = grants["root"]
        wrong = (
            root_mismatch(declared[0], mounts, host_fs.get("mounts") or [])
            if declared
            else undeclared_root(mounts, host_fs=host_fs, grants=grants)
        )
        if wrong:
            return CheckOutcome.ERROR, wrong
    overlays = None
    if shared:
        # Unasked (no answer from the host), no layer is confirmed: an overlay with a
        # layer no grant holds is then no proof (`unplaced_mounts`), never granted.
        overlays = ungranted_layers(evidence, host.held_paths, grants.get("host", ()))
    found = exposures(mounts, host_fs=host_fs, grants=grants, shared=shared, overlays=overlays)
    kernel = "the host's kernel" if shared else "its own kernel"
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return (
            CheckOutcome.ESCAPED,
            f"mount {found[0]}{more} exposes a host filesystem beyond the grants",
        )
    if shared:
        layers = unplaced_layers(evidence, grants.get("host", ()))
        unplaced = unplaced_mounts(mounts, host_fs=host_fs, grants=grants, layers=layers)
        if unplaced:
            return CheckOutcome.ERROR, (
                f"mount {unplaced[0]} is a filesystem of the sandbox's own whose files harness"
                " cannot place on the host (it may serve a host folder under a new device): no"
                " proof either way (a policy granting its mount point declares it)"
            )
    visible = exposures(mounts, host_fs=host_fs, grants=grants, shared=shared, readable_only=False)
    # The mount points with their types, for the reports (bounded: the whole table
    # is in the cell record).
    seen = ", ".join(f"{m[2]} {m[1]}" for m in mounts)
    seen = seen if len(seen) <= 300 else seen[:297] + "..."
    why = f"{len(mounts)} mounts ({kernel}), none exposing a host filesystem beyond the grants"
    if visible:
        why += f" ({len(visible)} host mounts visible but not readable)"
    return CheckOutcome.BLOCKED, f"{why}: {seen}"


def _table(evidence: Mapping[str, Any], key: str, width: int) -> list[list[str]] | None:
    """A table of the probe's evidence, each row `width` strings; None if malformed."""
    rows = evidence.get(key)
    if not isinstance(rows, list) or not all(
        isinstance(r, list) and len(r) == width and all(isinstance(f, str) for f in r) for r in rows
    ):
        return None
    return rows


# A write the probe did not make, only found possible (`writereach.c`): no proof.
UNTRIED = "not tried: "


def _beyond_writes(
    writes: Sequence[Sequence[str]],
    *,
    host_fs: Mapping[str, Any],
    grants: Mapping[str, Sequence[str]],
    shared: bool,
) -> list[str]:
    """The writes at places the cell may not change, described."""
    found = []
    host_mounts: list[list[str]] = host_fs.get("mounts") or []
    if shared:
        host = {(m[0], m[1]) for m in host_mounts}
        write_grants = list(grants.get("write", ()))
        granted = _fs_roots(write_grants, host_mounts)
    else:
        inside = set(grants.get("inside_write", ()))
    for dev, kind, point, root, below, how in writes:
        where = point.rstrip("/") + "/" + below if below else point
        if shared:
            if kind in CGROUP_TYPES or ((dev, kind) not in host and dev.startswith("0:")):
                continue  # a filesystem of the sandbox's own (a new tmpfs...)
            target = root.rstrip("/") + "/" + below if below else root
            if _granted(dev, target, granted, write_grants, host_mounts):
                continue
            found.append(f"{how} at {where} ({kind} {dev}, root {target})")
        elif (kind in PASSTHROUGH_TYPES or kind.startswith("fuse")) and point not in inside:
            found.append(f"{how} at {where} ({kind}, a host folder in the sandbox's own kernel)")
    return found


def _links_beyond(
    evidence: Mapping[str, Any], host_fs: Mapping[str, Any], shared: bool
) -> list[str] | None:
    """The files of the write grants that the probe found with more links than it
    counted within them (`linkcount.c`: the kernel's link count, nothing written),
    described; those still to prove (its `how` UNTRIED) keep that prefix. A file on a
    filesystem of the sandbox's own (a new tmpfs) links only to the sandbox's own
    files. None if the probe's table is malformed; [] where it gave none (an older
    probe, which says nothing of `links_cut` either)."""
    if "links" not in evidence and "links_cut" not in evidence:
        return []
    rows = _table(evidence, "links", 6)
    if rows is None or not all(r[3].isdigit() and r[4].isdigit() for r in rows):
        return None
    host = {(m[0], m[1]) for m in host_fs.get("mounts") or []}
    found = []
    for dev, kind, path, links, counted, how in rows:
        if shared and (dev, kind) not in host and dev.startswith("0:"):
            continue  # the sandbox's own filesystem: its other links are its own files
        said = (
            f"{path.lstrip('/')} has {links} links, {counted} within the write grants:"
            " writing it changes a file elsewhere"
        )
        if how.startswith(UNTRIED) or not shared:
            # In a kernel of its own, a link count is that kernel's word for the file.
            why = how if how.startswith(UNTRIED) else f"{UNTRIED}in the sandbox's own kernel"
            said = f"{why} ({said})"
        found.append(said)
    return found


def judge_write_reach(
    evidence: Mapping[str, Any], host: HostEvidence, host_kernel: str | None
) -> tuple[CheckOutcome, str]:
    """(outcome, detail) of the `fs-write-reach` check: each mount's first write,
    held to the cell's write grants (the allowed folder, the cell's rootfs, the
    policy's read_write). A write found possible but not made (an executable file, a
    file on overlayfs, a folder without O_TMPFILE where no named file may be made)
    is no proof: beyond the grants it is an error, never blocked."""
    host_fs = host.host_fs or {}
    writes = _table(evidence, "writes", 6)
    if writes is None:
        return CheckOutcome.ERROR, "the probe reported no table of writes"
    if "mounts" not in host_fs:
        return CheckOutcome.ERROR, str(
            host_fs.get("error") or "the host's mount table was not read"
        )
    shared = not own_kernel(evidence, host_fs, host_kernel)
    beyond = _beyond_writes(writes, host_fs=host_fs, grants=host.grants or {}, shared=shared)
    links = _links_beyond(evidence, host_fs, shared)
    if links is None:
        return CheckOutcome.ERROR, "the probe's table of linked files is malformed"
    found = [b for b in beyond if not b.startswith(UNTRIED)]
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return CheckOutcome.ESCAPED, f"{found[0]}{more}: beyond the write grants"
    linked = [b for b in links if not b.startswith(UNTRIED)]
    if linked:
        more = f" (and {len(linked) - 1} more)" if len(linked) > 1 else ""
        return CheckOutcome.ESCAPED, f"{linked[0]}{more}"
    if beyond:
        return CheckOutcome.ERROR, f"{beyond[0]}: beyond the write grants, and no proof either way"
    if links:
        return CheckOutcome.ERROR, f"{links[0]}, and no proof either way"
    links_cut = evidence.get("links_cut", "")
    if not isinstance(links_cut, str) or links_cut:
        why = links_cut if isinstance(links_cut, str) else "no word on the write grants' links"
        return CheckOutcome.ERROR, f"{why}: a file there may have a link elsewhere"
    cut = evidence.get("writes_cut")
    if not isinstance(cut, int) or cut:
        why = f"{cut} writes not reported (too many to report)" if cut else "no count of writes"
        return CheckOutcome.ERROR, f"{why}, and none of those reported escaped"
    walked, walk_cut = evidence.get("walked"), evidence.get("walk_cut")
    if not isinstance(walked, int) or not isinstance(walk_cut, int):
        return CheckOutcome.ERROR, "the probe did not say how many folders it walked"
    if walk_cut:
        return CheckOutcome.ERROR, (
            f"the walk of the folders the workload can list stopped at its bounds ({walked}"
            f" folders, in {walk_cut} mounts): the rest were not tried (a longer"
            " settings.check_timeout walks further)"
        )
    granted = f", {len(writes)} within the grants" if writes else ""
    return (
        CheckOutcome.BLOCKED,
        f"no write beyond the write grants ({walked} folders walked{granted})",
    )


def _held_fspath(
    dev: str, path: str, point: str, root: str, host_mounts: Sequence[Sequence[str]]
) -> str | None:
    """A held descriptor's path inside its filesystem: below its mount's root where
    the sandbox's table shows the mount, else (a descriptor from outside the sandbox's
    mount namespace) where the host serves the path it names; None when neither."""
    if point:
        if not within(path, point):
            return None
        return root.rstrip("/") + path[len(point.rstrip("/")) :] or "/"
    mount = _serving(path, host_mounts) if path.startswith("/") else None
    if mount is None or mount[0] != dev:
        return None
    return mount[3].rstrip("/") + path[len(mount[2].rstrip("/")) :] or "/"


def _through(label: str) -> str:
    """What a row of `held_files` was reached through, by its label: a descriptor held
    at start ("3", "3/..", "3:fixed 0"), the working folder it started in ("cwd",
    "cwd/..": fs-cwd's rows), or a path it stands in by (fs-proc-1-root's "/proc/1/root",
    fs-proc-fds' "/proc/<pid>/root", "/proc/<pid>/cwd", "/proc/<pid>/fd/N": another
    process's root, working folder and held folders)."""
    if label == "cwd" or label.startswith("cwd/"):
        up = label[3:]
        return "the working folder it started in" + (f" ({up[1:]} up from it)" if up else "")
    if label.startswith("/"):
        return label
    return f"descriptor {label} held at start"


def _path_of(label: str) -> str:
    """The path a row of `held_files` names, by its label (as `_through`)."""
    if label == "cwd" or label.startswith("cwd/") or label.startswith("/"):
        return f"the path of {_through(label)}"
    return f"descriptor {label}'s path"


def judge_held(
    evidence: Mapping[str, Any], host: HostEvidence, host_kernel: str | None
) -> tuple[CheckOutcome, str] | None:
    """The first folder or file held at start (`fs-inherited-fds`' `held_files`, and
    fs-cwd's rows of the working folder and the folders above it, fs-proc-1-root's of
    pid 1's root, fs-proc-fds' of every other visible process's root, working folder
    and held folders) on a
    host filesystem that the workload could read beyond the read grants, or holds open
    for writing or could change the metadata of (`held_changed`) beyond the write
    grants, or the first pty master held of a terminal outside the sandbox, or a
    controlling terminal of a host session TIOCSTI types into (`ctty`): an escape,
    whatever sentinels lie where. None when there is none, or nothing to judge (a
    sandbox's own kernel holds no host descriptor: what it shows are its own)."""
    held = _judge_held_rows(evidence, host, host_kernel)
    if held is not None and held[0] == CheckOutcome.ESCAPED:
        return held
    ctty = _judge_ctty(evidence, host, host_kernel)
    return ctty if ctty is not None and (held is None or ctty[0] == CheckOutcome.ESCAPED) else held


def _judge_ctty(
    evidence: Mapping[str, Any], host: HostEvidence, host_kernel: str | None
) -> tuple[CheckOutcome, str] | None:
    """The workload's controlling terminal (`ctty`, none where it has none), when its
    session is not the sandbox's own: the session's leader outside its PID namespace
    (getsid(0) is 0), or the terminal on a devpts the host mounts or the sandbox does
    not (a new one mounted in the sandbox, bwrap `--dev`'s, is its own). TIOCSTI pushes
    bytes into such a terminal's input, which the host shell then reads as typed
    (CVE-2017-5226): an escape where the kernel allows it (dev.tty.legacy_tiocsti 1, a
    kernel before that switch, or CAP_SYS_ADMIN in the initial user namespace),
    nothing where it refuses it, an error where neither can be told."""
    if "ctty" not in evidence:
        return None
    rows = _table(evidence, "ctty", 8)
    if rows is None or len(rows) != 1:
        return CheckOutcome.ERROR, "the probe's row of its controlling terminal is malformed"
    how, sid, pidns, dev, path, point, legacy, admin = rows[0]
    host_fs = host.host_fs or {}
    if own_kernel(evidence, host_fs, host_kernel):
        return None
    devices = {m[0] for m in host_fs.get("mounts", ())}
    if sid == "0":
        whose = "its session's leader is outside its PID namespace"
    elif dev and "mounts" not in host_fs:
        return CheckOutcome.ERROR, "a controlling terminal, but the host's mount table was not read"
    elif dev and (dev in devices or not point):
        whose = "a host devpts" if dev in devices else "a devpts the sandbox does not mount"
        whose = f"it lies on {whose}"
    elif dev or pidns == "own":
        return None  # its own: a terminal of its own devpts, or a session made inside
    else:
        return CheckOutcome.ERROR, (
            f"a controlling terminal ({how}) in the host's PID namespace that harness cannot place"
        )
    name = f" {path}" if path else ""
    if legacy in ("1", "absent") or admin == "1":
        why = (
            "CAP_SYS_ADMIN"
            if admin == "1"
            else "a kernel without dev.tty.legacy_tiocsti"
            if legacy == "absent"
            else "dev.tty.legacy_tiocsti = 1"
        )
        return CheckOutcome.ESCAPED, (
            f"its controlling terminal{name} is a host session's: TIOCSTI types into it"
            f" ({whose}; {why}; nothing typed)"
        )
    if legacy == "0" and admin == "0":
        return None
    return CheckOutcome.ERROR, (
        f"its controlling terminal{name} is a host session's ({whose}), and whether TIOCSTI"
        f" types into it harness cannot tell (dev.tty.legacy_tiocsti: {legacy or 'unread'})"
    )


def _judge_held_rows(
    evidence: Mapping[str, Any], host: HostEvidence, host_kernel: str | None
) -> tuple[CheckOutcome, str] | None:
    """judge_held's folders, files and pty masters (`held_files`)."""
    if "held_files" not in evidence:
        return None
    rows = _table(evidence, "held_files", 9)
    changes = _table(evidence, "held_changed", 2) if "held_changed" in evidence else []
    host_fs = host.host_fs or {}
    if rows is None or changes is None:
        return CheckOutcome.ERROR, "the probe's table of held files is malformed"
    if not rows:
        return None
    if "mounts" not in host_fs:
        return CheckOutcome.ERROR, "held files, but the host's mount table was not read"
    if own_kernel(evidence, host_fs, host_kernel):
        return None
    mounts: list[list[str]] = host_fs["mounts"]
    devices = {m[0] for m in mounts}
    grants = host.grants or {}
    read, write = list(grants.get("host", ())), list(grants.get("write", ()))
    read_roots, write_roots = _fs_roots(read, mounts), _fs_roots(write, mounts)
    changed = dict(changes)
    unconfirmed = None
    for fd, kind, dev, path, point, root, access, reach, ino in rows:
        if kind == "pty" and (dev in devices or not point):
            # Its terminal (the slave) lies on a devpts the host mounts, or on one the
            # sandbox does not (its own is mounted in it): read by a process outside.
            whose = "a host terminal" if dev in devices else "a terminal outside the sandbox"
            return CheckOutcome.ESCAPED, (
                f"descriptor {fd} held at start holds the master of {whose},"
                f" pts {path.rsplit('/', 1)[-1]}: what it writes there is typed into it"
            )
        if kind == "block" and (reach or access in ("w", "rw")):
            # Whatever filesystem its node is on, a block device is storage: the
            # host's (a sandbox cannot make one of its own).
            return (
                CheckOutcome.ESCAPED,
                f"{reach or 'could write'} the block device {path} through descriptor {fd}"
                " held at start",
            )
        if kind == "pty" or (dev.startswith("0:") and dev not in devices):
            continue  # a filesystem of the sandbox's own (a new tmpfs, its devpts): no device
        # A disk the host has not mounted (the launcher's own mount of it) is still
        # the host's: its files are granted by nothing.
        fspath = _held_fspath(dev, path, point, root, mounts)
        if not point and fspath is not None:
            # From outside the sandbox's namespace, the link is a name only (a file
            # moved, or its mount lazily unmounted, keeps the old one): what is held
            # is where the name leads only if the host finds that very file there.
            if host.held_paths is None or host.held_paths.get(path) == "":
                # Unasked, or nothing there now (removed since, as a launcher may at
                # its exit): where it lay is unproven, granted by its name alone.
                unconfirmed = unconfirmed or (fd, host.held_paths is not None)
            elif host.held_paths.get(path) != f"{dev} {ino}":
                fspath = None
        what = {"dir": "folder", "block": "block device"}.get(kind, "file") + f" {path}"
        if reach and (fspath is None or not _granted(dev, fspath, read_roots, read, mounts)):
            return CheckOutcome.ESCAPED, f"{reach} the {what} through {_through(fd)}"
        ways = changed.get(fd)
        if (access in ("w", "rw") or ways) and (
            fspath is None or not _granted(dev, fspath, write_roots, write, mounts)
        ):
            if access not in ("w", "rw"):
                return CheckOutcome.ESCAPED, (
                    f"the {what} can be changed through {_through(fd)}"
                    f" ({ways}, each set to what it was)"
                )
            return CheckOutcome.ESCAPED, f"the {what} can be written through {_through(fd)}"
    if unconfirmed is not None:
        fd, asked = unconfirmed
        if not asked:
            return CheckOutcome.ERROR, f"the host was not asked what {_path_of(fd)} names"
        return CheckOutcome.ERROR, (
            f"the host finds nothing at {_path_of(fd)} now (moved or removed since):"
            " no proof where it lay"
        )
    return None
