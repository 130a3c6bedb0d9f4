"""Listing builds: the bucket's XML API over HTTP (paginated both ways) and a folder."""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx
import pytest

from harness.errors import ArtifactError, UsageError
from harness.releases.index import FolderIndex, HttpIndex, open_index, parse_listing
from harness.releases.versions import parse_listed
from tests.releases.bucket import ARCH, Bucket, Releases

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("style", ["marker", "token"])
async def test_http_listing_follows_every_page(releases: Releases, style: str) -> None:
    """All 13 nightlies come back in order across pages of 4 (NextMarker or continuation
    token); `latest` is not a version."""
    server = Bucket(releases.root, page_size=4, style=style).start()
    try:
        async with HttpIndex(server.url) as index:
            found = await index.versions("nightly")
            files = await index.files(found[1], ARCH)
    finally:
        server.stop()
    assert [v.name for v in found] == releases.versions
    assert server.listings() >= 5
    assert set(files) == {"gvisor.tar.bz2", "gvisor.tar.bz2.sha512"}
    assert all(isinstance(size, int) and size > 0 for size in files.values())
    if style == "token":
        assert any("continuation-token=" in r and "list-type=2" in r for r in server.requests)
    else:
        assert any("marker=" in r for r in server.requests)


async def test_folder_index_matches_http(releases: Releases, bucket: Bucket) -> None:
    """A local mirror laid out like the bucket lists the same versions and files."""
    folder = FolderIndex(releases.root)
    async with HttpIndex(bucket.url) as http:
        assert await folder.versions("nightly") == await http.versions("nightly")
        v = (await folder.versions("nightly"))[0]
        assert await folder.files(v, ARCH) == await http.files(v, ARCH)
    assert await folder.versions("release") == []


async def test_unreachable_or_wrong_index_is_an_artifact_error(bucket: Bucket) -> None:
    """A dead URL or a server that is not a bucket fails with a clear reason."""
    async with HttpIndex("http://127.0.0.1:9/gvisor") as dead:
        with pytest.raises(ArtifactError, match="cannot list"):
            await dead.versions("nightly")
    async with HttpIndex(bucket.url.removesuffix("/gvisor") + "/other") as wrong:
        with pytest.raises(ArtifactError, match="HTTP 404"):
            await wrong.versions("nightly")


async def test_listing_that_does_not_advance_is_refused() -> None:
    """A server repeating the same NextMarker cannot loop the client forever."""
    body = (
        b"<ListBucketResult><IsTruncated>true</IsTruncated><NextMarker>x</NextMarker>"
        b"<CommonPrefixes><Prefix>releases/nightly/2026-09-01/</Prefix></CommonPrefixes>"
        b"</ListBucketResult>"
    )
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=body))
    async with HttpIndex(
        "http://bucket.invalid/gvisor", client=httpx.AsyncClient(transport=transport)
    ) as index:
        with pytest.raises(ArtifactError, match="does not advance"):
            await index.versions("nightly")


def test_listing_parser_ignores_namespaces_and_reads_sizes() -> None:
    """GCS answers with the S3 namespace; keys, sizes and prefixes are read either way."""
    page = parse_listing(
        b'<ListBucketResult xmlns="http://doc.s3.amazonaws.com/2006-03-01">'
        b"<IsTruncated>false</IsTruncated>"
        b"<Contents><Key>releases/release/20260817.0/x86_64/runsc</Key><Size>42</Size></Contents>"
        b"<CommonPrefixes><Prefix>releases/release/20260817.0/</Prefix></CommonPrefixes>"
        b"</ListBucketResult>"
    )
    assert page.keys == {"releases/release/20260817.0/x86_64/runsc": 42}
    assert page.prefixes == ["releases/release/20260817.0/"]
    assert not page.truncated and page.next_marker is None
    assert parse_listed("release", "20260817.0") is not None


def test_index_argument(tmp_path: object) -> None:
    """--index takes an http(s) URL or an existing folder; anything else is bad input."""
    assert isinstance(open_index("https://storage.googleapis.com/gvisor"), HttpIndex)
    assert isinstance(open_index(str(tmp_path)), FolderIndex)
    with pytest.raises(UsageError, match="--index"):
        open_index("/no/such/folder")


async def test_a_folder_entry_that_is_a_symlink_is_never_read(
    releases: Releases, tmp_path: Path
) -> None:
    """A mirror's entry that is a symlink to a host file (with that file's true digest
    beside it) is listed without a size and never read: it would be copied into the
    cache and a host's work folder, mode 0755."""
    secret = tmp_path / "secret"
    secret.write_bytes(b"a host secret\n")
    index = FolderIndex(releases.root)
    v = (await index.versions("nightly"))[0]
    folder = index._path(v, ARCH)
    for entry in folder.iterdir():
        entry.unlink()
    (folder / "runsc").symlink_to(secret)
    digest = hashlib.sha512(secret.read_bytes()).hexdigest()
    (folder / "runsc.sha512").write_text(f"{digest}  runsc\n")
    assert (await index.files(v, ARCH))["runsc"] is None
    with pytest.raises(ArtifactError, match="a symlink, not a file"):
        async with index.open(v, ARCH, "runsc"):
            pass
