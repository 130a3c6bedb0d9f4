"""The host's own view, read once per host: its kernel's boot id, its mount table,
where its runtimes' policy paths really lead, and a bounded list of its files and
folders. `judge/reach.py` compares what the sandbox sees with it, to tell a shared
kernel from a sandbox's own and a host filesystem from a private one; the probe
tries the listed files below a mount point it cannot read (`--reach-targets`)."""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import anyio

from harness.hostside.base import CellSetup, Fixture, HostSetup
from harness.hostside.helpers import HelpersFixture
from harness.judge.overlay import layer_paths
from harness.policy.models import within
from harness.transport import Transport

if TYPE_CHECKING:
    from harness.hostside.envelope import Report
    from harness.probe.protocol import ProbeOutput
    from harness.runtimes import CellPaths, Runtime

log = logging.getLogger(__name__)

TIMEOUT = 30.0
MAX_BYTES = 1 << 20

# No arguments. The boot id, a separator, the mount table as the kernel wrote it, a
# separator, the host's block devices (/sys/class/block: each a name in /dev), a
# separator, then its file locks (/proc/locks: the leases among them).
SCRIPT = r"""cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo
echo --
cat /proc/self/mountinfo
echo --
ls /sys/class/block 2>/dev/null
echo --
cat /proc/locks 2>/dev/null
"""
# A lease in /proc/locks: "1: LEASE  ACTIVE    READ 1234 fd:00:5678 0 EOF" (nfsd's
# delegations say DELEG), its device in hex.
LEASE = re.compile(r"^\d+: (?:LEASE|DELEG) .*? ([0-9a-f]+):([0-9a-f]+):(\d+) ", re.MULTILINE)


def leased_files(locks: str) -> list[str]:
    """The files the host's processes hold a lease on, as "MAJ:MIN:INO" (decimal):
    the probe never truncates one (truncate(2) breaks a lease before any access
    check, and waits up to lease-break-time for its holder)."""
    return [f"{int(a, 16)}:{int(b, 16)}:{ino}" for a, b, ino in LEASE.findall(locks)]


# Filesystems that hold no host files worth a target (devtmpfs: devices are never
# opened; cgroups are the privilege floor's business).
PSEUDO_TYPES = frozenset(
    {
        "proc", "sysfs", "cgroup", "cgroup2", "devpts", "devtmpfs", "mqueue", "debugfs",
        "tracefs", "securityfs", "pstore", "bpf", "configfs", "fusectl", "hugetlbfs",
        "autofs", "binfmt_misc", "nsfs", "efivarfs", "selinuxfs", "rpc_pipefs",
    }
)  # fmt: skip
# The targets' bounds: entries taken per folder at each level below a mount point
# (the first ones find gives; fewer deeper down, so that the third level is reached),
# entries in all, and bytes of the probe's option (an argv element may be at most
# 128 KiB).
TARGETS_PER_DIR = (32, 16, 8)
MAX_TARGETS = 1000
MAX_TARGET_BYTES = 96 * 1024

# $1: entries per folder, then the folders. One level below each, on its own
# filesystem: "d PATH" for a folder, "f PATH" for a regular file, nothing else.
LIST_SCRIPT = r"""k=$1; shift
for d; do
  find "$d" -xdev -mindepth 1 -maxdepth 1 \( -type d -exec printf 'd %s\n' {} + \) -o \
    \( -type f -exec printf 'f %s\n' {} + \) 2>/dev/null | head -n "$k"
done
"""
# Each argument's device (decimal) and inode, a line each; "-" where there is none.
IDENTIFY_SCRIPT = r"""for p; do stat -c '%d %i' -- "$p" 2>/dev/null || echo -; done
"""
MAX_HELD_PATHS = 64
# Each argument's real path (readlink -f), NUL-terminated; empty when it has none.
RESOLVE_SCRIPT = r"""for p; do readlink -f -- "$p" 2>/dev/null | tr -d '\n'; printf '\0'; done
"""


# Every folder of the host's own filesystems, for the write reach's list pass
# (`--write-dirs`): built at most once an hour for one mount table, in the helpers'
# folder (which every sandbox may read), replaced atomically; lists older than two
# hours are removed. $1: the list's path; $2: the most folders; then (device, root,
# mount point) triples. Each line "MAJ:MIN PATH-INSIDE-THE-FILESYSTEM"; "# cut" last
# when the host had more.
DIRS_SCRIPT = r"""out=$1 max=$2; shift 2
find "${out%/*}" -maxdepth 1 -name 'host-dirs-*' -mmin +120 -delete 2>/dev/null
[ -n "$(find "$out" -maxdepth 0 -mmin -60 2>/dev/null)" ] && exit 0
tmp="$out.$$"
while [ $# -ge 3 ]; do
  dev=$1 root=$2 point=$3; shift 3
  find "$point" -xdev -mindepth 1 -type d 2>/dev/null |
    awk -v d="$dev" -v r="$root" -v p="$point" \
      '{ print d " " (r == "/" ? "" : r) substr($0, p == "/" ? 1 : length(p) + 1) }'
done | head -n "$max" > "$tmp" || { rm -f "$tmp"; exit 1; }
[ "$(wc -l < "$tmp")" -lt "$max" ] || echo "# cut" >> "$tmp"
chmod 0644 "$tmp" && mv -f "$tmp" "$out"
"""
MAX_FOLDERS = 300_000
FOLDERS_TIMEOUT = 300.0


def parse_mountinfo(text: str) -> list[list[str]]:
    """Each mount as [dev, type, mount point, root], like the probe's `fs-mounts`."""
    mounts = []
    for line in text.splitlines():
        fields = line.split(" ")
        if "-" not in fields[6:] or len(fields) < 5:
            continue
        sep = fields.index("-", 6)
        if sep + 1 >= len(fields):
            continue
        mounts.append([fields[2], fields[sep + 1], _unescape(fields[4]), _unescape(fields[3])])
    return mounts


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as \\ooo."""
    out, i = [], 0
    while i < len(field):
        octal = field[i + 1 : i + 4]
        if field[i] == "\\" and len(octal) == 3 and all(c in "01234567" for c in octal):
            out.append(chr(int(octal, 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


async def read_host_fs(transport: Transport) -> dict[str, object]:
    """{"boot_id", "mounts"}, or {"error"} when the host's view could not be read."""
    done = await transport.run(["sh", "-c", SCRIPT], timeout=TIMEOUT)
    boot_id, sep, rest = done.stdout[:MAX_BYTES].partition("\n--\n")
    table, _, rest = rest.partition("\n--\n")
    block, _, locks = rest.partition("\n--\n")
    mounts = parse_mountinfo(table)
    if not done.ok or not sep or not mounts:
        return {"error": f"host mount table unreadable (exit {done.exit_status})"}
    names = [n for n in block.split() if n.replace("-", "").replace("_", "").isalnum()]
    return {
        "boot_id": boot_id.strip(),
        "mounts": mounts,
        "block": names,
        "leased": leased_files(locks),
    }


async def resolve_paths(transport: Transport, paths: Iterable[str]) -> dict[str, str]:
    """Each path's real path on the host (its symlinks followed: Debian's /lib is
    /usr/lib), for those that have one."""
    wanted = sorted(set(paths))
    if not wanted:
        return {}
    done = await transport.run(
        ["sh", "-c", RESOLVE_SCRIPT, "harness-resolve", *wanted], timeout=TIMEOUT
    )
    found = done.stdout[:MAX_BYTES].split("\0")
    if not done.ok or len(found) != len(wanted) + 1:
        return {}
    return {p: r for p, r in zip(wanted, found, strict=False) if r.startswith("/")}


def policy_paths(runtimes: Iterable[Runtime]) -> set[str]:
    """Every path the runtimes' policies let their workloads read."""
    return {p for rt in runtimes if rt.spec.policy is not None for p in rt.spec.policy.readable}


def _resolved(paths: Iterable[str], real: Mapping[str, str]) -> list[str]:
    """Each path where it really leads (as bwrap and Landlock resolve it), and as
    written."""
    return list(dict.fromkeys(r for p in paths for r in (real.get(p, p), p)))


def readable_roots(runtime: Runtime, real: Mapping[str, str]) -> list[str]:
    """What the runtime's policy lets the workload read, as host paths."""
    policy = runtime.spec.policy
    return [] if policy is None else _resolved(policy.readable, real)


def _own_mounts(mounts: Sequence[Sequence[str]]) -> list[tuple[str, str, str]]:
    """The host's mounts worth listing, as (device, root, mount point): not a kernel
    filesystem, not a part of one already taken (a bind of a folder of it)."""
    seen: list[tuple[str, str, str]] = []
    for dev, kind, point, root in (m[:4] for m in mounts):
        if kind in PSEUDO_TYPES or any(d == dev and within(root, r) for d, r, _ in seen):
            continue
        seen.append((dev, root, point))
    return seen


async def list_folders(
    transport: Transport, mounts: Sequence[Sequence[str]], folder: str
) -> str | None:
    """The host's list of every folder of its own filesystems, in `folder` (the
    helpers', which every sandbox reads), made or reused: its path, or None when it
    could not be made. Named by the mount table, so that a mount made or gone since
    gets a list of its own."""
    triples = _own_mounts(mounts)
    digest = hashlib.sha256(repr(triples).encode()).hexdigest()[:16]
    path = f"{folder}/host-dirs-{digest}"
    argv = ["sh", "-c", DIRS_SCRIPT, "harness-folders", path, str(MAX_FOLDERS)]
    argv += [x for triple in triples for x in triple]
    done = await transport.run(argv, timeout=FOLDERS_TIMEOUT)
    return path if done.ok else None


async def list_targets(
    transport: Transport, mounts: Sequence[Sequence[str]]
) -> list[tuple[str, str, str]]:
    """Files and folders on the host's own filesystems, as (device, path inside that
    filesystem, host path), at most three levels below each mount point,
    breadth first and taking a few entries of every folder before more of any, so
    that one big folder (or mount) cannot starve the others."""
    points = {m[2] for m in mounts}
    seen = _own_mounts(mounts)
    owner = {point: (dev, root) for dev, root, point in seen}
    level = {point: point for _, _, point in seen}  # folder -> its mount point
    found: list[tuple[str, str, str]] = []
    for per_dir in TARGETS_PER_DIR:
        if not level or len(found) >= MAX_TARGETS:
            break
        done = await transport.run(
            ["sh", "-c", LIST_SCRIPT, "harness-targets", str(per_dir), *level],
            timeout=TIMEOUT,
        )
        rows: dict[str, list[tuple[str, str]]] = {}
        for line in done.stdout[:MAX_BYTES].splitlines():
            kind, _, path = line.partition(" ")
            parent = path.rsplit("/", 1)[0] or "/"
            if kind in ("d", "f") and parent in level and path not in points:
                rows.setdefault(parent, []).append((kind, path))
        # Round robin over the folders: the first entry of each, then the second...
        ordered = [r[i] for i in range(per_dir) for r in rows.values() if i < len(r)]
        nxt: dict[str, str] = {}
        for kind, path in ordered[: MAX_TARGETS - len(found)]:
            point = level[path.rsplit("/", 1)[0] or "/"]
            dev, root = owner[point]
            below = path[len(point.rstrip("/")) :]
            found.append((dev, root.rstrip("/") + below, path))
            if kind == "d":
                nxt[path] = point
        level = nxt
    return found


def named_targets(
    runtimes: Iterable[Runtime],
    mounts: Sequence[Sequence[str]],
    real: Mapping[str, str] | None = None,
) -> list[tuple[str, str, str]]:
    """Every absolute path a command runtime's argv names (`--write /var/lib/x`, a bare
    `/srv/data`), as a target (device, path inside its filesystem, host path), on the
    host mount that serves it: the probe tries each one it finds below a mount point,
    a folder or a regular file, as it tries the listed ones. With `real` (each path's
    real path on the host), where it really leads: a symlink's own path is no target.
    One not there yet stays as named (a launcher makes it at the cell's start)."""
    paths = []
    for rt in runtimes:
        argv = getattr(rt.spec, "argv", None) or []
        for word in argv:
            path = word.partition("=")[2] if word.startswith("--") else word
            if not path.startswith("/") or "{" in path or path == "/":
                continue
            path = os.path.normpath(path)
            paths.append((real or {}).get(path, path))
    return named_targets_of(paths, mounts)


def named_targets_of(
    paths: Iterable[str], mounts: Sequence[Sequence[str]]
) -> list[tuple[str, str, str]]:
    """Each host path as a target (device, path inside its filesystem, host path), on
    the host mount that serves it (the latest mount at the longest point), unless a
    kernel filesystem serves it."""
    found: list[tuple[str, str, str]] = []
    for path in paths:
        best = None
        for m in mounts:
            if within(path, m[2]) and (best is None or len(m[2]) >= len(best[2])):
                best = m
        if best is not None and best[1] not in PSEUDO_TYPES:
            rest = path[len(best[2].rstrip("/")) :]
            found.append((best[0], best[3].rstrip("/") + rest, path))
    return list(dict.fromkeys(found))


# Decoys: an empty file and a folder of harness's own, per runtime, in each folder its
# launcher names beyond its policy's paths. $1 the run's registry of them, $2 their
# name; then the folders. Each is made anew, never through what the last cell left
# there: the file is made by mktemp (O_EXCL, a name nobody can guess) and renamed into
# place (a symlink or a pipe there is replaced, never opened), the folder by mkdir
# (which follows nothing). Every name is in the registry before it is made, so that
# `harness clean` finds it after a controller that died.
DECOY = ".harness-decoy-"
MAX_DECOY_FOLDERS = 16
PLANT_SCRIPT = r"""reg=$1 name=$2; shift 2
umask 077
for d; do
  if [ -L "$d" ] || [ ! -d "$d" ]; then printf 'skipped %s\tno folder there\n' "$d"; continue; fi
  if [ -k "$d" ]; then printf 'skipped %s\tsticky\n' "$d"; continue; fi
  printf '%s\n' "$d/$name" "$d/$name.d" >> "$reg" || exit 1
  rm -rf --one-file-system -- "$d/$name" "$d/$name.d" 2>/dev/null
  tmp=$(mktemp -- "$d/$name.XXXXXX" 2>/dev/null) ||
    { printf 'skipped %s\tno file can be made there\n' "$d"; continue; }
  printf '%s\n' "$tmp" >> "$reg"
  mv -fT -- "$tmp" "$d/$name" 2>/dev/null ||
    { rm -f -- "$tmp"; printf 'skipped %s\tthe file could not be put in place\n' "$d"; continue; }
  (umask 022; mkdir -- "$d/$name.d") 2>/dev/null ||
    { printf 'skipped %s\tno folder can be made there\n' "$d"; continue; }
  printf 'planted %s\n' "$d"
done
exit 0
"""
# $1 the registry, $2 the run id: the decoys it names go, by their own name only; the
# registry goes once they all have (else `harness clean` finds it, and them, later).
UNPLANT_SCRIPT = r"""[ -f "$1" ] || exit 0
left=0
while IFS= read -r p; do
  case ${p##*/} in
    .harness-decoy-"$2"-*) rm -rf --one-file-system -- "$p" 2>/dev/null
      if [ -e "$p" ] || [ -L "$p" ]; then left=1; fi;;
  esac
done < "$1"
[ "$left" = 0 ] && rm -f -- "$1"
exit "$left"
"""


def decoy_folders(
    runtime: Runtime, mounts: Sequence[Sequence[str]], real: Mapping[str, str]
) -> list[str]:
    """The host folders a command runtime's argv names beyond its policy's own paths
    and outside what it may write (a Landlock rule on /etc/cron.d, where the policy
    names /etc): where a grant of removal or truncation alone would show on no file
    or folder of the host's own (only files in it, only executables, not listable).
    Only for a launcher that shows the host's paths where they are (no root of its
    own: no `allowed_inside`), never a world-writable sticky folder (/tmp: anyone
    there could race the making); a reference whose argv names only its policy's
    paths gets none."""
    if getattr(runtime.spec, "allowed_inside", None) or runtime.promises_own_kernel:
        # A root of its own (bwrap's binds): argv's paths name places inside it.
        return []
    policy = runtime.spec.policy
    named = [
        path
        for _, _, path in named_targets([runtime], mounts, real)
        if "\n" not in path and "\\" not in path
    ]
    exact = {os.path.normpath(p) for p in policy.readable + policy.writable} if policy else set()
    exact |= {real.get(p, p) for p in exact}
    writable = [real.get(p, p) for p in (policy.writable if policy else [])]
    found = [p for p in named if p not in exact and not any(within(p, w) for w in writable)]
    return list(dict.fromkeys(found))[:MAX_DECOY_FOLDERS]


class HostFsFixture(Fixture):
    """The host's view, read once per host, and what each cell grants the sandbox;
    the list of every folder of the host's, in the helpers' folder, once they are
    staged."""

    stage = 1

    def __init__(self, helpers: HelpersFixture | None = None) -> None:
        self.view: dict[str, object] | None = None
        self.real: dict[str, str] = {}
        self.targets: list[tuple[str, str, str]] = []
        self.workdir = ""
        self.transport: Transport | None = None
        self.helpers = helpers
        self.folders = ""  # the list's name in the helpers' folder; "" when none
        self.registry = ""  # the run's registry of decoys on the host
        self.decoys: dict[str, tuple[str, list[str]]] = {}  # runtime: (name, folders)
        self.planted: dict[str, list[str]] = {}  # runtime: decoys as "MAJ:MIN FSPATH"
        self.outcome: dict[str, dict[str, list[str]]] = {}  # runtime: folders planted, skipped

    def waits_for(self, earlier: Sequence[Fixture]) -> Sequence[Fixture]:
        return [f for f in earlier if f is self.helpers]

    async def start(self, host: HostSetup) -> None:
        self.view = await read_host_fs(host.transport)
        self.transport = host.transport
        self.workdir = host.state.workdir
        self.real = await resolve_paths(host.transport, policy_paths(host.runtimes))
        mounts = self.view.get("mounts")
        if isinstance(mounts, list):
            self.targets = await list_targets(host.transport, mounts)
            # What a launcher names is where its grants lie: a folder it made just now
            # (after the list of folders), a file deep below folders nobody can list;
            # each where it really leads (Debian's /bin is /usr/bin), if it is there.
            named = named_targets(host.runtimes, mounts)
            real = await resolve_paths(host.transport, [path for _, _, path in named])
            self.targets += named_targets(host.runtimes, mounts, real)
            self.registry = f"{self.workdir}/runs/{host.run_id}.decoys"
            for i, rt in enumerate(host.runtimes):
                folders = decoy_folders(rt, mounts, real) if not rt.promises_own_kernel else []
                if folders:
                    self.decoys[rt.name] = (f"{DECOY}{host.run_id}-{i}", folders)
            async with anyio.create_task_group() as tg:  # one round trip's time, not one each
                for name in self.decoys:
                    tg.start_soon(self._plant, name)
            staged = self.helpers.helpers if self.helpers is not None else None
            if (
                staged is not None
                and staged.folder
                and not all(rt.promises_own_kernel for rt in host.runtimes)
            ):
                made = await list_folders(host.transport, mounts, staged.folder)
                self.folders = made.rsplit("/", 1)[1] if made else ""

    async def _plant(self, runtime: str) -> None:
        """Make a runtime's decoys (again), and note where they stand for the probe."""
        name, folders = self.decoys[runtime]
        mounts = self.view.get("mounts") if self.view else None
        if self.transport is None or not isinstance(mounts, list):
            return
        argv = ["sh", "-c", PLANT_SCRIPT, "harness-decoys", self.registry, name, *folders]
        done = await self.transport.run(argv, timeout=TIMEOUT)
        planted = [ln[8:] for ln in done.stdout.splitlines() if ln.startswith("planted ")]
        skipped = [ln[8:].replace("\t", ": ", 1) for ln in done.stdout.splitlines()
                   if ln.startswith("skipped ")]  # fmt: skip
        self.outcome[runtime] = {"planted": planted, "skipped": skipped}
        found = []
        for folder in planted:
            for dev, fspath, _ in named_targets_of(
                [f"{folder}/{name}", f"{folder}/{name}.d"], mounts
            ):
                found.append(f"{dev} {fspath}")
        self.planted[runtime] = found

    async def stop(self) -> None:
        if self.transport is not None and self.registry and self.decoys:
            run_id = self.registry.rsplit("/", 1)[1].removesuffix(".decoys")
            argv = ["sh", "-c", UNPLANT_SCRIPT, "harness-decoys", self.registry, run_id]
            done = await self.transport.run(argv, timeout=TIMEOUT)
            if not done.ok:
                log.warning(
                    "%s: decoys not all removed; `harness clean` removes them once this"
                    " run's lease is over",
                    self.transport.host,
                )

    def probe_args(self, cell: CellSetup) -> Sequence[str]:
        """The host's files the cell does not grant, for the probe to try below a
        mount point it cannot read (`--reach-targets`), and those it may not change,
        for its write reach (`--write-targets`: read-only grants included); the mount
        points it may write, as the sandbox sees them, not to be tried
        (`--write-skip`); and for the host control, no named file made on the host's
        own folders (`--write-named 0`). Harness's own cell fixtures (the work
        folder's fs/) are left out: made after the list, they are fs-routes' and the
        write checks' business."""
        if self.view is None:
            return ()
        given = grants(cell.runtime, cell.paths, self.real)
        block = self.view.get("block")
        devices = (
            ["--block-devs", "\n".join(f"/dev/{n}" for n in block)]
            if isinstance(block, list) and block
            else []
        )
        leased = self.view.get("leased")
        if isinstance(leased, list) and leased:
            devices += ["--leased", "\n".join(leased[:256])]
        # The write grants as the sandbox sees them, and where the host's lead (the
        # probe skips a folder by its identity: a grant named through a symlink).
        skip = dict.fromkeys([*given["inside_write"], *given["write"]])
        args = ["--write-skip", "\n".join(skip), *devices]
        if own := link_grants(cell.runtime):
            args += ["--link-grants", "\n".join(own)]
        if cell.runtime.kind == "host":
            args += ["--write-named", "0"]
        if self.planted.get(cell.runtime.name):
            args += ["--decoys", "\n".join(self.planted[cell.runtime.name])]
        if cell.runtime.promises_own_kernel:
            # In a kernel of its own (gVisor, a VM) device numbers are not the host's:
            # a target could match one by chance and prove nothing.
            return args
        fixtures = f"{self.workdir}/fs"
        if self.folders and cell.paths.helpers:
            inside = cell.runtime.inside(cell.paths.helpers, role="helpers", cell_id=cell.cell_id)
            args += ["--write-dirs", f"{inside}/{self.folders}"]
        return [
            "--reach-targets",
            self._outside([*given["host"], fixtures]),
            "--write-targets",
            self._outside([*given["write"], fixtures]),
            *args,
        ]

    def _outside(self, granted: Sequence[str]) -> str:
        """The listed targets outside `granted`, as the probe's option (bounded)."""
        lines, size = [], 0
        for dev, fspath, path in self.targets:
            if any(within(path, g) for g in granted):
                continue
            line = f"{dev} {fspath}"
            size += len(line.encode()) + 1
            if size > MAX_TARGET_BYTES:
                break
            lines.append(line)
        return "\n".join(lines)

    async def collect(self, cell: CellSetup, report: Report | None, output: ProbeOutput) -> None:
        if self.view is not None:
            cell.evidence["host_fs"] = self.view
            cell.evidence["grants"] = grants(cell.runtime, cell.paths, self.real)
        if cell.runtime.name in self.outcome:  # what the probe's decoys stood for, or why not
            cell.evidence["decoys"] = self.outcome[cell.runtime.name]
        if self.view is not None and self.transport is not None:
            await remove_leftovers(self.transport, self.view, output, cell.cell_id)
        if cell.runtime.name in self.decoys:
            await self._plant(cell.runtime.name)  # for its next cell: a rerun
        named = held_outside(output) + overlay_layers(output)
        if named and self.transport is not None:
            # Unanswered, no path is confirmed: the judge then errs, never grants, and
            # never calls a granted descriptor an escape for want of an answer.
            seen = await identify(self.transport, named)
            if seen is not None:
                cell.evidence["held_paths"] = seen


# The checks whose `held_files` rows the judge places against the grants: the
# descriptors held at start, the working folder it started in (fs-cwd's "cwd" rows),
# pid 1's root (fs-proc-1-root's "/proc/1/root" rows), and other processes' roots,
# working folders and held folders (fs-proc-fds' "/proc/<pid>/cwd" rows).
HELD_ROWS = ("fs-inherited-fds", "fs-cwd", "fs-proc-1-root", "fs-proc-fds")


def held_outside(output: ProbeOutput) -> list[str]:
    """The paths that descriptors held at start (and the working folder) from outside
    the sandbox's mount namespace name (their /proc/self/fd link: a name only, which a
    lazily unmounted or moved file no longer matches), for the host to say what is
    there."""
    found: list[str] = []
    for check in output.checks:
        rows = check.evidence.get("held_files") if check.id in HELD_ROWS else None
        for row in rows if isinstance(rows, list) else []:
            if (
                len(row) == 9
                and row[1] != "pty"  # placed by its device: its path names nothing to ask
                and not row[4]
                and row[3].startswith("/")
                and row[3] not in found
            ):
                found.append(row[3])
    return found[:MAX_HELD_PATHS]


# Each argument a host path to remove if it is there: a file, symlink, named pipe or
# empty folder, never followed (rm -d does not descend).
REMOVE_SCRIPT = r"""for p; do [ -e "$p" ] || [ -L "$p" ] && rm -df -- "$p"; done; exit 0
"""


def leftovers(view: Mapping[str, object], output: ProbeOutput, tag: str) -> list[str]:
    """Where the write reach made a thing it could not remove (a folder Landlock let it
    make but not remove, `.harness-w-TAG`), as host paths: on a host filesystem the
    host removes it after the cell; on one of the sandbox's own there is nothing to do."""
    mounts = view.get("mounts")
    found: list[str] = []
    for check in output.checks:
        rows = check.evidence.get("writes") if check.id == "fs-write-reach" else None
        for row in rows if isinstance(rows, list) and isinstance(mounts, list) else []:
            if len(row) != 6 or "could not remove" not in row[5] or ".." in row[4].split("/"):
                continue
            dev, root, below = row[0], row[3], row[4]
            fspath = root.rstrip("/") + "/" + below if below else root
            for m in mounts:
                if m[0] == dev and within(fspath, m[3]):
                    folder = m[2].rstrip("/") + fspath[len(m[3].rstrip("/")) :]
                    found.append(f"{folder.rstrip('/')}/.harness-w-{tag}")
    return list(dict.fromkeys(found))


async def remove_leftovers(
    transport: Transport, view: Mapping[str, object], output: ProbeOutput, tag: str
) -> None:
    """Remove what `leftovers` names, on the host."""
    paths = leftovers(view, output, tag)
    if paths:
        await transport.run(
            ["sh", "-c", REMOVE_SCRIPT, "harness-leftovers", *paths], timeout=TIMEOUT
        )


def overlay_layers(output: ProbeOutput) -> list[str]:
    """Each name the sandbox saw atop an overlay of its own, in each layer its options
    name, for the host to say what is there (`judge/overlay.py`)."""
    found: list[str] = []
    for check in output.checks:
        if check.id == "fs-mounts":
            found += layer_paths(check.evidence)
    return found


async def identify(transport: Transport, paths: Sequence[str]) -> dict[str, str] | None:
    """What the host shows at each path: "MAJ:MIN INODE", or "" where nothing is;
    None when the host could not be asked (then nothing is confirmed)."""
    done = await transport.run(
        ["sh", "-c", IDENTIFY_SCRIPT, "harness-identify", *paths], timeout=TIMEOUT
    )
    lines = done.stdout[:MAX_BYTES].splitlines()
    if not done.ok or len(lines) != len(paths):
        return None
    found = {}
    for path, line in zip(paths, lines, strict=True):
        dev, _, ino = line.partition(" ")
        ok = dev.isdigit() and ino.isdigit()
        found[path] = f"{os.major(int(dev))}:{os.minor(int(dev))} {ino}" if ok else ""
    return found


def link_grants(runtime: Runtime) -> list[str]:
    """The policy's write grants whose files the probe holds to their links
    (`--link-grants`; the allowed folder it always does): those of a sandbox with a
    root or a kernel of its own. A co-located sandbox's grant is the host's own folder
    at that path (/tmp): what the host's users link there is theirs, not the
    sandbox's doing; its links are still counted (`--write-skip`)."""
    policy = runtime.spec.policy
    if policy is None or not (runtime.own_root or runtime.promises_own_kernel):
        return []
    return [p for p in policy.writable if p != "/"]


def grants(
    runtime: Runtime, paths: CellPaths, real: Mapping[str, str] | None = None
) -> dict[str, list[str]]:
    """What the cell grants the sandbox, for `judge/reach.py`: host paths it may read
    ("host": the probe, the allowed folder, the helpers, a bundle's rootfs, what its
    policy lets it read, where its paths really lead) and those it may change
    ("write": the allowed folder, the cell's own rootfs, what its policy lets it
    write; never harness's shared inputs, the probe and the helpers, which every cell
    runs); for a sandbox with its own kernel, the mount points inside where they
    appear ("inside", "inside_write"); a root the matrix declares, not one harness
    made ("root")."""
    rootfs = runtime.host_root(paths)
    own = [rootfs] if rootfs else []
    host, write = [paths.probe, *own, f"{paths.workdir}/empty"], list(own)
    inside = ["/"] if runtime.own_root and rootfs else []
    inside_write = list(inside)
    for role, path in (("allowed", paths.allowed), ("helpers", paths.helpers)):
        if path is not None:
            host.append(path)
            inside.append(runtime.inside(path, role=role, cell_id=paths.cell_id))
            if role == "allowed":
                write.append(path)
                inside_write.append(runtime.inside(path, role=role, cell_id=paths.cell_id))
    policy = runtime.spec.policy
    if policy is not None:
        # What the declared policy lets the workload read or write, at the same path
        # inside (a co-located sandbox shows the host's own /usr at /usr).
        host.extend(readable_roots(runtime, real or {}))
        inside.extend(policy.readable)
        write.extend(_resolved(policy.writable, real or {}))
        inside_write.extend(policy.writable)
    found = {"host": host, "inside": inside, "write": write, "inside_write": inside_write}
    if runtime.root_declared:
        # Someone else's sandbox, its root as the matrix declares it (or nothing):
        # judge/reach.py holds the declaration to the sandbox's own / before it grants
        # anything, and does not take an undeclared root of the host's for a leak.
        found["root"] = [rootfs] if rootfs else []
    return found
