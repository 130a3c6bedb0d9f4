"""Host preparation, run for real through the local transport: a work folder that
cannot be made fails the host, instead of quietly working somewhere else."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from harness.errors import CommandError
from harness.probe import build_probe
from harness.staging import prepare_host, upload_verified
from harness.transport import LocalTransport

pytestmark = pytest.mark.anyio


async def test_a_work_folder_that_cannot_be_made_fails_the_host(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(CommandError, match=r"File exists|Not a directory"):
        await prepare_host(
            LocalTransport(), build_probe(), workdir=str(tmp_path / "file" / "wd"), runtimes=[]
        )


async def test_the_work_folder_is_resolved_and_the_probe_found_missing(tmp_path: Path) -> None:
    state = await prepare_host(
        LocalTransport(), build_probe(), workdir=str(tmp_path / "wd"), runtimes=[]
    )
    assert state.workdir == str((tmp_path / "wd").resolve())
    assert state.probe_uploaded  # it was missing, so it was staged and verified
    assert Path(state.probe_path).is_file() and (tmp_path / "wd" / "empty").is_dir()


async def test_an_upload_whose_sha256_differs_never_reaches_its_final_path(
    tmp_path: Path,
) -> None:
    """upload_verified (the probe's and bisect's candidates' staging) refuses a file
    whose content is not the one named, and leaves no temporary copy behind."""
    source, folder = tmp_path / "source", tmp_path / "staged"
    source.write_bytes(b"not the build it claims to be")
    folder.mkdir()
    final = f"{folder}/{'0' * 64}/runsc"
    with pytest.raises(CommandError, match="sha256 mismatch"):
        await upload_verified(
            LocalTransport(), source, sha256="0" * 64, folder=str(folder), final=final
        )
    assert not Path(final).exists() and list(folder.iterdir()) == []
    good = hashlib.sha256(source.read_bytes()).hexdigest()
    await upload_verified(LocalTransport(), source, sha256=good, folder=str(folder), final=final)
    assert Path(final).read_bytes() == source.read_bytes() and Path(final).stat().st_mode & 0o111


async def test_runtimes_sharing_a_program_ask_its_version_once(tmp_path: Path) -> None:
    """A matrix of mutants names one launcher in hundreds of runtimes: its version is
    asked once per host (one start each, for 346 runtimes, outlasted the host's setup
    deadline under load), and every runtime gets the answer."""
    from harness.matrix.models import CommandRuntimeSpec
    from harness.runtimes import make_runtime

    asked = tmp_path / "asked"
    launcher = tmp_path / "launcher"
    launcher.write_text(f'#!/bin/sh\necho x >> "{asked}"\necho "launcher 1.2.3"\n')
    launcher.chmod(0o755)
    runtimes = [
        make_runtime(
            f"m{i}", CommandRuntimeSpec(kind="command", argv=[str(launcher), "{probe}", "{args}"])
        )
        for i in range(40)
    ]
    state = await prepare_host(
        LocalTransport(), build_probe(), workdir=str(tmp_path / "wd"), runtimes=runtimes
    )
    assert asked.read_text().splitlines() == ["x"]
    assert {s.available for s in state.runtimes.values()} == {True}
    assert {s.version for s in state.runtimes.values()} == {"launcher 1.2.3"}
