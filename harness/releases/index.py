"""Where gVisor builds are listed and fetched from: the public bucket, a mirror
of it over HTTP, or a local folder laid out the same way (air-gapped labs).

Layout: `releases/<channel>/<version>/<arch>/<file>`. Over HTTP the versions
come from the bucket's XML listing API (GCS and S3 speak the same dialect):
`GET <base>?prefix=releases/<channel>/&delimiter=/` returns a
`ListBucketResult` whose `CommonPrefixes` are the version folders, paginated
with `NextMarker` (V1) or `NextContinuationToken` (V2).
"""

from __future__ import annotations

import abc
import contextlib
import errno
import os
import stat
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

import anyio

from harness._version import __version__
from harness.errors import ArtifactError, UsageError
from harness.releases.versions import Version, parse_listed

if TYPE_CHECKING:
    import httpx

DEFAULT_INDEX = "https://storage.googleapis.com/gvisor"
ROOT = "releases"
ARCHES = ("x86_64", "aarch64")
MAX_PAGES = 1000
MAX_LISTING_BYTES = 16 * 1024 * 1024
CHUNK = 1024 * 1024
TIMEOUT = {"timeout": 30.0, "connect": 15.0}  # httpx.Timeout's; httpx loads on first use


@dataclass(frozen=True, slots=True)
class Download:
    """An artifact being read: its size if known, and its bytes in chunks."""

    url: str
    size: int | None
    chunks: AsyncIterator[bytes]


class ReleaseIndex(abc.ABC):
    """Lists versions and files, and streams files. Use `async with`."""

    location: str

    @abc.abstractmethod
    async def versions(self, channel: str) -> list[Version]:
        """Every version of a channel, oldest first."""

    @abc.abstractmethod
    async def files(self, version: Version, arch: str) -> dict[str, int | None]:
        """The files of one build (name -> size, if known); empty if there is none."""

    @abc.abstractmethod
    def url(self, version: Version, arch: str, name: str) -> str:
        """Where a file comes from, for records and messages."""

    @abc.abstractmethod
    def open(
        self, version: Version, arch: str, name: str
    ) -> contextlib.AbstractAsyncContextManager[Download]:
        """Stream one file of a build."""

    async def read(self, version: Version, arch: str, name: str, *, limit: int) -> bytes:
        """A small file (a checksum) in one piece, refusing anything larger than `limit`."""
        data = bytearray()
        async with self.open(version, arch, name) as download:
            async for chunk in download.chunks:
                data.extend(chunk)
                if len(data) > limit:
                    raise ArtifactError(str(version), f"{name} is larger than {limit} bytes")
        return bytes(data)

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""

    async def __aenter__(self) -> ReleaseIndex:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def key(version: Version, arch: str, name: str = "") -> str:
    return f"{ROOT}/{version.channel}/{version.name}/{arch}/{name}"


def _sort(found: set[Version]) -> list[Version]:
    return sorted(found, key=lambda v: v.key)


# --- HTTP (the bucket's XML API) ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Page:
    prefixes: list[str]
    keys: dict[str, int | None]
    next_marker: str | None
    next_token: str | None
    truncated: bool


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def parse_listing(body: bytes) -> _Page:
    """One page of a `ListBucketResult`, namespaces ignored."""
    root = ET.fromstring(body)
    if _local(root.tag) != "ListBucketResult":
        raise ValueError(f"expected ListBucketResult, got {_local(root.tag)}")
    prefixes: list[str] = []
    keys: dict[str, int | None] = {}
    marker = token = None
    truncated = False
    for child in root:
        tag = _local(child.tag)
        if tag == "CommonPrefixes":
            prefixes += [(p.text or "") for p in child if _local(p.tag) == "Prefix"]
        elif tag == "Contents":
            fields = {_local(f.tag): (f.text or "") for f in child}
            size = fields.get("Size", "")
            keys[fields.get("Key", "")] = int(size) if size.isdigit() else None
        elif tag == "NextMarker":
            marker = child.text or None
        elif tag == "NextContinuationToken":
            token = child.text or None
        elif tag == "IsTruncated":
            truncated = (child.text or "").strip().lower() == "true"
    return _Page(prefixes, keys, marker, token, truncated)


def _http_error() -> type[Exception]:
    import httpx

    return httpx.HTTPError


class HttpIndex(ReleaseIndex):
    """A bucket (or a mirror with the same XML listing API) over HTTP(S)."""

    def __init__(self, base: str, *, client: httpx.AsyncClient | None = None) -> None:
        import httpx  # here: a plain `harness run` never needs it (import time)

        self.base = base.rstrip("/")
        self.location = self.base
        self._client = client or httpx.AsyncClient(
            timeout=httpx.Timeout(**TIMEOUT),
            follow_redirects=True,
            headers={"User-Agent": f"harness/{__version__} (bisect)"},
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _get_listing(self, params: dict[str, str], subject: str) -> _Page:
        try:
            async with self._client.stream("GET", self.base, params=params) as resp:
                if resp.status_code != 200:
                    raise ArtifactError(
                        subject, f"listing {resp.url} answered HTTP {resp.status_code}"
                    )
                body = bytearray()
                async for chunk in resp.aiter_bytes():
                    body.extend(chunk)
                    if len(body) > MAX_LISTING_BYTES:
                        raise ArtifactError(subject, f"listing {resp.url} is too large")
        except _http_error() as exc:
            raise ArtifactError(subject, f"cannot list {self.base}: {exc}") from exc
        try:
            return parse_listing(bytes(body))
        except (ET.ParseError, ValueError) as exc:
            raise ArtifactError(subject, f"{self.base} is not a bucket listing: {exc}") from exc

    async def _list(self, prefix: str, subject: str) -> tuple[list[str], dict[str, int | None]]:
        """Every common prefix and key under `prefix`, across all pages."""
        params = {"prefix": prefix, "delimiter": "/"}
        prefixes: list[str] = []
        keys: dict[str, int | None] = {}
        seen: set[tuple[str, str]] = set()
        for _ in range(MAX_PAGES):
            page = await self._get_listing(params, subject)
            prefixes += page.prefixes
            keys.update(page.keys)
            if page.next_token:
                follow = ("continuation-token", page.next_token)
            elif page.next_marker:
                follow = ("marker", page.next_marker)
            elif page.truncated and (page.prefixes or page.keys):
                # S3 V1 without a delimiter-aware NextMarker: continue after the last entry.
                follow = ("marker", max([*page.prefixes, *page.keys]))
            else:
                return prefixes, keys
            if follow in seen:
                raise ArtifactError(subject, f"listing {self.base} does not advance ({follow[0]})")
            seen.add(follow)
            params = {"prefix": prefix, "delimiter": "/", follow[0]: follow[1]}
            if follow[0] == "continuation-token":
                params["list-type"] = "2"
        raise ArtifactError(subject, f"listing {self.base} has more than {MAX_PAGES} pages")

    async def versions(self, channel: str) -> list[Version]:
        prefix = f"{ROOT}/{channel}/"
        prefixes, _ = await self._list(prefix, f"{self.base} {channel}")
        found = set()
        for p in prefixes:
            version = parse_listed(channel, p.removeprefix(prefix).strip("/"))
            if version is not None:
                found.add(version)
        return _sort(found)

    async def files(self, version: Version, arch: str) -> dict[str, int | None]:
        prefix = key(version, arch)
        _, keys = await self._list(prefix, str(version))
        names = {k.removeprefix(prefix): size for k, size in keys.items() if k.startswith(prefix)}
        return {name: size for name, size in names.items() if name and "/" not in name}

    def url(self, version: Version, arch: str, name: str) -> str:
        return f"{self.base}/{key(version, arch, name)}"

    @contextlib.asynccontextmanager
    async def open(self, version: Version, arch: str, name: str) -> AsyncIterator[Download]:
        url = self.url(version, arch, name)
        try:
            async with self._client.stream("GET", url) as resp:
                if resp.status_code != 200:
                    raise ArtifactError(str(version), f"GET {url} answered HTTP {resp.status_code}")
                length = resp.headers.get("content-length", "")
                encoded = resp.headers.get("content-encoding", "identity") != "identity"
                size = int(length) if length.isdigit() and not encoded else None
                yield Download(url=url, size=size, chunks=resp.aiter_bytes(CHUNK))
        except _http_error() as exc:
            raise ArtifactError(str(version), f"cannot download {url}: {exc}") from exc


# --- a local folder laid out like the bucket -------------------------------------------


def _open_regular(path: Path, subject: str) -> IO[bytes]:
    """An index entry, read only as the regular file it names: never through a
    symlink (a mirror's entry pointing at a host file would be copied into the cache
    and a host's work folder, executable)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        why = "a symlink, not a file" if exc.errno == errno.ELOOP else exc.strerror
        raise ArtifactError(subject, f"cannot read {path}: {why}") from exc
    fh = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        fh.close()
        raise ArtifactError(subject, f"cannot read {path}: not a regular file")
    return fh


async def _file_chunks(fh: IO[bytes], path: Path, subject: str) -> AsyncIterator[bytes]:
    try:
        with fh:
            while chunk := fh.read(CHUNK):
                yield chunk
                await anyio.sleep(0)
    except OSError as exc:
        raise ArtifactError(subject, f"cannot read {path}: {exc.strerror}") from exc


class FolderIndex(ReleaseIndex):
    """A mirror on disk: `<DIR>/releases/<channel>/...` (or `<DIR>/<channel>/...`)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder / ROOT if (folder / ROOT).is_dir() else folder
        self.location = str(folder)

    def _path(self, version: Version, arch: str, name: str = "") -> Path:
        return self.folder / version.channel / version.name / arch / name

    async def versions(self, channel: str) -> list[Version]:
        try:
            names = os.listdir(self.folder / channel)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise ArtifactError(self.location, f"cannot list {channel}: {exc.strerror}") from exc
        found = {v for n in names if (v := parse_listed(channel, n)) is not None}
        return _sort({v for v in found if (self.folder / channel / v.name).is_dir()})

    async def files(self, version: Version, arch: str) -> dict[str, int | None]:
        """Every entry, a symlink too (with no size): reading it is then refused by
        name, where leaving it out would say the build has no runsc."""
        folder = self._path(version, arch)
        try:
            return {
                e.name: e.stat(follow_symlinks=False).st_size
                if e.is_file(follow_symlinks=False)
                else None
                for e in os.scandir(folder)
            }
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise ArtifactError(str(version), f"cannot list {folder}: {exc.strerror}") from exc

    def url(self, version: Version, arch: str, name: str) -> str:
        return str(self._path(version, arch, name))

    @contextlib.asynccontextmanager
    async def open(self, version: Version, arch: str, name: str) -> AsyncIterator[Download]:
        path = self._path(version, arch, name)
        fh = _open_regular(path, str(version))
        try:
            size = os.fstat(fh.fileno()).st_size
            yield Download(url=str(path), size=size, chunks=_file_chunks(fh, path, str(version)))
        finally:
            fh.close()


def open_index(where: str | None) -> ReleaseIndex:
    """`--index`: an http(s) URL of a bucket or mirror, or a local folder; default:
    gVisor's public bucket."""
    where = where or DEFAULT_INDEX
    if where.startswith(("http://", "https://")):
        return HttpIndex(where)
    path = Path(where.removeprefix("file://")).expanduser()
    if not path.is_dir():
        raise UsageError(f"--index: {where!r} is neither an http(s) URL nor a folder")
    return FolderIndex(path)
