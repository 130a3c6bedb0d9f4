"""The privilege helpers, staged for real through the local transport into a
private top folder (the shared one is used by other runs on this machine)."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import anyio
import pytest

from harness.errors import CommandError
from harness.hostside.helpers import stage_helpers
from harness.transport import LocalTransport

pytestmark = pytest.mark.anyio


def _probe(tmp_path: Path) -> Path:
    probe = tmp_path / "probe"
    probe.write_bytes(b"#!/bin/sh\necho probe\n")
    probe.chmod(0o755)
    return probe


async def test_a_staged_helper_is_never_modified(tmp_path: Path) -> None:
    """Staging again (another run) leaves the staged files untouched: an in-place
    copy and chown would clear the setuid bit under a run that is using it."""
    probe, top = _probe(tmp_path), tmp_path / "top"
    first = await stage_helpers(
        LocalTransport(), probe=str(probe), probe_sha="a" * 64, top=str(top)
    )
    assert first.setuid_ok
    setuid = Path(first.folder) / "setuid"
    before = os.stat(setuid)
    assert before.st_mode & stat.S_ISUID
    again = await stage_helpers(
        LocalTransport(), probe=str(probe), probe_sha="a" * 64, top=str(top)
    )
    after = os.stat(setuid)
    assert again == first
    assert (after.st_ino, after.st_ctime_ns, after.st_mode) == (
        before.st_ino,
        before.st_ctime_ns,
        before.st_mode,
    )


async def test_concurrent_stagings_agree_on_one_complete_folder(tmp_path: Path) -> None:
    """Many runs staging at once all get the same folder, with a setuid helper,
    and no half-made staging folder is left behind."""
    probe, top = _probe(tmp_path), tmp_path / "top"
    results = []

    async def stage() -> None:
        results.append(
            await stage_helpers(
                LocalTransport(), probe=str(probe), probe_sha="b" * 64, top=str(top)
            )
        )

    async with anyio.create_task_group() as tg:
        for _ in range(12):
            tg.start_soon(stage)
    assert len({r.folder for r in results}) == 1
    assert all(r.setuid_ok for r in results)
    assert os.stat(Path(results[0].folder) / "setuid").st_mode & stat.S_ISUID
    assert sorted(p.name for p in top.iterdir()) == [Path(results[0].folder).name]


async def test_other_is_the_probe_with_bytes_appended_and_its_hash_is_reported(
    tmp_path: Path,
) -> None:
    """`other` is another binary (another sha256), and staging says which: the hash
    a decision record about its connection must carry (attr-two-binaries)."""
    probe, top = _probe(tmp_path), tmp_path / "top"
    staged = await stage_helpers(
        LocalTransport(), probe=str(probe), probe_sha="b" * 64, top=str(top)
    )
    other = (Path(staged.folder) / "other").read_bytes()
    assert other.startswith(probe.read_bytes()) and other != probe.read_bytes()
    assert staged.other_sha256 == hashlib.sha256(other).hexdigest()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: a top folder of another uid's")
@pytest.mark.parametrize("forged", ["top", "link"])
async def test_a_top_folder_another_user_made_first_is_refused(tmp_path: Path, forged: str) -> None:
    """/var/tmp is anyone's: a local user who makes harness-helpers-0 first (or a link
    of that name) owns it still after root's chmod, and could stage forged helpers in
    it (whoami lines that read blocked) or an `other` that cells run as root. Staging
    refuses such a folder; it never reports the forged one."""
    probe = _probe(tmp_path)
    top = tmp_path / "top"
    if forged == "top":
        top.mkdir(mode=0o777)
        forged_dir = top / ("h-" + "c" * 16)
        forged_dir.mkdir()
        (forged_dir / ".ready").write_text("setuid=ok\nsetgid=ok\nfcap=ok\n")
        for p in (top, forged_dir, forged_dir / ".ready"):
            os.chown(p, 65534, 65534)
    else:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        os.chown(elsewhere, 65534, 65534)
        top.symlink_to(elsewhere)
    with pytest.raises(CommandError, match="not a folder of uid 0's own"):
        await stage_helpers(LocalTransport(), probe=str(probe), probe_sha="c" * 64, top=str(top))
