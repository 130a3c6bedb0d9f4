"""Candidate runsc binaries: downloaded once into a local cache, verified, unpacked.

A build is published in one of two styles: `runsc` + `runsc.sha512` (older), or
`gvisor.tar.bz2` + `gvisor.tar.bz2.sha512` with runsc inside (newer). The
artifact's sha512 is checked before anything is unpacked or run; a mismatch is
an `ArtifactError` and the file is deleted, never used. A `verified.json`
marker, written last, is what makes a cache entry reusable: later runs use it
without touching the network, after checking the runsc binary's sha256.

Cache layout: `<cache>/<channel>/<version>/<arch>/` for bisect, and
`<cache>/sha512/<sha512>/` for `run`'s release builds, which are keyed by
content (default cache: `~/.cache/harness/runsc`, or `$XDG_CACHE_HOME/harness/runsc`).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import tarfile
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import IO

from rich.progress import Progress

from harness.errors import ArtifactError
from harness.files import write_atomic
from harness.releases.index import ReleaseIndex
from harness.releases.versions import Version
from harness.results.store.layout import utc_now

RUNSC = "runsc"
TARBALL = "gvisor.tar.bz2"
STYLES = (RUNSC, TARBALL)  # preferred first: a bare runsc needs no unpacking
MARKER = "verified.json"
MAX_ARTIFACT_BYTES = 2 * 1024 * 1024 * 1024
MAX_SHA_FILE = 4096


@dataclass(frozen=True, slots=True)
class Candidate:
    """A verified runsc for one build, ready to upload to a host."""

    version: Version
    arch: str
    runsc: Path
    sha256: str
    artifact: str
    sha512: str
    source: str
    downloaded: bool

    def to_json(self) -> dict[str, object]:
        return {
            "version": self.version.name,
            "channel": self.version.channel,
            "arch": self.arch,
            "artifact": self.artifact,
            "source": self.source,
            "sha512": self.sha512,
            "runsc": str(self.runsc),
            "runsc_sha256": self.sha256,
            "downloaded": self.downloaded,
        }


def file_digest(path: Path, algorithm: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, algorithm).hexdigest()


def parse_sha512(text: bytes, *, subject: str, name: str) -> str:
    """The digest from a `.sha512` file (`<hex>` or `<hex>  <file name>`)."""
    words = text.decode("ascii", errors="replace").split()
    digest = words[0].lower() if words else ""
    if len(digest) != 128 or any(c not in "0123456789abcdef" for c in digest):
        raise ArtifactError(subject, f"{name} holds no sha512 digest")
    return digest


def _build_key(version: Version, arch: str) -> str:
    return f"{version.channel}/{version.name}/{arch}"


def _verified_for(marker: dict[str, object]) -> list[str]:
    """The builds whose own artifact was downloaded and matched this entry's sha512
    (a marker written before the list existed names its one build)."""
    listed = marker.get("verified_for")
    if isinstance(listed, list):
        return [str(k) for k in listed]
    return [f"{marker.get('channel')}/{marker.get('version')}/{marker.get('arch')}"]


def _cached(folder: Path, version: Version, arch: str) -> Candidate | None:
    """The cache entry, if its marker is intact, runsc still has the sha256 it had
    when it was verified, and this very build's artifact was among those verified
    into it: another release whose `.sha512` merely names the same digest (a
    swapped or truncated upload, a lying mirror) never gets the entry without its
    own bytes being read. A damaged entry is discarded and fetched again."""
    try:
        marker = json.loads((folder / MARKER).read_text())
        runsc = folder / RUNSC
        if _build_key(version, arch) not in _verified_for(marker):
            return None
        if file_digest(runsc, "sha256") == marker["runsc_sha256"]:
            return Candidate(
                version=version,
                arch=arch,
                runsc=runsc,
                sha256=marker["runsc_sha256"],
                artifact=marker["artifact"],
                sha512=marker["sha512"],
                source=marker["source"],
                downloaded=False,
            )
    except (OSError, ValueError, KeyError, TypeError):
        pass
    (folder / MARKER).unlink(missing_ok=True)
    return None


def _pick_style(files: dict[str, int | None], *, subject: str, where: str) -> str:
    for style in STYLES:
        if style in files and f"{style}.sha512" in files:
            return style
    shown = ", ".join(sorted(files)) or "nothing"
    raise ArtifactError(
        subject, f"no runsc or {TARBALL} with its .sha512 under {where} (found: {shown})"
    )


def _copy_limited(source: IO[bytes], dest: Path, *, limit: int, subject: str) -> None:
    copied = 0
    with open(dest, "wb") as out:
        while chunk := source.read(1024 * 1024):
            copied += len(chunk)
            if copied > limit:
                raise ArtifactError(subject, f"runsc in {TARBALL} is larger than {limit} bytes")
            out.write(chunk)


def extract_runsc(tarball: Path, dest: Path, *, subject: str) -> None:
    """Copy the `runsc` regular file out of the tarball (at the top or under one
    folder; the shallowest wins). Nothing else is extracted, and no member path
    is ever used as a destination."""
    try:
        with tarfile.open(tarball, "r:bz2") as tar:
            found = [
                m
                for m in tar.getmembers()
                if m.isfile()
                and PurePosixPath(m.name).name == RUNSC
                and len(PurePosixPath(m.name).parts) <= 2
            ]
            if not found:
                raise ArtifactError(subject, f"{TARBALL} holds no runsc")
            member = min(found, key=lambda m: len(PurePosixPath(m.name).parts))
            source = tar.extractfile(member)
            if source is None:
                raise ArtifactError(subject, f"cannot read {member.name} in {TARBALL}")
            with source:
                _copy_limited(source, dest, limit=MAX_ARTIFACT_BYTES, subject=subject)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ArtifactError(subject, f"cannot unpack {TARBALL}: {exc}") from exc


async def _download(
    index: ReleaseIndex,
    version: Version,
    *,
    arch: str,
    name: str,
    dest: Path,
    progress: Progress | None,
) -> tuple[str, str]:
    """Stream a file into `dest`; returns (its sha512, where it came from)."""
    subject = str(version)
    digest = hashlib.sha512()
    total = 0
    async with index.open(version, arch, name) as download:
        task = (
            progress.add_task(f"{version.name} {name}", total=download.size)
            if progress is not None
            else None
        )
        try:
            with open(dest, "wb") as out:
                async for chunk in download.chunks:
                    total += len(chunk)
                    if total > MAX_ARTIFACT_BYTES:
                        raise ArtifactError(subject, f"{name} is larger than {MAX_ARTIFACT_BYTES}")
                    out.write(chunk)
                    digest.update(chunk)
                    if progress is not None and task is not None:
                        progress.advance(task, len(chunk))
        except OSError as exc:
            raise ArtifactError(subject, f"cannot write {dest}: {exc.strerror}") from exc
        finally:
            if progress is not None and task is not None:
                progress.remove_task(task)
    if download.size is not None and total != download.size:
        raise ArtifactError(subject, f"{name}: got {total} of {download.size} bytes")
    return digest.hexdigest(), download.url


def _write_marker(folder: Path, data: dict[str, object]) -> None:
    write_atomic(folder / MARKER, json.dumps(data, indent=2) + "\n")


def _also_verified(folder: Path, sha256: str) -> list[str]:
    """The other builds already verified into this entry with the same runsc."""
    try:
        marker = json.loads((folder / MARKER).read_text())
        return _verified_for(marker) if marker.get("runsc_sha256") == sha256 else []
    except (OSError, ValueError, AttributeError):
        return []


def content_dir(root: Path, sha512: str) -> Path:
    return root / "sha512" / sha512


async def fetch(
    index: ReleaseIndex,
    version: Version,
    *,
    arch: str,
    cache: Path,
    progress: Progress | None = None,
) -> Candidate:
    """A verified runsc for `version`, from the cache or downloaded into it; the
    cache is keyed by the artifact's sha512, never by the version's name.

    The index is asked for the build's checksum every time (a name such as
    "latest" moves, and a mirror may be laid out anew), and the artifact is
    downloaded only when no cache entry holds that sha512: two names for one
    build share one entry, and one name that now means another build never
    reuses the old one.

    Raises:
        ArtifactError: the build is not there, cannot be downloaded or unpacked,
            or its sha512 does not match (reason starts with "checksum mismatch").
    """
    artifact, expected = await _published(index, version, arch=arch)
    folder = content_dir(cache, expected)
    cached = _cached(folder, version, arch)
    source = index.url(version, arch, artifact)
    if cached is not None and cached.sha512 == expected and cached.artifact == artifact:
        return replace(cached, source=source)
    return await _store(
        index, version, arch=arch, artifact=artifact, expected=expected, folder=folder,
        progress=progress,
    )  # fmt: skip


async def _published(index: ReleaseIndex, version: Version, *, arch: str) -> tuple[str, str]:
    """The build's artifact name and the sha512 its `.sha512` file states."""
    subject = str(version)
    files = await index.files(version, arch)
    artifact = _pick_style(files, subject=subject, where=index.url(version, arch, ""))
    sum_name = f"{artifact}.sha512"
    expected = parse_sha512(
        await index.read(version, arch, sum_name, limit=MAX_SHA_FILE),
        subject=subject,
        name=sum_name,
    )
    return artifact, expected


async def _store(
    index: ReleaseIndex,
    version: Version,
    *,
    arch: str,
    artifact: str,
    expected: str,
    folder: Path,
    progress: Progress | None,
) -> Candidate:
    """Download the artifact into `folder`, verify it against `expected`, unpack
    runsc, and write the marker last."""
    subject = str(version)
    sum_name = f"{artifact}.sha512"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArtifactError(subject, f"cannot create the cache {folder}: {exc.strerror}") from exc
    part = folder / f".{artifact}.{secrets.token_hex(4)}.part"
    unpacked = folder / f".{RUNSC}.{secrets.token_hex(4)}.part"
    try:
        got, source = await _download(
            index, version, arch=arch, name=artifact, dest=part, progress=progress
        )
        if got != expected:
            raise ArtifactError(
                subject,
                f"checksum mismatch: {artifact} has sha512 {got[:16]}..., "
                f"{sum_name} says {expected[:16]}...",
            )
        if artifact == TARBALL:
            extract_runsc(part, unpacked, subject=subject)
            os.replace(part, folder / TARBALL)
        else:
            os.replace(part, unpacked)
        os.chmod(unpacked, 0o755)
        os.replace(unpacked, folder / RUNSC)
        sha256 = file_digest(folder / RUNSC, "sha256")
        _write_marker(
            folder,
            {
                "verified_for": list(
                    dict.fromkeys([*_also_verified(folder, sha256), _build_key(version, arch)])
                ),
                "version": version.name,
                "channel": version.channel,
                "arch": arch,
                "artifact": artifact,
                "source": source,
                "sha512": expected,
                "runsc_sha256": sha256,
                "verified": utc_now(),
            },
        )
    except OSError as exc:
        raise ArtifactError(subject, f"cannot store it in the cache {folder}: {exc}") from exc
    finally:
        part.unlink(missing_ok=True)
        unpacked.unlink(missing_ok=True)
    return Candidate(
        version=version,
        arch=arch,
        runsc=folder / RUNSC,
        sha256=sha256,
        artifact=artifact,
        sha512=expected,
        source=source,
        downloaded=True,
    )
