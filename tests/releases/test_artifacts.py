"""Fetching candidates: both artifact styles, sha512 before use, and the cache."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from harness.errors import ArtifactError
from harness.releases.artifacts import MARKER, fetch
from harness.releases.index import FolderIndex, HttpIndex
from harness.releases.versions import Version, parse_version
from tests.releases.bucket import ARCH, Bucket, Releases

pytestmark = pytest.mark.anyio


def _v(name: str) -> Version:
    return parse_version(name, flag="--good")


async def test_both_styles_yield_the_published_runsc(
    releases: Releases, bucket: Bucket, tmp_path: Path
) -> None:
    """runsc+sha512 is used as is; gvisor.tar.bz2 gives up its runsc (at the top or in a
    folder); the result is the stand-in script, executable, with its sha256."""
    cache = tmp_path / "cache"
    async with HttpIndex(bucket.url) as index:
        for i in (0, 1, 3):  # runsc; tarball with a folder; tarball with runsc at the top
            name = releases.versions[i]
            got = await fetch(index, _v(name), arch=ARCH, cache=cache)
            assert got.downloaded and got.artifact == releases.styles[name]
            text = got.runsc.read_text()
            assert f"Stand-in for gVisor nightly {name}" in text
            assert got.runsc.stat().st_mode & 0o111
            assert got.sha256 == hashlib.sha256(got.runsc.read_bytes()).hexdigest()
            assert got.runsc == cache / "sha512" / got.sha512 / "runsc"  # keyed by content


async def test_checksum_mismatch_is_refused_and_nothing_is_kept(
    releases: Releases, bucket: Bucket, tmp_path: Path
) -> None:
    """A wrong sha512 is an error; no runsc or marker is left to be used later."""
    cache = tmp_path / "cache"
    name = releases.versions[releases.corrupt]
    async with HttpIndex(bucket.url) as index:
        with pytest.raises(ArtifactError, match="checksum mismatch") as info:
            await fetch(index, _v(name), arch=ARCH, cache=cache)
    assert info.value.reason.startswith("checksum mismatch")
    assert [p for p in cache.rglob("*") if p.is_file()] == []


async def test_cache_is_reused_without_a_download(
    releases: Releases, bucket: Bucket, tmp_path: Path
) -> None:
    """A verified entry is reused: its checksum is asked again, its artifact never."""
    cache = tmp_path / "cache"
    name = releases.versions[2]
    artifact = f"releases/nightly/{name}/{ARCH}/{releases.styles[name]}"
    async with HttpIndex(bucket.url) as index:
        first = await fetch(index, _v(name), arch=ARCH, cache=cache)
        second = await fetch(index, _v(name), arch=ARCH, cache=cache)
    assert first.downloaded and not second.downloaded
    assert bucket.downloads()[artifact] == 1
    assert second.sha256 == first.sha256
    assert json.loads((first.runsc.parent / MARKER).read_text())["sha512"] == first.sha512


async def test_a_build_rebuilt_under_the_same_version_is_fetched_anew(
    releases: Releases, bucket: Bucket, tmp_path: Path
) -> None:
    """The cache is keyed by sha512: a release rebuilt under its old name is downloaded
    and used, never served as the old build (a bisection would name the wrong one)."""
    cache = tmp_path / "cache"
    name = releases.versions[0]  # the runsc + runsc.sha512 style
    folder = releases.root / "releases" / "nightly" / name / ARCH
    async with HttpIndex(bucket.url) as index:
        first = await fetch(index, _v(name), arch=ARCH, cache=cache)
        rebuilt = (folder / "runsc").read_bytes() + b"# rebuilt\n"
        (folder / "runsc").write_bytes(rebuilt)
        (folder / "runsc.sha512").write_text(hashlib.sha512(rebuilt).hexdigest() + "  runsc\n")
        second = await fetch(index, _v(name), arch=ARCH, cache=cache)
    assert second.downloaded and second.sha512 != first.sha512
    assert second.runsc.read_bytes() == rebuilt
    assert first.runsc.read_bytes() != rebuilt  # the old build's entry is its own


async def test_damaged_cache_entry_is_fetched_again(
    releases: Releases, bucket: Bucket, tmp_path: Path
) -> None:
    """If the cached runsc no longer has its verified sha256, it is downloaded again."""
    cache = tmp_path / "cache"
    name = releases.versions[0]
    async with HttpIndex(bucket.url) as index:
        first = await fetch(index, _v(name), arch=ARCH, cache=cache)
        first.runsc.write_text("#!/bin/sh\necho tampered\n")
        again = await fetch(index, _v(name), arch=ARCH, cache=cache)
    assert again.downloaded and again.sha256 == first.sha256
    assert bucket.downloads()[f"releases/nightly/{name}/{ARCH}/runsc"] == 2


async def test_local_mirror_is_verified_too(releases: Releases, tmp_path: Path) -> None:
    """A folder index goes through the same sha512 check and cache."""
    index = FolderIndex(releases.root)
    good = await fetch(index, _v(releases.versions[1]), arch=ARCH, cache=tmp_path / "c")
    assert good.downloaded and good.artifact == "gvisor.tar.bz2"
    with pytest.raises(ArtifactError, match="checksum mismatch"):
        await fetch(index, _v(releases.versions[releases.corrupt]), arch=ARCH, cache=tmp_path / "c")


async def test_missing_build_names_what_is_there(bucket: Bucket, tmp_path: Path) -> None:
    """A version with no build for the arch says so, listing what it found."""
    async with HttpIndex(bucket.url) as index:
        with pytest.raises(
            ArtifactError, match=r"no runsc or gvisor.tar.bz2 .* \(found: nothing\)"
        ):
            await fetch(index, _v("2026-09-01"), arch="aarch64", cache=tmp_path / "c")


async def test_a_release_naming_a_cached_digest_is_read_before_it_is_used(
    releases: Releases, bucket: Bucket, tmp_path: Path
) -> None:
    """A release whose `.sha512` names another build's digest, already in the cache
    (a swapped upload, a lying mirror), is not served that build: its own artifact
    is downloaded and, not matching, refused. Only bytes it really has are used."""
    cache = tmp_path / "cache"
    good, liar = releases.versions[0], releases.versions[2]  # both the runsc style
    liar_folder = releases.root / "releases" / "nightly" / liar / ARCH
    async with HttpIndex(bucket.url) as index:
        first = await fetch(index, _v(good), arch=ARCH, cache=cache)
        (liar_folder / "runsc.sha512").write_text(f"{first.sha512}  runsc\n")
        with pytest.raises(ArtifactError, match="checksum mismatch"):
            await fetch(index, _v(liar), arch=ARCH, cache=cache)
        assert bucket.downloads()[f"releases/nightly/{liar}/{ARCH}/runsc"] == 1
        # The same bytes really published under the second name: read once, then shared.
        (liar_folder / "runsc").write_bytes(first.runsc.read_bytes())
        again = await fetch(index, _v(liar), arch=ARCH, cache=cache)
        assert again.downloaded and again.sha256 == first.sha256
        third = await fetch(index, _v(liar), arch=ARCH, cache=cache)
        assert not third.downloaded
        assert not (await fetch(index, _v(good), arch=ARCH, cache=cache)).downloaded
    marker = json.loads((first.runsc.parent / MARKER).read_text())
    assert marker["verified_for"] == [f"nightly/{good}/{ARCH}", f"nightly/{liar}/{ARCH}"]


async def test_a_mirror_entry_that_is_a_symlink_is_refused_by_name(
    releases: Releases, tmp_path: Path
) -> None:
    """A folder index whose runsc is a symlink to a host file, with that file's true
    sha512 beside it, fails naming the index's entry; nothing reaches the cache."""
    secret = tmp_path / "secret"
    secret.write_bytes(b"a host secret\n")
    name = releases.versions[0]  # the runsc + runsc.sha512 style
    folder = releases.root / "releases" / "nightly" / name / ARCH
    for entry in folder.iterdir():
        entry.unlink()
    (folder / "runsc").symlink_to(secret)
    digest = hashlib.sha512(secret.read_bytes()).hexdigest()
    (folder / "runsc.sha512").write_text(f"{digest}  runsc\n")
    cache = tmp_path / "cache"
    with pytest.raises(ArtifactError) as caught:
        await fetch(FolderIndex(releases.root), _v(name), arch=ARCH, cache=cache)
    assert caught.value.reason == f"cannot read {folder / 'runsc'}: a symlink, not a file"
    assert [p for p in cache.rglob("*") if p.is_file()] == []
