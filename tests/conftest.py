"""Shared fixtures: one set of real sshd instances for the whole session."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

from tests import lanes
from tests.lab import Sshd, free_port, keygen, require_tool, start_sshd

ROOT = Path(__file__).resolve().parent.parent

# Under CI the fuzzing is derandomized, so a run is reproducible; locally it keeps
# exploring (and remembers failures in .hypothesis/). No per-example deadline either
# way: on a shared, busy 2-core machine an example that runs a shell takes 50 ms or
# 300 ms by the load, and speed is the benches' business, not the tests'.
settings.register_profile("local", deadline=None)
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "local")


def pytest_configure(config: pytest.Config) -> None:
    lanes.name_the_run(config)


@pytest.fixture(autouse=True)
def _no_inherited_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every `harness` a test starts draws as for a pipe, whatever the shell says.

    GNU readline, once anything in the test process imports it, exports COLUMNS=80 and
    LINES at the C level, behind os.environ's back: children would fit their report to 80
    columns as if a user had asked. A test that wants a width passes one explicitly."""
    for name in ("COLUMNS", "LINES"):
        monkeypatch.delenv(name, raising=False)
        os.unsetenv(name)


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Lab:
    """Two real sshd hosts: `trusted` is in known_hosts, `stranger` is not."""

    folder: Path
    client_key: Path
    known_hosts: Path
    trusted: Sshd
    stranger: Sshd
    dead_address: str
    dead_port: int

    def inventory(self, path: Path, *, extra: str = "") -> Path:
        """Write an inventory naming the lab's hosts; each gets its own workdir."""
        path.write_text(
            f"""
[defaults]
user = "root"
identity_file = "{self.client_key}"
known_hosts = "{self.known_hosts}"
connect_timeout = 10

[hosts.trusted]
address = "{self.trusted.address}"
port = {self.trusted.port}
workdir = "{path.parent}/work-trusted"
tags = ["lab"]

[hosts.stranger]
address = "{self.stranger.address}"
port = {self.stranger.port}
workdir = "{path.parent}/work-stranger"

[hosts.dead]
address = "{self.dead_address}"
port = {self.dead_port}
workdir = "{path.parent}/work-dead"
connect_timeout = 3
{extra}
"""
        )
        return path


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """Start the sshd instances once; every SSH test shares them."""
    require_tool("sshd")
    require_tool("ssh-keygen")
    folder = tmp_path_factory.mktemp("lab")
    client_key = folder / "client_key"
    client_pub = keygen(client_key, "harness-tests")
    authorized = folder / "authorized_keys"
    authorized.write_text(client_pub + "\n")
    started: list[Sshd] = []
    try:
        trusted = start_sshd(folder, name="trusted", address="127.0.0.2", authorized=authorized)
        started.append(trusted)
        stranger = start_sshd(folder, name="stranger", address="127.0.0.3", authorized=authorized)
        started.append(stranger)
        known_hosts = folder / "known_hosts"
        known_hosts.write_text(trusted.known_hosts_line() + "\n")
        yield Lab(
            folder=folder,
            client_key=client_key,
            known_hosts=known_hosts,
            trusted=trusted,
            stranger=stranger,
            dead_address="127.0.0.4",
            dead_port=free_port("127.0.0.4"),
        )
    finally:
        for sshd in started:
            sshd.stop()


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str


def harness_cli(*args: str | Path, cwd: Path | None = None, timeout: float = 240) -> CliResult:
    """Run the real `harness` command in a subprocess, as a user would."""
    done = subprocess.run(
        [sys.executable, "-m", "harness", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=timeout,
    )
    return CliResult(done.returncode, done.stdout, done.stderr)


@pytest.fixture(scope="session")
def local_matrix_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, Path]:
    """One run of the shipped default matrix (matrices/local.toml, every scenario),
    shared by every test that only reads its results folder: a run costs about 15 s,
    and three modules read one (in either lane: the first to ask makes it)."""
    for tool in ("runsc", "bwrap", "runc", "ip"):
        require_tool(tool)

    def run() -> dict[str, str | int]:
        out = tmp_path_factory.mktemp("local-matrix") / "results"
        result = harness_cli("run", "matrices/local.toml", "--out", out)
        return {"code": result.code, "output": result.stdout + result.stderr, "out": str(out)}

    made = lanes.once("local-matrix", run)
    return made["code"], made["output"], Path(made["out"])


# The suite's one long wait is the mutants matrix (about 160 s on two quiet cores). When
# a selected test reads it, it starts in the background as the session starts, and the
# tests that touch nothing of the host's (no sandbox, canary, namespace, host-wide
# listing or settle window: these folders and modules) run first, beside it. Among them
# are runs of the `mechanisms` and `selftest` scenarios alone, over the lab's sshd or
# locally: no property is judged, no canary or fixture is made, and a probe that reads
# facts (unsandboxed, or in a runsc of the run's own root), waited on for deadlines and
# cut connections, is mostly idle and in nothing the mutants' cells judge.
# Every other test starts only once it is over: no sandbox of the suite's runs beside
# it, so what it judges, and what they assert of the host, is as when the suite ran
# one thing at a time.
BESIDE_THE_BACKGROUND = frozenset(
    {"judge", "results", "matrix", "policy", "scenarios", "catalogue", "docs", "releases",
     "transport", "test_cache.py", "test_files.py", "test_imports.py", "test_mutation.py",
     "test_plan.py", "test_staging.py", "test_suite.py",
     # mechanisms and selftest alone:
     "e2e/test_hostile.py", "e2e/test_hostile_display.py", "e2e/test_run_ssh.py",
     "faults/test_stalled_host.py", "faults/test_special_files.py",
     "faults/test_output_paths.py", "faults/test_matrix_size.py", "faults/test_host_text.py",
     "faults/test_outputs.py", "faults/test_lease_parser.py"}
)  # fmt: skip
MUTANTS_TOOLS = ("runsc", "bwrap", "runc", "ip", "setpriv")


@dataclass
class BackgroundRun:
    """`harness run MATRIX --out OUT` in a subprocess of its own, started by whichever
    lane asks first (`process` is that lane's; the other has None) and waited on by
    both: its exit code is written to FOLDER when it ends."""

    out: Path
    log: Path
    rc: Path
    process: subprocess.Popen[bytes] | None

    @classmethod
    def start_or_join(cls, name: str, matrix: str) -> BackgroundRun:
        lanes.FOLDER.mkdir(exist_ok=True)
        with lanes.locked(lanes.FOLDER / f"{name}.lock"):
            started, rc = lanes.FOLDER / f"{name}.started", lanes.FOLDER / f"{name}.rc"
            if started.exists():
                out = Path(started.read_text())
                return cls(out, out.parent / f"{out.name}.log", rc, None)
            out = Path(os.environ.get("TMPDIR", "/tmp")) / f"{name}-{lanes.RUN[:12]}"
            log = out.parent / f"{out.name}.log"
            with log.open("wb") as sink:
                process = subprocess.Popen(
                    [sys.executable, "-m", "harness", "run", matrix, "--out", str(out)],
                    stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=ROOT,
                )  # fmt: skip
            threading.Thread(target=_record_exit, args=(process, rc), daemon=True).start()
            started.write_text(str(out))
            return cls(out, log, rc, process)

    def wait(self, timeout: float | None = None) -> CliResult:
        """Its exit code and output; stopped (as by a user's Ctrl-C) past `timeout`
        where this lane started it."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.rc.exists():
            if deadline is not None and time.monotonic() > deadline:
                self.stop()
                raise subprocess.TimeoutExpired(f"harness run --out {self.out}", timeout or 0)
            time.sleep(0.5)
        return CliResult(int(self.rc.read_text()), self.log.read_text(errors="replace"), "")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # harness tears its cells down
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _record_exit(process: subprocess.Popen[bytes], rc: Path) -> None:
    code = process.wait()
    partial = rc.with_suffix(".part")
    partial.write_text(str(code))
    partial.rename(rc)  # whole or absent for the lane that polls it


_background: dict[str, BackgroundRun] = {}


def background_run(name: str, matrix: str, *, timeout: float) -> tuple[CliResult, Path]:
    """The background run `name` of `matrix`, over: the one the session started, or
    one started now (where the session did not: its tests selected alone)."""
    run = _background.get(name)
    if run is None:
        run = _background[name] = BackgroundRun.start_or_join(name, matrix)
    return run.wait(timeout), run.out


def _beside_the_background(item: pytest.Item) -> bool:
    where = _where(item)
    return where in BESIDE_THE_BACKGROUND or where.split("/")[0] in BESIDE_THE_BACKGROUND


def _where(item: pytest.Item) -> str:
    return Path(str(item.path)).relative_to(ROOT / "tests").as_posix()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Start the mutants run now where a selected test reads it and others can run
    beside it, and put those first (a stable sort: each module stays whole; both lanes
    sort alike, as xdist requires). The ALONE modules go last: one waits, its lane
    idle, for the other lane's module to end (the turnstile, tests/lanes.py), and at the
    end they follow one another with no long shared module to wait for."""
    if config.option.collectonly:
        return
    items.sort(key=lambda i: _where(i) in lanes.ALONE)
    wants = any("mutants_run" in getattr(i, "fixturenames", ()) for i in items)
    if not wants or not any(map(_beside_the_background, items)):
        return
    if not all(shutil.which(t) for t in MUTANTS_TOOLS):
        return  # its fixture skips (or, under CI, fails) as it always did
    items.sort(key=lambda i: not _beside_the_background(i))
    _background["mutants"] = BackgroundRun.start_or_join("mutants", "matrices/mutants.toml")


_lock = lanes.ModuleLock()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[object]:
    """Before a test that touches the host: the background runs are over; then the
    lanes' lock for its module (tests/lanes.py), let go after the module's last test.
    Outermost, so neither wait counts against a test's time limit."""
    if not _beside_the_background(item):
        for run in _background.values():
            run.wait()
    where = _where(item)
    _lock.enter(where, alone=where in lanes.ALONE)
    try:
        return (yield)
    finally:
        if nextitem is None or nextitem.path != item.path:
            _lock.leave()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The lane that started a background run waits for its end (the other lane may
    still read it), unless the session is being cut short; the last process out (xdist's
    controller, or the one process) removes the lanes' folder."""
    cut = session.shouldstop or exitstatus == pytest.ExitCode.INTERRUPTED
    for run in _background.values():
        if cut:
            run.stop()
        elif run.process is not None:
            run.process.wait()
    _lock.leave()
    if not lanes.is_worker(session.config):
        shutil.rmtree(lanes.FOLDER, ignore_errors=True)
