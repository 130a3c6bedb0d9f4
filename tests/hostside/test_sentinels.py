"""Sentinels against a declared policy: none where the policy lets the workload read."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from harness.hostside.filesystem import (
    FUNCTIONS,
    ORIGINAL,
    Sentinels,
    parse_inspection,
    placeable_folders,
)
from harness.transport import LocalTransport


def test_no_sentinel_where_the_policy_lets_the_workload_read(tmp_path: Path) -> None:
    """A policy granting /tmp (OpenShell's default does) makes a sentinel there no
    proof of anything: fs_setup makes none, and the probe is not given it; the other
    places still get theirs."""
    sentinels = Sentinels.new(workdir=str(tmp_path), cell_id="c")
    in_tmp = next(p for p in sentinels.places if p.startswith("/tmp/"))
    sentinels = replace(sentinels, skip=(in_tmp,))
    args = sentinels.probe_args(allowed_inside="/a")
    more = args[args.index("--more-sentinels") + 1].split("\n")
    assert in_tmp not in more and len(more) == 2
    script = FUNCTIONS + 'fs_setup "$1" "$2" "$3" "$4" && echo made'
    try:
        done = subprocess.run(
            ["sh", "-c", script, "fs", sentinels.root, sentinels.token, "x", in_tmp],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert done.stdout.strip() == "made"
        assert not Path(in_tmp).exists()
        assert all(Path(p).read_text() == sentinels.token for p in more)
    finally:
        subprocess.run(["sh", "-c", FUNCTIONS + 'fs_inspect "$1" t', "fs", sentinels.root])
        for p in sentinels.places:
            Path(p).unlink(missing_ok=True)


def test_the_probe_is_copied_outside_as_the_program_to_run(tmp_path: Path) -> None:
    """fs-exec-outside runs `outside/exec-me`: fs_setup makes it from the staged probe
    (executable, recorded with the rest), and none without one."""
    program = tmp_path / "probe"
    program.write_bytes(b"\x7fELF stand-in")
    script = FUNCTIONS + 'fs_setup "$1" "$2" "$3" "" "$4" && stat -c %a "$1/outside/exec-me"'
    for probe, want in ((str(program), "755"), ("", "")):
        sentinels = Sentinels.new(workdir=str(tmp_path), cell_id="c")
        try:
            done = subprocess.run(
                ["sh", "-c", script, "fs", sentinels.root, sentinels.token, "x", probe],
                capture_output=True, text=True,
            )  # fmt: skip
            assert done.stdout.strip() == want
            if want:
                made = Path(sentinels.root, "outside", "exec-me").read_bytes()
                assert made == program.read_bytes()
                assert "before:outside/exec-me=" in Path(sentinels.root, "before").read_text()
        finally:
            subprocess.run(["sh", "-c", FUNCTIONS + 'fs_inspect "$1" t', "fs", sentinels.root])
            for p in sentinels.places:
                Path(p).unlink(missing_ok=True)


def _sh(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "-c", FUNCTIONS + script, "fs", *args], capture_output=True, text=True
    )


def _granted(tmp_path: Path) -> tuple[Sentinels, Path]:
    """A fixture with one read-only grant (a folder of the test's), and where
    harness's own folder in it goes."""
    (tmp_path / "grant").mkdir()
    sentinels = Sentinels.new(workdir=str(tmp_path / "work"), cell_id="c")
    sentinels = replace(
        sentinels,
        skip=tuple(sentinels.places[:2]),  # not /tmp, /var/tmp: the test's own places only
        granted=((str(tmp_path / "grant"), "/inside/grant"),),
    )
    return sentinels, tmp_path / "grant" / sentinels.granted_name


def _setup(sentinels: Sentinels) -> subprocess.CompletedProcess[str]:
    return _sh(
        'fs_setup "$@"',
        sentinels.root, sentinels.token, ORIGINAL, "\n".join(sentinels.skip),
        "", sentinels.granted_host, sentinels.granted_token,
    )  # fmt: skip


def _inspect(sentinels: Sentinels) -> dict[str, object]:
    done = _sh('fs_inspect "$@"', sentinels.root, "t", sentinels.granted_host)
    return sentinels.inspection(parse_inspection(done.stdout))


def test_a_read_only_grant_gets_a_folder_of_harness_s_own(tmp_path: Path) -> None:
    """A new folder (never an existing one) with files anyone may change, at the path
    the sandbox sees the grant; the probe gets it and the token it must read there."""
    sentinels, mine = _granted(tmp_path)
    args = sentinels.probe_args(allowed_inside="/a")
    assert args[args.index("--granted") + 1] == f"/inside/grant/{sentinels.granted_name}"
    assert args[args.index("--granted-token") + 1] == sentinels.granted_token
    assert sentinels.granted_token != sentinels.token
    assert _setup(sentinels).returncode == 0
    assert mine.stat().st_mode & 0o777 == 0o777
    assert (mine / "sentinel").read_text() == sentinels.granted_token
    assert (mine / "overwrite-me").stat().st_mode & 0o777 == 0o666
    facts = _inspect(sentinels)
    assert facts["granted"] == [str(tmp_path / "grant")] and facts["granted_changed"] is False
    assert facts["changes"] == "" and not mine.exists()


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: (d / "overwrite-me").write_text("x"), "overwrite-me: size, mtime"),
        (lambda d: os.truncate(d / "truncate-me", 0), "truncate-me: size"),
        (lambda d: (d / "created-t").touch(), "read-only grants: 1 name(s) harness did not make"),
        (lambda d: (d / "unlink-me").unlink(), "unlink-me: missing"),
        (lambda d: (d / "sentinel").chmod(0o600), "sentinel: type and mode"),
    ],
)
def test_any_change_in_harness_s_folder_in_a_grant_is_seen(
    tmp_path: Path, change: Callable[[Path], object], said: str
) -> None:
    sentinels, mine = _granted(tmp_path)
    assert _setup(sentinels).returncode == 0
    change(mine)
    facts = _inspect(sentinels)
    assert facts["granted_changed"] is True
    assert said in str(facts["changes"]), facts["changes"]
    assert not mine.exists()


def test_a_folder_replaced_by_a_symlink_is_removed_not_followed(tmp_path: Path) -> None:
    sentinels, mine = _granted(tmp_path)
    assert _setup(sentinels).returncode == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep").write_text("k")
    shutil.rmtree(mine)
    mine.symlink_to(elsewhere)
    facts = _inspect(sentinels)
    assert facts["granted_changed"] is True and "sentinel: missing" in str(facts["changes"])
    assert not mine.is_symlink() and (elsewhere / "keep").read_text() == "k"


def test_an_existing_name_in_a_grant_is_never_taken(tmp_path: Path) -> None:
    """noclobber: a folder of that name already there fails the setup, is left as it
    was, and everything the setup made is removed."""
    sentinels, mine = _granted(tmp_path)
    mine.mkdir()
    (mine / "sentinel").write_text("theirs")
    done = _setup(sentinels)
    assert done.returncode != 0
    assert (mine / "sentinel").read_text() == "theirs" and sorted(os.listdir(mine)) == ["sentinel"]
    assert not Path(sentinels.root).exists()
    assert not Path(sentinels.places[2]).exists()


@pytest.mark.anyio
async def test_only_writable_folders_of_ordinary_files_are_placeable(tmp_path: Path) -> None:
    """Never /proc, /sys or /dev (a mkdir in a cgroup makes one), a file, a symlink
    or a missing path."""
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("f")
    (tmp_path / "link").symlink_to(tmp_path / "dir")
    wanted = [str(tmp_path / n) for n in ("dir", "file", "link", "missing")]
    found = await placeable_folders(LocalTransport(), [*wanted, "/proc", "/sys/fs/cgroup", "/dev"])
    assert found == {str(tmp_path / "dir")}
