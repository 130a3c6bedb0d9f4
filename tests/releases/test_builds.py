"""Release builds for `harness run`, against the loopback bucket: resolution of
"latest"/"nightly" and of pinned versions, one download per content, architecture
selection, and installation on a host by sha256.

The bucket (tests/releases/bucket.py) is the fake, at the outermost boundary: an HTTP
server on 127.0.0.1 speaking the bucket's XML listing API, serving stand-in builds.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from harness.errors import ArtifactError
from harness.releases.builds import ReleaseBuilds, Request
from harness.transport import LocalTransport
from tests.releases.bucket import ARCH, Bucket, Releases

pytestmark = pytest.mark.anyio

NIGHTLY = Request("nightly", "nightly")


async def test_moving_names_resolve_to_the_newest_listed_build_once(
    releases: Releases, bucket: Bucket, tmp_path: Path
) -> None:
    """Both "nightly" and "latest" in the nightly channel mean the newest listed build (every
    listing page followed), resolved once per run."""
    async with ReleaseBuilds(bucket.url, cache=tmp_path / "c") as builds:
        assert (await builds.resolve(NIGHTLY)).name == releases.versions[-1]
        listings = bucket.listings()
        assert (await builds.resolve(Request("latest", "nightly"))).name == releases.versions[-1]
        assert (await builds.resolve(NIGHTLY)).name == releases.versions[-1]
        assert bucket.listings() == 2 * listings  # one listing per name, not per call
        empty = Request("latest", "release")
        with pytest.raises(ArtifactError, match="no release builds listed"):
            await builds.resolve(empty)


async def test_one_download_per_content_across_runs(
    releases: Releases, bucket: Bucket, tmp_path: Path
) -> None:
    """A build is downloaded once; a later run (same cache) asks only for its checksum."""
    request = Request(releases.versions[0], "nightly")
    artifact = f"releases/nightly/{releases.versions[0]}/{ARCH}/runsc"
    async with ReleaseBuilds(bucket.url, cache=tmp_path / "c") as builds:
        first = await builds.build(request, "x86_64")
        assert (await builds.build(request, "amd64")) is first  # Debian's name, same build
    async with ReleaseBuilds(bucket.url, cache=tmp_path / "c") as builds:
        again = await builds.build(request, "x86_64")
    assert first.downloaded and not again.downloaded
    assert bucket.downloads()[artifact] == 1
    assert again.runsc == tmp_path / "c" / "sha512" / first.sha512 / "runsc"
    assert again.source == f"{bucket.url}/{artifact}"


async def test_each_host_architecture_gets_its_own_build(
    releases: Releases, bucket: Bucket, tmp_path: Path
) -> None:
    """An aarch64 host asks for the aarch64 build: published only for x86_64, it is an
    error naming what was found, never the x86_64 build; an unknown machine too."""
    request = Request(releases.versions[0], "nightly")
    async with ReleaseBuilds(bucket.url, cache=tmp_path / "c") as builds:
        with pytest.raises(ArtifactError, match=r"no runsc or gvisor\.tar\.bz2"):
            await builds.build(request, "aarch64")
        with pytest.raises(ArtifactError, match="riscv64"):
            await builds.build(request, "riscv64")
        assert (await builds.build(request, "x86_64")).arch == ARCH
    assert not any(k.endswith("/aarch64/runsc") for k in bucket.downloads())


async def test_a_corrupt_build_is_refused_and_a_resume_keeps_its_versions(
    releases: Releases, bucket: Bucket, tmp_path: Path
) -> None:
    """A sha512 mismatch is an error (and stays one for every host); a pinned resolution
    (a resumed run) wins over "nightly"."""
    corrupt = releases.versions[releases.corrupt]
    async with ReleaseBuilds(bucket.url, cache=tmp_path / "c") as builds:
        for _ in range(2):
            with pytest.raises(ArtifactError, match="checksum mismatch"):
                await builds.build(Request(corrupt, "nightly"), "x86_64")
    key = f"releases/nightly/{corrupt}/{ARCH}/{releases.styles[corrupt]}"
    assert bucket.downloads()[key] == 1
    pinned = {"nightly/nightly": releases.versions[2]}
    async with ReleaseBuilds(bucket.url, cache=tmp_path / "c", pinned=pinned) as builds:
        assert (await builds.resolve(NIGHTLY)).name == releases.versions[2]
        assert builds.manifest()["resolved"] == {
            "nightly/nightly": {
                "release": "nightly",
                "channel": "nightly",
                "version": releases.versions[2],
                "error": None,
                "builds": {},
            }
        }


async def test_install_stages_by_sha256_on_the_host(
    releases: Releases, bucket: Bucket, tmp_path: Path
) -> None:
    """The build lands at <workdir>/runsc-bin/<sha256>/runsc, verified, and is uploaded
    only once; it starts (`--version`) before it is used."""
    request = Request(releases.versions[0], "nightly")
    async with ReleaseBuilds(bucket.url, cache=tmp_path / "c") as builds:
        workdir = str(tmp_path / "wd")
        candidate, installed = await builds.install(
            LocalTransport(), request, workdir=workdir, machine="x86_64"
        )
        _, again = await builds.install(
            LocalTransport(), request, workdir=workdir, machine="x86_64"
        )
    assert installed.path == f"{workdir}/runsc-bin/{candidate.sha256}/runsc"
    assert hashlib.sha256(Path(installed.path).read_bytes()).hexdigest() == candidate.sha256
    assert installed.uploaded and not again.uploaded
    assert "runsc version" in installed.version
