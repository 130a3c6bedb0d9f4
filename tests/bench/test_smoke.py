"""Every benchmark's `--smoke` mode, so that a refactor that breaks a bench breaks the
build: a few hosts, one round, seconds each. Their numbers mean nothing; that each
bench runs to its end, over cells that all completed, does.

The scripts run at once (most of their time is waiting: settle windows, sandboxes
starting), each in its own process with this tree's harness, as a user runs them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench._common import Incomplete, require_complete
from tests.lab import require_tool

ROOT = Path(__file__).resolve().parents[2]
SMOKES = {
    "amortisation": ["bench/amortisation.py", "--smoke"],
    "fanout": ["bench/fanout.py", "--smoke"],
    "fanout_wan": ["bench/fanout_wan.py", "--smoke"],
    "scale": ["bench/scale.py", "--smoke"],
    "scale-unbound": ["bench/scale.py", "--smoke", "--unbound"],
    "scale-properties": ["bench/scale.py", "--smoke", "--properties"],
    "egress_sweep": ["bench/egress_sweep.py", "--smoke"],
    "egress_budget": ["bench/egress_budget.py", "--smoke"],
    "supervisor": ["bench/supervisor.py", "--smoke"],
    "report_size": ["bench/report_size.py", "--smoke"],
    "reports": ["bench/reports.py", "--smoke"],
    "probe_checks": ["bench/probe_checks.py", "--smoke"],
    "canary_start": ["bench/canary_start.py", "--smoke"],
}
TIMEOUT = 150
# Started once the others are over: its WAN lab holds every chunk 20 ms in a user-space
# proxy under CPU quotas, and with a dozen other benches on two cores its SSH sessions
# were cut short once ("SSH connection closed" on 4 of 6 cells): a bench about
# orchestration is not smoke-tested on a saturated machine.
ALONE = frozenset({"fanout_wan"})
# All but these: the LAN fan-out, the longest smoke (its tail alone was about 17 s of
# the module's 72), is mostly waiting on its two sshd (under 1 s of CPU per harness run
# of 10 s), so the WAN one starts beside it rather than after it.
MAY_STILL_RUN = frozenset({"fanout"})
# What a cell makes in the host's shared folders, that must be gone after it.
SHARED_FOLDERS = (Path("/tmp"), Path("/var/tmp"))


def left_in_shared_folders() -> set[str]:
    """Every sentinel a cell's fixture puts in /tmp and /var/tmp, by path."""
    return {str(p) for d in SHARED_FOLDERS for p in d.glob("harness-sentinel-*")}


class Smokes:
    """The smoke runs, started at once; `finished` waits for one."""

    def __init__(self, logs: Path, alone: frozenset[str] = ALONE) -> None:
        self.logs = logs
        self.alone = alone  # ALONE's whose tests are selected: started early, unasked
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.started: dict[str, float] = {}
        self.env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        for name in SMOKES.keys() - ALONE:
            self._start(name)

    def _start(self, name: str) -> None:
        with (self.logs / f"{name}.out").open("wb") as out:
            self.procs[name] = subprocess.Popen(
                [sys.executable, *SMOKES[name]], cwd=ROOT, env=self.env, stdout=out, stderr=out
            )
        self.started[name] = time.monotonic()

    def _start_alone_when_free(self) -> None:
        """ALONE's smokes (those selected), once every other but MAY_STILL_RUN's is over."""
        if self.procs.keys() >= self.alone:
            return
        others = (p for n, p in self.procs.items() if n not in ALONE | MAY_STILL_RUN)
        if all(p.poll() is not None for p in others):
            for name in sorted(self.alone - self.procs.keys()):
                self._start(name)

    def finished(self, name: str) -> tuple[int, str]:
        """Its exit status and its output. Each smoke has TIMEOUT from its start; while
        one is waited for, ALONE's start as soon as they may."""
        if name in ALONE:
            self.alone |= {name}
        while (proc := self.procs.get(name)) is None or proc.poll() is None:
            self._start_alone_when_free()
            # Itself, or (not started yet) those it waits for.
            waits = [name] if name in self.procs else list(self.procs)
            now = time.monotonic()
            for late in (n for n in waits if self.procs[n].poll() is None):
                if now - self.started[late] > TIMEOUT:
                    raise subprocess.TimeoutExpired(SMOKES[late], TIMEOUT)
            time.sleep(0.2)
        self._start_alone_when_free()
        return proc.returncode, (self.logs / f"{name}.out").read_text()

    def stop(self) -> None:
        """Each still running is stopped as `kill` stops it (it removes what it made, as
        on Ctrl-C: tests/bench/test_interrupted.py), killed only if that takes too long."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def smokes(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Smokes]:
    for tool in ("bwrap", "runsc", "sshd", "ip"):
        require_tool(tool)
    if os.geteuid() != 0:
        pytest.skip("the benches make network namespaces: root only")
    selected = frozenset(n for n in ALONE if any(n in i.name for i in request.session.items))
    running = Smokes(tmp_path_factory.mktemp("smoke"), selected)
    try:
        yield running
    finally:
        running.stop()


def test_amortisation_runs(smokes: Smokes) -> None:
    code, out = smokes.finished("amortisation")
    assert code == 0, out
    assert "| host " in out and "| bwrap " in out and "target: harness <=" in out, out


def test_canary_start_runs_and_takes_the_default_stand_ins(smokes: Smokes) -> None:
    code, out = smokes.finished("canary_start")
    assert code == 0, out
    assert "| none      | 0 " in out and "| default   | 8 " in out, out


def test_fanout_runs(smokes: Smokes) -> None:
    code, out = smokes.finished("fanout")
    assert code == 0, out
    assert "harness run " in out and "target wall <= 1.3 x floor" in out, out


def test_fanout_wan_runs_and_leaves_nothing_behind(smokes: Smokes) -> None:
    """The fleet-shaped fan-out: hosts in namespaces of their own behind a WAN delay,
    under CPU quotas; every contender's cells complete, and once it has ended none of
    its namespaces, veth pairs, cgroups, sshd or proxy processes is left."""
    code, out = smokes.finished("fanout_wan")
    assert code == 0, out
    assert "harness, round 1" in out and "| harness " in out, out
    assert "lab removed: no namespace, veth, cgroup or process of the bench's left" in out
    pid = smokes.procs["fanout_wan"].pid
    from bench._netlab import leftovers

    assert leftovers(pid) == [], leftovers(pid)
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert f"hbf{pid % 100000:05d}" not in links, links
    work = re.search(r"^work folder: (\S+)$", out, re.M)
    assert work is not None, out
    procs = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert work[1] not in procs, procs  # its sshd and its proxy
    assert not Path(work[1]).exists()


def test_scale_runs_with_every_cell_complete(smokes: Smokes) -> None:
    """The simulated hosts answer as the protocol requires: 9 cells of 9 complete."""
    code, out = smokes.finished("scale")
    assert code == 0, out
    row = next(line for line in out.splitlines() if line.startswith("| 3 "))
    assert [c.strip() for c in row.strip("|").split("|")][:3] == ["3", "9", "9"], out
    assert "target peak RSS <= 250 MB" in out


def test_scale_over_full_cells_runs(smokes: Smokes) -> None:
    """Real recorded full cells, judged and stored for 3 hosts: 2 runtimes' cells each,
    every recorded output accepted (nonce and digest), the three targets reported."""
    code, out = smokes.finished("scale-properties")
    assert code == 0, out
    row = next(line for line in out.splitlines() if line.startswith("| 3 "))
    assert [c.strip() for c in row.strip("|").split("|")][:2] == ["3", "6"], out
    for target in ("CPU per full cell", "peak RSS", "results folder"):
        assert f"target judge and store {target}" in out or f"target {target}" in out, out


def test_scale_refuses_a_verdict_over_replayed_output(
    smokes: Smokes,
) -> None:
    """Recorded output replayed as it is (the nonce rejects it): no target's verdict,
    the reason said, a non-zero exit."""
    code, out = smokes.finished("scale-unbound")
    assert code == 2, out
    assert "NOT JUDGED: scale: 0 of 9 cells complete" in out and "nonce" in out
    assert "target peak RSS" not in out and "target CPU" not in out


def test_egress_sweep_runs(smokes: Smokes) -> None:
    code, out = smokes.finished("egress_sweep")
    assert code == 0, out
    # Each sandbox's row: the sweep adds check lines to the ones made without it.
    for sandbox in ("host", "isolated"):
        row = re.search(rf"^\| {sandbox} \| (\d+) \| (\d+) \|", out, re.M)
        assert row is not None and int(row[2]) > int(row[1]) > 0, out


def test_egress_budget_runs(smokes: Smokes) -> None:
    """Each situation's row says how many check lines, its time and which budget."""
    code, out = smokes.finished("egress_budget")
    assert code == 0, out
    for situation, budget in (("refused", "0.500"), ("answered", "0.500"), ("vanish", "2.500")):
        row = re.search(rf"^\| {situation} +\| (\d+) +\|.*\| {budget} +\|", out, re.M)
        assert row is not None and int(row[1]) > 30, out
    assert "vanish / refused:" in out and "slowest checks where packets vanish" in out, out


def test_supervisor_runs(smokes: Smokes) -> None:
    code, out = smokes.finished("supervisor")
    assert code == 0, out
    assert "allowed exchange through it" in out, out


def test_report_size_runs(smokes: Smokes) -> None:
    code, out = smokes.finished("report_size")
    assert code == 0, out
    assert "2 nights / 1 night" in out, out


def test_require_complete_refuses_and_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    require_complete("x", 3, 3)  # all complete: nothing said
    assert capsys.readouterr().out == ""
    with pytest.raises(Incomplete) as raised:
        require_complete("fan-out, harness", 5, 6, "runtime unavailable")
    assert raised.value.code == 2
    said = capsys.readouterr().out
    assert "5 of 6 cells complete: runtime unavailable" in said and "no target verdict" in said
    with pytest.raises(Incomplete):
        require_complete("nothing ran", 0, 0)


def test_reports_runs(smokes: Smokes) -> None:
    code, out = smokes.finished("reports")
    assert code == 0, out
    assert "| html |" in out and "| junit |" in out, out


def test_probe_checks_runs(smokes: Smokes) -> None:
    """This tree's probe and the base commit's, each in bwrap: both cells complete."""
    code, out = smokes.finished("probe_checks")
    assert code == 0, out
    assert "| bwrap " in out and "under 500 ms" in out, out


def test_the_amortisation_bench_leaves_nothing_in_shared_folders(smokes: Smokes) -> None:
    """A bench removes what it makes: once it has ended, no sentinel of its recorded run
    is left in /tmp or /var/tmp (it made its cells' again for its replays and left
    them). Only its own run's, by run id: other work on the machine may have some."""
    code, out = smokes.finished("amortisation")
    assert code == 0, out
    run_id = re.search(r"^recorded run: ([0-9a-f]+)$", out, re.M)
    assert run_id is not None, out
    mine = {p for p in left_in_shared_folders() if f"-harness-{run_id[1]}-" in p}
    assert mine == set()
