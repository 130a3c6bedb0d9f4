"""Runner decisions that sit between the cell's command and the judge, run against
real processes and files: a late canary arrival is waited for before an attempt
that connected without the nonce can count as intercepted."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from harness.hostside.base import CellSetup, HostSetup
from harness.hostside.canary import CanaryFixture
from harness.hostside.canary_log import settle_canary, unsettled
from harness.hostside.canary_setup import RunningCanary
from harness.hostside.envelope import Report
from harness.judge.properties import Context, Outcome, judge_attempt
from harness.matrix.models import Canary
from harness.probe.protocol import ProbeOutput
from harness.results.records import HostEvidence, ProbeCheck
from harness.runner import HOSTS_PER_SLOT, Runner, RunOutcome
from harness.scenarios import SCENARIOS
from harness.scenarios.base import Need
from harness.staging import HostState
from harness.transport import LocalTransport
from tests.results.cells import record

pytestmark = pytest.mark.anyio

TAG = "harness-abcd1234-00001"
ATTEMPT = ProbeCheck(
    "tcp-raw-ip", "egress-confinement", "attempt", "succeeded", detail="connected, no nonce"
)
RULE = next(c for c in SCENARIOS["egress-confinement"].checks if c.id == "tcp-raw-ip")
TARGETS = frozenset({"egress-confinement"})
WAIT = 0.5


def final_outcome(evidence: HostEvidence) -> Outcome:
    """The attempt's outcome once the host's evidence is weighed, by its declared rule."""
    cell = dataclasses.replace(record(["egress-confinement"]), host_side=evidence)
    return judge_attempt(ATTEMPT, RULE, Context(cell, TAG))


@pytest.fixture
def canary(tmp_path: Path) -> Iterator[RunningCanary]:
    """A live process standing in for the canary, and its log."""
    log = tmp_path / "canary.log"
    log.write_text('{"event":"ready"}\n')
    proc = subprocess.Popen(["sleep", "60"])
    yield RunningCanary("10.0.0.1", Canary(), "nonce", str(log), pid=str(proc.pid))
    proc.kill()
    proc.wait()


def test_only_an_attempt_refused_at_once_needs_no_wait() -> None:
    refused = ProbeCheck(
        "tcp-raw-ip", "egress-confinement", "attempt", "blocked", errno="ENETUNREACH"
    )
    timed_out = ProbeCheck(
        "dns-alt-udp", "egress-confinement", "attempt", "blocked", errno="ETIMEDOUT"
    )
    answered = ProbeCheck("tcp-denied-name", "egress-confinement", "attempt", "blocked")  # an rcode
    control = ProbeCheck("egress-control", "egress-confinement", "control", "failed")
    fs = ProbeCheck("fs-read-outside", "filesystem-confinement", "attempt", "succeeded")
    escaped = ProbeCheck("tcp-raw-ip", "egress-confinement", "attempt", "escaped")
    assert not unsettled(ProbeOutput(checks=[refused, escaped, control, fs]), TARGETS)
    for maybe_in_flight in (ATTEMPT, timed_out, answered):
        assert unsettled(ProbeOutput(checks=[refused, maybe_in_flight]), TARGETS)
        assert not unsettled(ProbeOutput(checks=[maybe_in_flight]), frozenset({"other"}))


async def test_a_late_arrival_makes_the_attempt_an_escape(canary: RunningCanary) -> None:
    """The sandbox's proxy delivers the attempt to the canary after the cell ended:
    without the second look it would be judged intercepted (blocked)."""
    assert final_outcome(HostEvidence(canary_events=[])).outcome == "blocked"
    line = {"event": "tcp", "peer": "10.0.0.2:4000", "line": f"HARNESS {TAG} tcp-raw-ip"}

    def arrive() -> None:
        time.sleep(WAIT / 3)
        with open(canary.log_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")

    late = threading.Thread(target=arrive)
    late.start()
    found = await settle_canary(LocalTransport(), canary, wait=WAIT)
    late.join()
    outcome = final_outcome(HostEvidence(**found))
    assert outcome.outcome == "escaped" and "10.0.0.2:4000" in (outcome.detail or "")


async def test_a_canary_that_died_meanwhile_is_an_error(canary: RunningCanary) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    canary.pid = str(dead.pid)
    found = await settle_canary(LocalTransport(), canary, wait=0)
    assert found["canary_events"] is None
    assert final_outcome(HostEvidence(**found)).outcome == "error"


def _fixture(canary: RunningCanary, settle: float) -> CanaryFixture:
    """A started canary fixture whose settle window is over (`waiting` is False)."""
    fixture = CanaryFixture()
    fixture.host = HostSetup(
        transport=LocalTransport(),
        state=HostState("/w", "6.1", "x86_64", "/w/probe", False),
        index=0,
        run_id="abcd1234",
        nonce="nonce",
        high_port=40000,
        canary=Canary(settle=settle),
        needs=frozenset({Need.CANARY, Need.TARGETS}),
        targets=TARGETS,
    )
    fixture.running = canary
    return fixture


async def test_a_cell_whose_sandbox_never_started_has_no_canary_evidence(
    canary: RunningCanary,
) -> None:
    """Sentinels that could not be made stop the sandbox before the canary is asked:
    that is recorded as the setup error, not as a dead canary."""
    cell = CellSetup(cell=None, cell_id=TAG, runtime=None, paths=None)  # type: ignore[arg-type]
    report = Report(exit_status=87, setup_error="mkdir: File exists")
    await _fixture(canary, 0).collect(cell, report, ProbeOutput())
    assert cell.evidence == {}


async def test_a_rerun_after_the_window_waits_a_whole_window(canary: RunningCanary) -> None:
    """A cell run again after the host's settle window (`--reruns`) waits a window of
    its own: a relay that delivers well after a moment, but within the window, is
    still an escape, never `blocked (intercepted)`."""
    window = 3.0
    fixture = _fixture(canary, window)
    assert fixture.window() is None
    line = {"event": "tcp", "peer": "10.0.0.2:4000", "line": f"HARNESS {TAG} tcp-raw-ip"}

    def arrive() -> None:
        time.sleep(window / 3)  # later than any short pause, well within the window
        with open(canary.log_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")

    cell = CellSetup(cell=None, cell_id=TAG, runtime=None, paths=None)  # type: ignore[arg-type]
    late = threading.Thread(target=arrive)
    late.start()
    await fixture.collect(cell, None, ProbeOutput(checks=[ATTEMPT]))
    late.join()
    evidence = HostEvidence(tag=TAG, **cell.evidence)
    assert evidence.canary_has == ["ipv4", "capture"]
    outcome = final_outcome(evidence)
    assert outcome.outcome == "escaped" and "10.0.0.2:4000" in (outcome.detail or "")


async def test_the_host_window_counts_from_the_last_sandbox_exit(canary: RunningCanary) -> None:
    """The host's window ends `settle` after its last sandbox was seen over (`since`),
    however long the controller spent on the cell afterwards: never sooner (a relay
    holding what it caught until the sandbox is gone is still caught), never a
    whole window more."""
    window = 1.0
    fixture = _fixture(canary, window)
    fixture.waiting = True
    line = {"event": "tcp", "peer": "10.0.0.2:4000", "line": f"HARNESS {TAG} tcp-raw-ip"}
    since = time.monotonic()

    def arrive() -> None:  # a relay delivering 0.8 window after the sandbox's end
        time.sleep(0.8 * window)
        with open(canary.log_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")

    late = threading.Thread(target=arrive)
    late.start()
    time.sleep(0.4 * window)  # the controller busy with the cell after its sandbox
    cell = dataclasses.replace(
        record(["egress-confinement"]),
        checks=[ATTEMPT],
        host_side=HostEvidence(tag=TAG, canary_events=[], canary_has=["ipv4"]),
    )
    [evidence] = await fixture.late([cell], since=since)
    waited = time.monotonic() - since
    late.join()
    assert window <= waited < 1.4 * window
    assert evidence.settled == window
    outcome = final_outcome(evidence)
    assert outcome.outcome == "escaped" and "(after the cell)" in (outcome.detail or "")


def test_probe_deadline_before_the_remote_timeout_is_a_timeout(tmp_path: Path) -> None:
    """Under load the probe's own deadline (the same cell timeout, passed down) can
    fire before `timeout` does: the real probe's fatal deadline line and exit 3 make
    the cell a `timeout`, as the remote timeout's 124 would, never an `error`."""
    from harness.execution import cell_status
    from harness.probe.build import build_probe
    from harness.probe.protocol import parse_output
    from harness.results.records import CellStatus
    from harness.transport import Completed

    probe = build_probe()
    argv = [str(probe.path), "run", "--deadline-ms", "300", "--check-timeout-ms", "60000",
            "--cell-nonce", "n", "selftest"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert done.returncode == 3 and '"deadline"' in done.stdout
    completed = Completed(
        argv=tuple(argv), exit_status=3, signal=None, stdout=done.stdout, stderr="", elapsed=0.3
    )
    output = parse_output(done.stdout, cell_nonce="n")
    status, why = cell_status(completed, output, elapsed=0.3, timeout=0.3)
    assert status is CellStatus.TIMEOUT, why


async def test_hosts_start_in_plan_order_a_few_per_cell_slot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fleet is not connected all at once (10,000 hosts held over 1 GB waiting for
    cell slots): at most HOSTS_PER_SLOT x concurrency hosts are under way, they start
    in plan order with their own cells, and the manifest names every host from the start."""
    hosts = [
        types.SimpleNamespace(name=f"h{i}", reached_by=lambda: {"by": "ssh"}) for i in range(9)
    ]
    cells = [types.SimpleNamespace(host=h, key=f"{h.name}/{rt}") for h in hosts for rt in "ab"]
    runner = Runner.__new__(Runner)
    runner.plan = types.SimpleNamespace(hosts=hosts, cells=cells)  # type: ignore[assignment]
    runner.outcome = RunOutcome(run_id="r")
    runner._hosts = anyio.Semaphore(HOSTS_PER_SLOT * 1)  # concurrency = 1
    under_way: set[str] = set()
    most, started, named = 0, [], []

    async def run_host(
        host: types.SimpleNamespace, index: int, own: list[types.SimpleNamespace]
    ) -> None:
        nonlocal most
        named.append(sorted(runner.outcome.hosts))
        started.append((index, host.name, [c.key for c in own]))
        under_way.add(host.name)
        most = max(most, len(under_way))
        await anyio.sleep(0.01)
        under_way.discard(host.name)
        runner._hosts.release()

    monkeypatch.setattr(runner, "_run_host", run_host)
    await runner._run_hosts()
    assert most == HOSTS_PER_SLOT
    assert started == [(i, f"h{i}", [f"h{i}/a", f"h{i}/b"]) for i in range(9)]
    assert named[0] == sorted(h.name for h in hosts)
    assert list(runner.outcome.hosts) == [h.name for h in hosts]


def _probe_like(folder: Path, *args: str) -> subprocess.Popen[bytes]:
    """A process whose command line is `/probe ARGS` (a probe's lingerer, as pgrep
    shows it): Python running a script named `run` that sleeps, started as /probe."""
    (folder / "run").write_text("import time\ntime.sleep(30)\n")
    return subprocess.Popen(["/probe", *args], executable=sys.executable, cwd=folder)


@pytest.mark.anyio
async def test_what_of_a_cell_outlives_its_runtime_is_found_and_killed(tmp_path: Path) -> None:
    """A process whose command line names the cell, left after its sandbox ended, is a
    survivor: listed at once if it is the workload's own (the probe's lingerer), and
    killed; another cell's, or none, is not."""
    from harness.execution import survivors

    cell = f"harness-{os.getpid():08x}-00042"
    lingerer = _probe_like(tmp_path, "run", "--tag", cell, "--n")
    other = _probe_like(tmp_path, "run", "--tag", cell[:-1] + "3")
    # Another cell's sandbox handed a file of this cell's folder names the id in a path.
    handed = subprocess.Popen(["sh", "-c", "sleep 30", "x", "--host-unix", f"/w/{cell}/l.sock"])
    try:
        t0 = time.monotonic()
        found = await survivors(LocalTransport(), cell)
        assert found is not None and len(found) == 1, found
        assert found[0].startswith(f"{lingerer.pid} /probe run --tag {cell}")
        assert time.monotonic() - t0 < 1.5  # the workload's own: no teardown wait
        assert lingerer.wait(timeout=10) == -9  # killed
        assert other.poll() is None and handed.poll() is None  # other cells' live
        assert await survivors(LocalTransport(), cell) == []
    finally:
        for p in (lingerer, other, handed):
            p.kill()
            p.wait()


@pytest.mark.anyio
async def test_a_launcher_s_relay_is_given_the_teardown_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A relay a launcher's shell script forked carries the probe's arguments further
    along its command line. It is the runtime's, not the workload's: given the
    teardown time (what it sends then still reaches the canary), not killed at once."""
    import harness.execution as execution

    monkeypatch.setattr(execution, "TEARDOWN_S", 1.5)
    cell = f"harness-{os.getpid():08x}-00045"
    relay = subprocess.Popen(["sh", "-c", "sleep 0.5", "launcher", "/probe", "run", "--tag", cell])
    try:
        assert await execution.survivors(LocalTransport(), cell) == []
        assert relay.wait(timeout=10) == 0  # ended by itself, never killed
    finally:
        relay.kill()
        relay.wait()


class _Counting(LocalTransport):
    """A local transport that counts the commands it runs."""

    def __init__(self) -> None:
        super().__init__()
        self.commands: list[tuple[str, ...]] = []

    async def run(self, argv, **kwargs):  # type: ignore[no-untyped-def]
        self.commands.append(tuple(argv))
        return await super().run(argv, **kwargs)


@pytest.mark.anyio
async def test_the_workload_s_survivor_is_found_and_killed_in_one_command(
    tmp_path: Path,
) -> None:
    """One round trip to the host for the probe's lingerer, found and killed at once
    (a host a WAN away paid two); nothing found, one command too."""
    from harness.execution import survivors

    cell = f"harness-{os.getpid():08x}-00043"
    lingerer = _probe_like(tmp_path, "run", "--tag", cell)
    try:
        transport = _Counting()
        found = await survivors(transport, cell)
        assert found is not None and len(found) == 1, found
        assert lingerer.wait(timeout=10) == -9
        assert len(transport.commands) == 1, transport.commands
        # The id is never one word of the command, so its shell cannot match itself.
        assert not any(cell in word for word in transport.commands[0][3:]), transport.commands
        transport = _Counting()
        assert await survivors(transport, cell) == []
        assert len(transport.commands) == 1
    finally:
        lingerer.kill()
        lingerer.wait()


@pytest.mark.anyio
async def test_a_runtime_s_survivor_is_given_the_teardown_time_then_killed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process of the runtime's that names the cell (a gofer, a VMM) is looked at again
    until TEARDOWN_S, not killed at once; still there then, it is killed and listed.
    One that ends within the time is not a survivor."""
    import harness.execution as execution

    monkeypatch.setattr(execution, "TEARDOWN_S", 0.6)
    cell = f"harness-{os.getpid():08x}-00044"
    gofer = subprocess.Popen(["sh", "-c", "sleep 30", "x", "--root", "/r", cell])
    brief = subprocess.Popen(["sh", "-c", "sleep 0.3", "x", "--name", cell + "0"[:0]])
    try:
        transport = _Counting()
        t0 = time.monotonic()
        found = await execution.survivors(transport, cell)
        assert time.monotonic() - t0 >= 0.6
        assert found is not None and len(found) == 1 and found[0].startswith(str(gofer.pid)), found
        assert gofer.wait(timeout=10) == -9
        assert brief.wait(timeout=10) == 0  # ended by itself, never killed
        assert len(transport.commands) >= 3  # looked again, not killed at the first look
    finally:
        for p in (gofer, brief):
            p.kill()
            p.wait()
