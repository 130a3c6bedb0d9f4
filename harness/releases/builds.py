"""runsc builds that a matrix names by release (`release = "latest"`, `"nightly"`,
`"20260824.0"`), for `harness run`: resolved in the same index the bisect verb
reads, downloaded once with httpx, verified against its sha512, cached by
content, and installed on each host by sha256 for that host's architecture.

A run resolves each name once, so every host runs the same build even if a new
nightly is published mid-run; a resumed run keeps the versions its first part
resolved. A build that cannot be resolved, fetched, verified or started makes
that runtime unavailable on the host (its verdicts inconclusive): it is never
replaced by another build, and a checksum mismatch is never run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from harness.cache import RUNSC_BUILDS, cache_dir
from harness.errors import ArtifactError
from harness.matrix.models import RunscRuntimeSpec
from harness.releases.artifacts import Candidate, fetch
from harness.releases.index import ReleaseIndex, open_index
from harness.releases.install import ARCH_OF_MACHINE, HostInfo, Installed, install
from harness.releases.versions import Version, parse_listed
from harness.text import redact_url
from harness.transport import Transport


@dataclass(frozen=True, slots=True)
class Request:
    """What a runtime entry asked for: a release name in a channel."""

    release: str
    channel: str

    @classmethod
    def of(cls, spec: RunscRuntimeSpec) -> Request:
        assert spec.release is not None and spec.release_channel is not None
        return cls(spec.release, spec.release_channel)

    @property
    def moving(self) -> bool:
        """A name that means a different build as new ones are published."""
        return self.release in ("latest", "nightly")


@dataclass(slots=True)
class _Entry:
    version: Version | None = None
    error: ArtifactError | None = None
    builds: dict[str, Candidate | ArtifactError] = field(default_factory=dict)


class ReleaseBuilds:
    """The release builds of one run, shared by all its hosts. Use `async with`."""

    def __init__(
        self,
        index: str | None,
        *,
        cache: Path | None = None,
        pinned: Mapping[str, str] | None = None,
    ) -> None:
        self.location = index
        self.cache = cache or cache_dir(RUNSC_BUILDS)
        self.pinned = dict(pinned or {})  # "channel/release" -> version name (a resume)
        self._index: ReleaseIndex | None = None
        self._entries: dict[Request, _Entry] = {}
        self._lock = anyio.Lock()

    async def __aenter__(self) -> ReleaseBuilds:
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._index is not None:
            with anyio.CancelScope(shield=True):
                await self._index.aclose()

    def _open(self) -> ReleaseIndex:
        if self._index is None:
            self._index = open_index(self.location)
        return self._index

    async def resolve(self, request: Request) -> Version:
        """The version a request means for this run (resolved once).

        Raises:
            ArtifactError: the index cannot be listed, or lists no such build.
        """
        async with self._lock:
            entry = self._entries.setdefault(request, _Entry())
            if entry.version is None and entry.error is None:
                try:
                    entry.version = await self._resolve(request)
                except ArtifactError as exc:
                    entry.error = exc
            if entry.error is not None:
                raise entry.error
            assert entry.version is not None
            return entry.version

    async def _resolve(self, request: Request) -> Version:
        index = self._open()
        subject = f"{request.channel}/{request.release}"
        pinned = self.pinned.get(subject)
        if pinned is not None or not request.moving:
            name = pinned or request.release
            version = parse_listed(request.channel, name)
            if version is None:
                raise ArtifactError(subject, f"{name!r} is not a {request.channel} version")
            return version
        listed = await index.versions(request.channel)
        if not listed:
            raise ArtifactError(subject, f"no {request.channel} builds listed in {index.location}")
        return listed[-1]

    async def build(self, request: Request, machine: str) -> Candidate:
        """The verified build of a request for a host's `uname -m`, fetched once.

        Raises:
            ArtifactError: resolution, download, verification, or a machine that
                gVisor does not build for.
        """
        version = await self.resolve(request)
        arch = ARCH_OF_MACHINE.get(machine)
        if arch is None:
            known = ", ".join(sorted(set(ARCH_OF_MACHINE.values())))
            raise ArtifactError(str(version), f"no gVisor build for machine {machine!r} ({known})")
        async with self._lock:
            entry = self._entries[request]
            if arch not in entry.builds:
                try:
                    entry.builds[arch] = await fetch(
                        self._open(), version, arch=arch, cache=self.cache
                    )
                except ArtifactError as exc:
                    entry.builds[arch] = exc
            got = entry.builds[arch]
        if isinstance(got, ArtifactError):
            raise got
        return got

    async def install(
        self, transport: Transport, request: Request, *, workdir: str, machine: str
    ) -> tuple[Candidate, Installed]:
        """Fetch the build for this host's machine and install it there by sha256.

        Raises:
            ArtifactError: the build could not be had (see `build`).
            TransportError: the upload or `runsc --version` failed on the host.
        """
        candidate = await self.build(request, machine)
        host = HostInfo(workdir=workdir, machine=machine, arch=candidate.arch)
        return candidate, await install(transport, candidate, host=host)

    def manifest(self) -> dict[str, object]:
        """The index, and what each requested name resolved to, with every build
        fetched for it: version, sha512 and source per architecture."""
        resolved: dict[str, object] = {}
        for request, entry in self._entries.items():
            builds: dict[str, object] = {}
            for arch, got in entry.builds.items():
                builds[arch] = (
                    {"error": str(got)}
                    if isinstance(got, ArtifactError)
                    else {
                        "sha512": got.sha512,
                        "source": redact_url(got.source),
                        "artifact": got.artifact,
                        "runsc_sha256": got.sha256,
                        "downloaded": got.downloaded,
                    }
                )
            resolved[f"{request.channel}/{request.release}"] = {
                "release": request.release,
                "channel": request.channel,
                "version": entry.version.name if entry.version else None,
                "error": str(entry.error) if entry.error else None,
                "builds": builds,
            }
        index = self._index.location if self._index is not None else self.location
        return {"index": index, "resolved": resolved}


def build_record(candidate: Candidate, installed: Installed, request: Request) -> dict[str, str]:
    """What a host's manifest says about the build one runtime ran there."""
    return {
        "release": request.release,
        "channel": candidate.version.channel,
        "version": candidate.version.name,
        "arch": candidate.arch,
        "sha512": candidate.sha512,
        "source": redact_url(candidate.source),
        "runsc_sha256": candidate.sha256,
        "path": installed.path,
    }
