"""Harness's decoys: a file and a folder of its own, made for a runtime in each folder
its launcher's argv names beyond its policy (where a grant of removal or truncation
alone shows on no entry of the host's own), named to the probe, made again after each
cell, removed after the run, and by `harness clean` after a controller that died."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.hostside.base import CellSetup, HostSetup
from harness.hostside.hostfs import HostFsFixture, decoy_folders, read_host_fs
from harness.hostside.lease import clean
from harness.matrix.models import CommandRuntimeSpec
from harness.policy.models import FilesystemPolicy, Policy
from harness.probe.protocol import ProbeOutput
from harness.runtimes import Runtime, make_runtime
from harness.transport import LocalTransport
from tests.hostside.setups import RUN_ID, local_cell, local_host

pytestmark = pytest.mark.anyio
RUN = RUN_ID


def _runtime(*argv_paths: str, readable: tuple[str, ...] = ()) -> Runtime:
    policy = Policy(filesystem_policy=FilesystemPolicy(read_only=list(readable)))
    argv = ["launcher", *(f"--write={p}" for p in argv_paths), "--", "{probe}", "{args}"]
    return make_runtime("rt", CommandRuntimeSpec(kind="command", argv=argv, policy=policy))


def _host(workdir: Path, runtime: Runtime) -> HostSetup:
    return local_host(str(workdir), runtime)


def _cell(runtime: Runtime, workdir: Path) -> CellSetup:
    return local_cell(runtime, str(workdir))


async def test_only_folders_named_beyond_the_policy_get_decoys(tmp_path: Path) -> None:
    (tmp_path / "granted" / "deeper").mkdir(parents=True)
    view = await read_host_fs(LocalTransport())
    granted, deeper = str(tmp_path / "granted"), str(tmp_path / "granted" / "deeper")
    runtime = _runtime(granted, deeper, readable=(granted,))
    assert decoy_folders(runtime, view["mounts"], {}) == [deeper]  # type: ignore[arg-type]


async def test_no_decoys_in_a_root_of_its_own_nor_in_a_sticky_folder(tmp_path: Path) -> None:
    """bwrap's argv names places inside its own root (`allowed_inside`); a sticky
    world-writable folder (/tmp) lets anyone race the making."""
    view = await read_host_fs(LocalTransport())
    (tmp_path / "folder").mkdir()
    spec = CommandRuntimeSpec(
        kind="command",
        argv=["bwrap", "--bind", str(tmp_path / "folder"), "/x", "{probe}", "{args}"],
        allowed_inside="/allowed",
    )
    runtime = make_runtime("rt", spec)
    assert decoy_folders(runtime, view["mounts"], {}) == []  # type: ignore[arg-type]
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    (tmp_path / "work" / "runs").mkdir(parents=True)
    runtime = _runtime(str(sticky))
    fixture = HostFsFixture()
    await fixture.start(_host(tmp_path / "work", runtime))
    assert list(sticky.iterdir()) == []
    cell = _cell(runtime, tmp_path / "work")
    assert "--decoys" not in fixture.probe_args(cell)
    await fixture.collect(cell, None, ProbeOutput())  # the cell's record says why: no silence
    assert cell.evidence["decoys"] == {"planted": [], "skipped": [f"{sticky}: sticky"]}
    await fixture.stop()


async def test_decoys_are_made_named_made_again_and_removed(tmp_path: Path) -> None:
    folder = tmp_path / "cron.d"
    folder.mkdir()
    (tmp_path / "work" / "runs").mkdir(parents=True)
    runtime = _runtime(str(folder))
    fixture = HostFsFixture()
    await fixture.start(_host(tmp_path / "work", runtime))
    name = f".harness-decoy-{RUN}-0"
    assert (folder / name).read_text() == ""  # made by mktemp, renamed into place
    assert (folder / name).stat().st_mode & 0o777 == 0o600
    assert (folder / f"{name}.d").is_dir()
    args = list(fixture.probe_args(_cell(runtime, tmp_path / "work")))
    lines = args[args.index("--decoys") + 1].splitlines()
    assert len(lines) == 2 and all(line.endswith((name, f"{name}.d")) for line in lines)
    assert fixture.outcome[runtime.name] == {"planted": [str(folder)], "skipped": []}
    # A cell removed the file and put a symlink where the folder was: made anew after
    # it, the symlink removed, never followed.
    (folder / name).unlink()
    (folder / f"{name}.d").rmdir()
    (tmp_path / "elsewhere").write_text("keep")
    (folder / f"{name}.d").symlink_to(tmp_path / "elsewhere")
    (folder / name).symlink_to(tmp_path / "elsewhere")  # replaced, never written through
    await fixture._plant(runtime.name)
    assert (folder / name).is_file() and (folder / f"{name}.d").is_dir()
    assert (tmp_path / "elsewhere").read_text() == "keep"
    await fixture.stop()
    assert sorted(p.name for p in folder.iterdir()) == []
    assert not (tmp_path / "work" / "runs" / f"{RUN}.decoys").exists()


async def test_clean_removes_a_dead_runs_decoys_and_nothing_else(tmp_path: Path) -> None:
    """A controller that died before removing its decoys: `harness clean` (and the next
    run) removes what the run's registry names, by the decoys' own name only."""
    folder = tmp_path / "sbin"
    folder.mkdir()
    decoy, other = folder / f".harness-decoy-{RUN}-3", folder / "real-tool"
    decoy.write_text("x")
    (folder / f".harness-decoy-{RUN}-3.d").mkdir()
    other.write_text("keep")
    runs = tmp_path / "work" / "runs"
    runs.mkdir(parents=True)
    registry = runs / f"{RUN}.decoys"
    registry.write_text(f"{decoy}\n{decoy}.d\n{other}\n")
    cleaned = await clean(LocalTransport(), str(tmp_path / "work"), [RUN])
    assert cleaned == [RUN]
    assert sorted(p.name for p in folder.iterdir()) == ["real-tool"]
    assert not registry.exists()
