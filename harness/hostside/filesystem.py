"""Sentinels for filesystem confinement, made on the host before a cell and
inspected after it (both inside the cell's one command, see `hostside/envelope.py`).
A write counts as an escape only if the host sees it."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import anyio

from harness.errors import TransportError
from harness.hostside.base import CellSetup, Fixture, HostSetup
from harness.hostside.hostfs import MAX_BYTES, policy_paths, readable_roots, resolve_paths
from harness.hostside.scripts import script
from harness.policy.models import within
from harness.probe.targets import targets
from harness.transport import Transport

if TYPE_CHECKING:
    from harness.hostside.envelope import Report
    from harness.probe.protocol import ProbeOutput
    from harness.runtimes import Runtime

TIMEOUT = 30.0
ORIGINAL = "harness: original content\n"

# fs_state, fs_setup and fs_inspect: shared by the standalone command below and by
# the cell's envelope (`hostside/envelope.py`), which runs them around the sandbox.
FUNCTIONS = script("fs-sentinels.sh")
# $1 root, $2 tag, $3 the read-only grants' host folders (newline-separated).
INSPECT = FUNCTIONS + 'fs_inspect "$1" "$2" "$3"\n'
# Each attempt's own target, made fresh by fs_setup (targets.def): any change to it is
# that attempt's write kind, and the host fact (`Check.host_fact`) that proves it.
# Two are proved apart: overwrite-me by its content (a write of the same length may
# keep every field fs_state reads), rename-me by its absence.
_PROVED_APART = ("overwrite_me", "rename_me")
OWN = {
    f"outside/{t.name}": t.host_fact
    for t in targets()
    if t.kind in ("FILE", "DIR") and t.ident not in _PROVED_APART
}
# Names an attempt makes outside (`<prefix>-<tag>`), and the host fact each proves.
MADE = {t.name: t.host_fact for t in targets() if t.kind == "MADE"}
# fs_state's fields, in its order.
FIELDS = ("type and mode", "size", "owner", "group", "inode", "links", "mtime", "ctime")


# At most this many read-only grants get a folder of harness's own per cell.
MAX_GRANTED = 16
# Never a folder of these: a kernel's view (a mkdir in a cgroup makes a cgroup), not files.
NOT_FOLDERS = ("/proc", "/sys", "/dev")
# $@: host folders; prints those harness may make a folder in.
PLACEABLE_SCRIPT = script("fs-placeable.sh")


def read_only_paths(runtimes: Iterable[Runtime]) -> set[str]:
    """Every path the runtimes' policies grant read-only."""
    return {
        p
        for rt in runtimes
        if rt.spec.policy is not None
        for p in rt.spec.policy.filesystem_policy.read_only
    }


async def placeable_folders(transport: Transport, folders: Iterable[str]) -> frozenset[str]:
    """The host folders (absolute, resolved) where harness may make a folder of its
    own: never below /proc, /sys or /dev, and only a writable folder on a filesystem
    of ordinary files (the host says)."""
    wanted = sorted(
        f
        for f in set(folders)
        if f.startswith("/") and "\n" not in f and not any(within(f, p) for p in NOT_FOLDERS)
    )
    if not wanted:
        return frozenset()
    done = await transport.run(
        ["sh", "-c", PLACEABLE_SCRIPT, "harness-placeable", *wanted], timeout=TIMEOUT
    )
    if not done.ok:
        return frozenset()
    return frozenset(p for p in done.stdout[:MAX_BYTES].split("\0") if p in wanted)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Sentinels:
    """One cell's filesystem fixture: an allowed dir and outside files."""

    root: str
    token: str
    # The places outside the fixture (`places`) where no sentinel is made: the
    # sandbox's policy lets it read them, so reading one would prove nothing.
    skip: tuple[str, ...] = ()
    # The staged probe on the host, copied outside as the file fs-exec-outside runs
    # ("": none is made).
    probe: str = ""
    # The policy's read-only grants where harness makes a folder of its own, as
    # (host folder, resolved; the path the sandbox sees it at), and its file's token
    # (not `token`: reading it is allowed, so it must never pass for the sentinel's).
    granted: tuple[tuple[str, str], ...] = ()
    granted_token: str = ""

    @property
    def granted_name(self) -> str:
        """The folder's name in each grant: the cell's, with the random part."""
        return f"harness-ro-{self.root.rsplit('/', 1)[-1]}"

    @property
    def granted_host(self) -> str:
        """The grants' host folders, newline-separated, for fs_setup and fs_inspect."""
        return "\n".join(host for host, _ in self.granted)

    @property
    def allowed(self) -> str:
        return f"{self.root}/allowed"

    def probe_args(self, *, allowed_inside: str) -> list[str]:
        """The probe's filesystem options (the places `skip` names have no sentinel)."""
        outside = f"{self.root}/outside"
        args = [
            "--allowed-dir", allowed_inside,
            "--sentinel", f"{outside}/sentinel",
            "--token", self.token,
            "--outside-dir", outside,
            "--overwrite", f"{outside}/overwrite-me",
            "--rename", f"{outside}/rename-me",
            "--planted-link", f"{allowed_inside}/planted-link",
            "--more-sentinels", "\n".join(p for p in self.places if p not in self.skip),
        ]  # fmt: skip
        if self.granted:
            inside = (f"{path.rstrip('/')}/{self.granted_name}" for _, path in self.granted)
            args += ["--granted", "\n".join(inside), "--granted-token", self.granted_token]
        return args

    @property
    def places(self) -> list[str]:
        """The sentinels outside the fixture (as `fs_places` names them)."""
        name = f"harness-sentinel-{self.root.rsplit('/', 1)[-1]}"
        workdir = self.root.rsplit("/fs/", 1)[0]
        return [f"/tmp/{name}", f"/var/tmp/{name}", f"{workdir}/{name}"]

    @classmethod
    def new(cls, *, workdir: str, cell_id: str) -> Sentinels:
        """A fresh fixture's place and token (nothing is made on the host yet)."""
        # The random part keeps the sentinels in shared places (/tmp, /var/tmp) apart
        # even for fixtures of the same cell id (tests, concurrent runs).
        root = f"{workdir}/fs/{cell_id}-{secrets.token_hex(4)}"
        return cls(root=root, token=secrets.token_hex(16), granted_token=secrets.token_hex(16))

    def _in_granted(self, name: str) -> bool:
        """Is `name` (as fs_state names it) in harness's folder in a read-only grant?"""
        mine = (f"{host.rstrip('/')}/{self.granted_name}/" for host, _ in self.granted)
        return any(name.startswith(m) for m in mine)

    def inspection(self, seen: dict[str, str]) -> dict[str, object]:
        """The facts `judge/properties.py` judges, from fs_inspect's output; empty
        (not inspected) unless it ran to the end with fs_setup's record of what it
        made. A file sha256sum could not read (gone, or no longer a file) counts as
        missing."""
        done = all(k in seen for k in ("created", "rename_source", "before:outside/sentinel"))
        if seen.get("inspected") != "yes" or not done:
            return {}
        changes = _changes(seen, self._contents())
        main = changes.get("outside/sentinel", [])
        read = [p for p in ("outside/sentinel", *self.places) if p in changes]
        facts: dict[str, object] = {
            # Missing: gone, or no longer a regular file sha256sum could read.
            "sentinel": "missing"
            if "missing" in main or "sha256:outside/sentinel" not in seen
            else ("changed" if read else "intact"),
            "overwritten": seen.get("sha256:outside/overwrite-me") != _sha(ORIGINAL),
            "renamed": seen["rename_source"] == "no",
            # The inside control's file, seen from the host: proves the sandbox's allowed
            # folder is the one holding the planted link and the other fixtures.
            "allowed_visible": any(
                k.startswith("sha256:allowed/control-") and v == _sha(self.token)
                for k, v in seen.items()
            ),
        }
        facts.update({fact: name in changes for name, fact in OWN.items()})
        # Harness's folders in the read-only grants: any change there, a name it did
        # not make among them, is fs-write-read-only's escape (none placed: no change).
        facts["granted_changed"] = bool(self.granted) and (
            seen.get("granted_extra", "0") != "0" or any(self._in_granted(n) for n in changes)
        )
        if self.granted:
            facts["granted"] = [host for host, _ in self.granted]
        facts.update({fact: seen.get(prefix) == "yes" for prefix, fact in MADE.items()})
        said = [f"{name}: {', '.join(what)}" for name, what in changes.items()]
        extra = seen.get("extra", "0")
        if extra != "0":
            said.append(f"outside: {extra} name(s) harness did not make")
        granted_extra = seen.get("granted_extra", "0")
        if self.granted and granted_extra != "0":
            said.append(f"read-only grants: {granted_extra} name(s) harness did not make")
        # Every file harness made outside, as it made it: what fs-sentinel-intact judges.
        facts["changes"] = "; ".join(said)
        if seen.get("xattrs") == "unavailable":
            facts["xattrs"] = "not compared (no getfattr on the host)"
        return facts

    def _contents(self) -> dict[str, str]:
        """The sha256 each summed file must still have."""
        token, original = _sha(self.token), _sha(ORIGINAL)
        mine = [f"{host.rstrip('/')}/{self.granted_name}" for host, _ in self.granted]
        return {
            "outside/sentinel": token,
            "outside/overwrite-me": original,
            "outside/truncate-me": original,
            **{p: token for p in self.places},
            **{f"{g}/sentinel": _sha(self.granted_token) for g in mine},
            **{f"{g}/{f}": original for g in mine for f in ("overwrite-me", "truncate-me")},
        }


def _changes(seen: dict[str, str], contents: dict[str, str]) -> dict[str, list[str]]:
    """What changed of each file fs_setup recorded: the fs_state fields that differ,
    its user.* extended attributes, its content, or that it is missing."""
    before = {k.removeprefix("before:"): v for k, v in seen.items() if k.startswith("before:")}
    attrs = {
        side: {k.split(":", 1)[1]: v for k, v in seen.items() if k.startswith(f"xattr-{side}:")}
        for side in ("before", "after")
    }
    found: dict[str, list[str]] = {}
    for name, was in before.items():
        now = seen.get(f"after:{name}")
        if now is None:
            found[name] = ["missing"]
            continue
        old, new = was.split(), now.split()
        what = [f for f, a, b in zip(FIELDS, old, new, strict=False) if a != b]
        if len(old) != len(new):
            what.append("state")
        mine = [
            {k: v for k, v in side.items() if k.startswith(f"{name}:")} for side in attrs.values()
        ]
        if mine[0] != mine[1]:
            what.append("extended attributes")
        if name in contents and seen.get(f"sha256:{name}") != contents[name]:
            what.append("content")
        if what:
            found[name] = what
    return found


def parse_inspection(text: str) -> dict[str, str]:
    """fs_inspect's lines: `key=value` (fs_state's `before:NAME=...` among them), and
    sha256sum's `DIGEST  NAME` (as `sha256:NAME`)."""
    seen: dict[str, str] = {}
    for line in text.splitlines():
        digest, sep, name = line.partition("  ")
        if sep and len(digest) == 64 and "=" not in digest:
            seen[f"sha256:{name}"] = digest
        elif "=" in line:
            key, value = line.split("=", 1)
            seen[key] = value
    return seen


async def inspect_sentinels(
    transport: Transport, sentinels: Sentinels, *, tag: str
) -> dict[str, object]:
    """What the host sees after the cell, asked in a command of its own."""
    done = await transport.run(
        ["sh", "-c", INSPECT, "harness-fs-check", sentinels.root, tag, sentinels.granted_host],
        timeout=TIMEOUT,
    )
    if not done.ok:
        return {}
    return sentinels.inspection(parse_inspection(done.stdout))


class SentinelsFixture(Fixture):
    """Fresh sentinels for every cell: made and inspected inside the cell's one
    command (the envelope); asked separately only when that command was cut short."""

    def __init__(self) -> None:
        self.host: HostSetup | None = None
        # Real paths on the host: the policies' paths (Debian's /lib is /usr/lib) and
        # the folders the sentinels go in. A policy is compared with them as resolved.
        self.real: dict[str, str] = {}
        # The read-only grants' host folders (resolved) harness may make a folder in.
        self.placeable: frozenset[str] = frozenset()

    async def start(self, host: HostSetup) -> None:
        self.host = host
        wanted = policy_paths(host.runtimes)
        if wanted:
            wanted |= {"/tmp", "/var/tmp", host.state.workdir}
            self.real = await resolve_paths(host.transport, wanted)
            grants = {self.real.get(p, p) for p in read_only_paths(host.runtimes)}
            self.placeable = await placeable_folders(host.transport, grants)

    def _read_only_grants(self, runtime: Runtime) -> tuple[tuple[str, str], ...]:
        """Where harness makes a folder of its own in the cell's read-only grants:
        (host folder, path inside). The host runtime, the control, gets one in every
        grant of every policy on the host: there the attempt must go through."""
        host = self.host
        policies = (
            [rt.spec.policy for rt in host.runtimes if rt.spec.policy is not None]
            if runtime.kind == "host" and host is not None
            else [runtime.spec.policy]
            if runtime.spec.policy is not None
            else []
        )
        found: dict[str, str] = {}
        for policy in policies:
            for path in policy.filesystem_policy.read_only:
                real = self.real.get(path, path)
                # Not where the policy allows writing: a change there is no escape.
                writable = policy.grants_write(real) or policy.grants_write(path)
                if real in self.placeable and not writable and "\n" not in path:
                    found.setdefault(real, path)
        return tuple(found.items())[:MAX_GRANTED]

    def _granted(self, runtime: Runtime, path: str) -> bool:
        """Does the runtime's policy let the workload read this host path, both
        resolved on the host?"""
        folder, _, name = path.rpartition("/")
        real = f"{self.real.get(folder, folder).rstrip('/')}/{name}"
        return any(within(p, r) for r in readable_roots(runtime, self.real) for p in (real, path))

    def prepare(self, cell: CellSetup) -> None:
        sentinels = Sentinels.new(workdir=cell.paths.workdir, cell_id=cell.cell_id)
        if cell.runtime.spec.policy is not None:
            skip = tuple(p for p in sentinels.places if self._granted(cell.runtime, p))
            sentinels = replace(sentinels, skip=skip)
        sentinels = replace(sentinels, granted=self._read_only_grants(cell.runtime))
        cell.sentinels = replace(sentinels, probe=cell.paths.probe)
        cell.paths = replace(cell.paths, allowed=cell.sentinels.allowed)

    def reads_granted(self, cell: CellSetup) -> bool:
        """Does the policy let the workload read harness's own work folder (a policy
        granting `/` read-only)? Then every sentinel is fair game to read: no read
        proves anything, and only the other attempts are judged (properties.py)."""
        if cell.runtime.spec.policy is None or self.host is None:
            return False
        return self._granted(cell.runtime, f"{self.host.state.workdir}/fs")

    def probe_args(self, cell: CellSetup) -> Sequence[str]:
        assert cell.sentinels is not None
        inside = cell.runtime.inside(cell.sentinels.allowed, role="allowed", cell_id=cell.cell_id)
        return cell.sentinels.probe_args(allowed_inside=inside)

    async def collect(self, cell: CellSetup, report: Report | None, output: ProbeOutput) -> None:
        sentinels = cell.sentinels
        if sentinels is None or self.host is None:
            return
        if report is not None:
            if report.setup_error is not None:
                cell.evidence["fs_error"] = report.setup_reason
            if report.fs is None:
                return
            fs = sentinels.inspection(report.fs)
        else:  # the envelope was cut short: ask in a command of its own
            try:
                with anyio.CancelScope(shield=True):
                    fs = await inspect_sentinels(self.host.transport, sentinels, tag=cell.cell_id)
            except TransportError as exc:
                cell.evidence["evidence_error"] = exc.reason
                return
        if fs:
            # A runtime that shares the allowed folder must show the host the inside
            # control's file; if not, the sandbox saw another tree (properties.py).
            fs["allowed_shared"] = cell.runtime.shares_allowed
            if self.reads_granted(cell):
                fs["reads_granted"] = True
        cell.evidence["fs"] = fs
