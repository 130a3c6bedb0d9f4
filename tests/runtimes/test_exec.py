"""The exec runtime kind: sandboxes something else started, judged through the
user's command into them. Run for real: containerd tasks this test starts with
`ctr run -d` (harness never starts or stops them), entered with `ctr task exec`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.execution import measures_exit
from harness.matrix.models import ExecRuntimeSpec
from harness.runtimes import CellPaths, make_runtime
from harness.runtimes.existing import ExecRuntime
from tests.conftest import CliResult, harness_cli
from tests.e2e.helpers import cells_of, leftovers, verdicts_of
from tests.lab import require_tool
from tests.probe.copies import runnable_copy
from tests.runtimes.conftest import NAMESPACE, Containerd

PROPERTIES = ("egress_confinement", "filesystem_confinement", "privilege_floor")
USER = "65534:65534"  # ctr's --user 65534 alone would leave the workload in group 0
# What the stage, run and unstage calls need inside; a distroless image lacks them.
TOOLS = ("sh", "cat", "mkdir", "chmod", "rm", "sleep")
PATHS = CellPaths(
    probe="/w/probe/p", workdir="/w", cell_dir="/w/cells/harness-ab-00001",
    cell_id="harness-ab-00001", allowed="/w/fs/harness-ab-00001-x/allowed", helpers="/h/h-1",
)  # fmt: skip


def _runtime(**spec: object) -> ExecRuntime:
    runtime = make_runtime("box", ExecRuntimeSpec(kind="exec", **spec))  # type: ignore[arg-type]
    assert isinstance(runtime, ExecRuntime)
    return runtime


def test_calls_splice_values_as_whole_arguments_with_their_own_exec_ids() -> None:
    """Stage (as the stager), run (as the workload), unstage: three calls, each with an
    exec id of its own; every value is an argument, never part of a script."""
    runtime = _runtime(
        exec=["ctr", "task", "exec", "--user", "1000", "--exec-id", "{exec_id}", "t; rm -rf /"],
        stage_exec=["ctr", "task", "exec", "--exec-id", "{exec_id}", "t; rm -rf /"],
        stage="/var/tmp/",
    )
    inv = runtime.invocation(PATHS, ["run", "--tag", PATHS.cell_id, "mechanisms"])
    argv = list(inv.argv)
    assert argv[:5] == ["sh", "-c", argv[2], "harness-exec", "/w/probe/p"]
    stage_len, run_len = int(argv[5]), int(argv[6])
    stage = argv[7 : 7 + stage_len]
    run = argv[7 + stage_len : 7 + stage_len + run_len]
    unstage = argv[7 + stage_len + run_len :]
    assert stage[:6] == ["ctr", "task", "exec", "--exec-id", "harness-ab-00001-stage",
                         "t; rm -rf /"]  # fmt: skip
    cell = "/var/tmp/harness-ab-00001"
    assert stage[-3:] == [cell, "/w/fs/harness-ab-00001-x/outside/sentinel", "1"]
    assert run[:8] == ["ctr", "task", "exec", "--user", "1000", "--exec-id", "harness-ab-00001",
                       "t; rm -rf /"]  # fmt: skip
    assert run[-4:] == ["run", "--tag", PATHS.cell_id, "mechanisms"]
    assert unstage[4] == "harness-ab-00001-unstage" and unstage[-2:] == [cell, ""]
    (cleanup,) = inv.cleanup
    assert cleanup[4] == "harness-ab-00001-cleanup" and cleanup[-2] == cell
    assert cleanup[-1] == "(^| )[h]arness-ab-00001( |$)"
    assert runtime.inside("/anything", role="allowed", cell_id=PATHS.cell_id) == f"{cell}/allowed"
    assert runtime.inside("/h/h-1", role="helpers", cell_id=PATHS.cell_id) == f"{cell}/helpers"
    assert not measures_exit(runtime), "the sandbox outlives its cells by design"


def _validate(tmp_path: Path, entry: str) -> CliResult:
    """`harness validate` of a matrix whose one runtime is `box`, kind exec, with `entry`."""
    (tmp_path / "inv.toml").write_text('[hosts.h]\ntransport = "local"\n')
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        'name = "x"\ninventory = "inv.toml"\nscenarios = ["mechanisms"]\n'
        f'[runtimes.box]\nkind = "exec"\n{entry}\n'
    )
    return harness_cli("validate", matrix)


def test_partial_exec_id_is_a_clear_error(tmp_path: Path) -> None:
    """`{exec_id}` inside a longer element would reach ctr unreplaced: exit 2, file and key."""
    result = _validate(tmp_path, 'exec = ["ctr", "task", "exec", "--exec-id={exec_id}", "t"]')
    assert result.code == 2, result.stdout + result.stderr
    assert "m.toml" in result.stderr and "runtimes.box.exec" in result.stderr
    assert "whole element" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="root, setpriv")
def test_a_stager_that_is_not_root_makes_no_false_helper(open_folder: Path) -> None:
    """`probe stage` as nobody: the setuid, setgid and capability copies cannot be made
    as they must be, so none is left behind (a plain copy would pass for "blocked")."""
    probe = runnable_copy(open_folder)
    cell = open_folder / "cell"
    cell.mkdir(mode=0o777)
    cell.chmod(0o777)
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
         str(probe), "stage", str(cell), "/nowhere/sentinel", "--helpers"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    said = dict(line.split("=") for line in done.stdout.split())
    assert said == {"setuid": "failed", "setgid": "failed", "fcap": "failed", "inh": "failed",
                    "other": "ok"}  # fmt: skip
    assert sorted(p.name for p in (cell / "helpers").iterdir()) == ["other"]
    assert os.readlink(cell / "allowed" / "planted-link") == "/nowhere/sentinel"
    assert (cell / "allowed").stat().st_mode & 0o777 == 0o777


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder nobody can traverse (pytest's own are 0700), removed after the test."""
    folder = Path(tempfile.mkdtemp(prefix="harness-exec-test-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="root, unshare")
def test_no_helper_is_made_on_a_nosuid_stage(open_folder: Path) -> None:
    """On a nosuid mount the kernel ignores set-id bits and file capabilities: a helper
    there would pass for a sandbox that refuses it, so none is made."""
    probe = runnable_copy(open_folder)
    stage = open_folder / "stage"
    stage.mkdir()
    script = 'mount -t tmpfs -o nosuid tmpfs "$1" && mkdir "$1/c" && "$2" stage "$1/c" "" --helpers'
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", str(stage), str(probe)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    said = dict(line.split("=") for line in done.stdout.split())
    assert said == {"setuid": "failed-nosuid", "setgid": "failed-nosuid",
                    "fcap": "failed-nosuid", "inh": "failed-nosuid", "other": "ok"}  # fmt: skip


def test_root_slash_is_refused(tmp_path: Path) -> None:
    """`root = "/"` would grant the host's whole tree as the sandbox's own."""
    result = _validate(tmp_path, 'exec = ["ctr", "task", "exec", "t"]\nroot = "/"')
    assert result.code == 2 and "runtimes.box" in result.stderr, result.stderr
    assert "the host's own root" in result.stderr and "Traceback" not in result.stderr


@dataclass
class Task:
    """A task started outside harness: its id and its root on the host."""

    id: str
    rootfs: Path


def _rootfs(folder: Path) -> Path:
    """A root holding only what the calls need: the tools and their libraries."""
    root = folder / "rootfs"
    for d in ("bin", "tmp", "proc", "dev", "sys", "etc"):
        (root / d).mkdir(parents=True)
    (root / "tmp").chmod(0o1777)
    for tool in TOOLS:
        real = Path(shutil.which(tool) or pytest.fail(f"no {tool}")).resolve()
        shutil.copy(real, root / "bin" / tool)
        libs = subprocess.run(["ldd", str(real)], capture_output=True, text=True).stdout
        for lib in (w for w in libs.split() if w.startswith("/")):
            target = root / lib.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                shutil.copy(lib, target)
    return root


@pytest.fixture(scope="module")
def tasks(
    containerd: Containerd, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Task]]:
    """Two long-running tasks, as an operator would have them: `box` with a network
    namespace of its own and nothing of the host's, and a process of its own running
    as the workload's user; `leaky` with the host's network, the host's /var/tmp bound
    in, and no no_new_privs."""
    folder = tmp_path_factory.mktemp("tasks")
    started: dict[str, Task] = {}
    flags = {
        "box": [],
        "leaky": [
            *("--net-host", "--allow-new-privs"),
            *("--mount", "type=bind,src=/var/tmp,dst=/var/tmp,options=rbind:rw"),
        ],
    }
    try:
        for name, extra in flags.items():
            task = Task(id=f"exec-{name}", rootfs=_rootfs(folder / name))
            containerd.ctr(
                "run", "-d", *extra, "--rootfs", str(task.rootfs), task.id, "/bin/sleep", "3600"
            )
            started[name] = task
        # The sandbox's own process as the workload's user: reading it gains nothing.
        containerd.ctr(
            "task", "exec", "-d", "--user", USER, "--exec-id", "peer", started["box"].id,
            "/bin/sleep", "3600",
        )  # fmt: skip
        yield started
    finally:
        for task in started.values():
            subprocess.run(
                ["ctr", "--address", containerd.address, "--namespace", NAMESPACE,
                 "tasks", "kill", "--signal", "SIGKILL", task.id],
                capture_output=True,
            )  # fmt: skip
            for _ in range(20):
                gone = subprocess.run(
                    ["ctr", "--address", containerd.address, "--namespace", NAMESPACE,
                     "tasks", "delete", task.id],
                    capture_output=True,
                )  # fmt: skip
                if gone.returncode == 0:
                    break
                subprocess.run(["sleep", "0.25"])
            containerd.ctr("containers", "delete", task.id)


def _entry(
    containerd: Containerd,
    name: str,
    task: Task,
    *,
    user: str | None,
    extra: str,
    root: str | None = None,
    stage_way: list[str] | None = None,
) -> str:
    way = ["ctr", "--address", containerd.address, "--namespace", NAMESPACE, "task", "exec"]
    as_user = ["--user", user] if user else []
    exec_ = [*way, *as_user, "--exec-id", "{exec_id}", task.id]
    stage = [*(stage_way or []), *way, "--user", "0", "--exec-id", "{exec_id}", task.id]
    quoted = ", ".join(json.dumps(w) for w in exec_)
    staged = f"stage_exec = {json.dumps(stage)}\n" if user else ""
    return (
        f'[runtimes.{name}]\nkind = "exec"\nexec = [{quoted}]\n{staged}'
        f'root = "{root or task.rootfs}"\n{extra}\n'
    )


@pytest.fixture(scope="module")
def exec_run(
    containerd: Containerd, tasks: dict[str, Task], tmp_path_factory: pytest.TempPathFactory
) -> tuple[int, str, Path]:
    """One run over the tasks: the workload as nobody (staged as root) in `box` and in
    `leaky`, and `box` again with its root declared too wide."""
    require_tool("ctr")
    tmp = tmp_path_factory.mktemp("exec")
    (tmp / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{tmp}/work"\n'
    )
    body = (
        _entry(containerd, "box", tasks["box"], user=USER, extra="")
        + _entry(
            containerd, "leaky", tasks["leaky"], user=USER,
            extra='expect = { egress_confinement = "violated", '
            'filesystem_confinement = "violated", privilege_floor = "violated" }',
        )
        # The same box, its root declared too wide: /tmp would grant every host
        # mount below it. The declaration is held to the sandbox's own /.
        + _entry(
            containerd, "box-wide-root", tasks["box"], user=USER, root="/tmp",
            extra='scenarios = ["filesystem-confinement"]',
        )
    )  # fmt: skip
    matrix = tmp / "m.toml"
    matrix.write_text(
        'name = "exec"\ninventory = "inv.toml"\n'
        'scenarios = ["mechanisms", "egress-confinement", "filesystem-confinement", '
        '"privilege-floor"]\n[settings]\ntimeout = 60\n' + body
    )
    result = harness_cli("run", matrix, "--out", tmp / "out")
    return result.code, result.stdout + result.stderr, tmp / "out"


def test_a_task_started_elsewhere_is_judged_through_exec(
    exec_run: tuple[int, str, Path],
) -> None:
    """The confined task is enforced on every property; the same probe through the same
    command finds the leaky task's host network and host folder, and root's reach."""
    code, output, out = exec_run
    v = verdicts_of(out)
    bad = {k for k, r in v.items() if r["verdict"] not in ("pass", "skipped")}
    assert bad == {("localhost", "box-wide-root", "filesystem_confinement")}, output
    assert code == 3, output  # that one is inconclusive
    cell = cells_of(out)[("localhost", "box")]
    assert cell["status"] == "complete", (cell["reason"], output)
    assert "setuid=ok" in cell["stderr"], cell["stderr"]
    for prop in PROPERTIES:
        row = v[("localhost", "box", prop)]
        assert (row["observed"], row["verdict"]) == ("enforced", "pass"), (prop, row)
    peers = next(c for c in cell["checks"] if c["id"] == "priv-proc-access")
    assert peers["evidence"]["own_kind"] >= 1, peers  # the box's own sleep, left out
    egress = v[("localhost", "leaky", "egress_confinement")]
    assert (egress["observed"], egress["verdict"]) == ("violated", "pass"), egress
    fs = v[("localhost", "leaky", "filesystem_confinement")]
    assert (fs["observed"], fs["verdict"]) == ("violated", "pass"), fs
    leaky = cells_of(out)[("localhost", "leaky")]["checks"]
    read = [c for c in leaky if c["id"] == "fs-routes"]
    assert read[0]["outcome"] == "escaped" and "/var/tmp/harness-sentinel-" in read[0]["detail"]
    priv = v[("localhost", "leaky", "privilege_floor")]
    assert (priv["observed"], priv["verdict"]) == ("violated", "pass"), priv
    assert priv["reason"].startswith("priv-setuid-exec escaped"), priv  # no no_new_privs
    wide = v[("localhost", "box-wide-root", "filesystem_confinement")]
    assert wide["observed"] == "inconclusive", wide
    assert "the declared root /tmp is not this sandbox's root" in wide["reason"], wide


def test_the_tasks_outlive_the_run_with_nothing_of_harness_left(
    containerd: Containerd, tasks: dict[str, Task], exec_run: tuple[int, str, Path]
) -> None:
    """harness did not stop the tasks, and left nothing in them: no staged folder, no
    process but the task's own."""
    _, _, out = exec_run
    running = containerd.ctr("tasks", "ls")
    for task in tasks.values():
        assert f"{task.id} " in running and "RUNNING" in running
        assert list((task.rootfs / "tmp").iterdir()) == []
        pids = containerd.ctr("task", "ps", task.id).split()[2:]
        # its own process and its INFO column (and the box's peer)
        assert len(pids) == (4 if task.id == "exec-box" else 2), pids
    assert leftovers(str(out.parent / "work")) == []


def test_a_hung_probe_inside_is_killed_and_unstaged(
    containerd: Containerd, tasks: dict[str, Task], tmp_path: Path
) -> None:
    """A probe that hangs in the task is killed at the cell timeout, its folder removed,
    and the task left running."""
    (tmp_path / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{tmp_path}/work"\n'
    )
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        'name = "hang"\ninventory = "inv.toml"\nscenarios = ["selftest"]\n'
        "[settings]\ntimeout = 3\ncheck_timeout = 600\n"
        + _entry(containerd, "box", tasks["box"], user=USER, extra="")
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out", timeout=60)
    assert result.code == 3, result.stdout + result.stderr
    assert cells_of(tmp_path / "out")[("localhost", "box")]["status"] == "timeout"
    assert list((tasks["box"].rootfs / "tmp").iterdir()) == []
    assert len(containerd.ctr("task", "ps", tasks["box"].id).split()) == 6
    assert leftovers(str(tmp_path / "work")) == []


def test_manifest_keeps_no_credential_from_the_way_in() -> None:
    """A token on kubectl's command line is not written into the manifest."""
    from harness.results.store.manifest import runtime_entry

    spec = ExecRuntimeSpec(
        kind="exec", exec=["kubectl", "--token", "s3cr3t", "--password=hunter2", "exec", "-i", "p"]
    )
    entry = runtime_entry(spec)
    assert "s3cr3t" not in str(entry) and "hunter2" not in str(entry)
    assert entry["exec"][:3] == ["kubectl", "--token", "REDACTED"]
    wrapped = ExecRuntimeSpec(
        kind="exec",
        exec=["env", "API_TOKEN=s3cr3tE", "curl", "-H", "Authorization: Bearer s3cr3tH",
              "--bearer", "s3cr3tB", "x"],
    )  # fmt: skip
    assert "s3cr3t" not in str(runtime_entry(wrapped))


def _wrapper(folder: Path, name: str, body: str) -> str:
    """A way in that misbehaves as `body` says, then runs the real one."""
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_a_way_in_without_stdin_is_named(
    containerd: Containerd, tasks: dict[str, Task], tmp_path: Path
) -> None:
    """A way in that does not pass stdin through (kubectl exec without -i, or with -t)
    stages a file that is not the probe: the cell is an error that says so, not "the
    probe printed nothing". (Stood in for by a wrapper that hands the way in one byte:
    ctr given no byte at all never closes the task's stdin, and the cell times out.)"""
    (tmp_path / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{tmp_path}/work"\n'
    )
    nostdin = _wrapper(tmp_path, "nostdin.sh", 'printf x | "$@"')
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        'name = "nostdin"\ninventory = "inv.toml"\nscenarios = ["mechanisms"]\n'
        + _entry(containerd, "box", tasks["box"], user=USER, extra="", stage_way=[nostdin])
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out", timeout=60)
    assert result.code == 3, result.stdout + result.stderr
    cell = cells_of(tmp_path / "out")[("localhost", "box")]
    assert cell["status"] == "error" and "must pass stdin through" in cell["reason"], cell
    assert list((tasks["box"].rootfs / "tmp").iterdir()) == []


def test_a_folder_left_in_the_sandbox_is_an_error(
    containerd: Containerd, tasks: dict[str, Task], tmp_path: Path
) -> None:
    """An unstage that fails leaves setuid-root helpers in someone's sandbox: the cell
    is no clean end (an error naming it), never a silent pass."""
    (tmp_path / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{tmp_path}/work"\n'
    )
    flaky = _wrapper(
        tmp_path, "flaky.sh", 'case "$*" in *harness-unstage*) exit 1 ;; esac\nexec "$@"'
    )
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        'name = "flaky"\ninventory = "inv.toml"\nscenarios = ["mechanisms"]\n'
        + _entry(containerd, "box", tasks["box"], user=USER, extra="", stage_way=[flaky])
    )
    try:
        result = harness_cli("run", matrix, "--out", tmp_path / "out", timeout=60)
        assert result.code == 3, result.stdout + result.stderr
        cell = cells_of(tmp_path / "out")[("localhost", "box")]
        assert cell["status"] == "error", cell
        assert "could not be removed from the sandbox" in cell["stderr"], cell["stderr"]
    finally:
        for left in (tasks["box"].rootfs / "tmp").iterdir():
            shutil.rmtree(left)
