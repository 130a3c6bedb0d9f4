"""Sharding, merging and resuming, through the real CLI on real runtimes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import harness_cli
from tests.e2e.helpers import cells_of
from tests.lab import require_tool

RUNTIMES = """
[runtimes.host]
kind = "host"
[runtimes.runsc]
kind = "runsc"
flags = ["--network=none"]
facts = { landlock_abi = "unavailable" }
[runtimes.bwrap]
kind = "command"
argv = ["bwrap", "--unshare-net", "--unshare-ipc", "--unshare-pid", "--die-with-parent",
        "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
        "--ro-bind", "{probe}", "/probe", "--bind", "{allowed}", "/allowed",
        "--proc", "/proc", "--dev", "/dev", "--", "/probe", "{args}"]
allowed_inside = "/allowed"
[runtimes.bwrap-shared]
kind = "command"
argv = ["bwrap", "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
        "--ro-bind", "{probe}", "/probe", "--bind", "{allowed}", "/allowed",
        "--proc", "/proc", "--dev", "/dev", "--", "/probe", "{args}"]
allowed_inside = "/allowed"
# In the host's PID namespace, its /proc is the host's own.
expect = { egress_confinement = "violated", filesystem_confinement = "violated" }
"""


def _matrix(
    tmp: Path,
    runtimes: str = RUNTIMES,
    scenarios: str = '["filesystem-confinement", "egress-confinement", "mechanisms"]',
) -> Path:
    (tmp / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{tmp}/work"\n'
    )
    path = tmp / "m.toml"
    path.write_text(f'name = "s"\ninventory = "inv.toml"\nscenarios = {scenarios}\n{runtimes}')
    return path


def _verdicts(folder: Path) -> set[tuple[str, str, str, str, str]]:
    rows = [json.loads(line) for line in (folder / "verdicts.jsonl").read_text().splitlines()]
    return {
        (
            r["host"],
            r["runtime"],
            r.get("property") or r.get("fact"),
            r["verdict"],
            json.dumps(r["observed"]),
        )
        for r in rows
    }


def test_merged_shards_equal_an_unsharded_run(tmp_path: Path) -> None:
    """`--shard 1/2` + `--shard 2/2` merged give exactly the unsharded verdicts."""
    for tool in ("runsc", "bwrap"):
        require_tool(tool)
    # Three runs: a short settle window each (every arrival here is at once; what is
    # judged is that the shards' verdicts merge into the whole run's, not lateness).
    matrix = _matrix(tmp_path, "[canary]\nsettle = 0.5\n" + RUNTIMES)
    whole = harness_cli("run", matrix, "--out", tmp_path / "whole")
    assert whole.code == 0, whole.stdout + whole.stderr
    for i in (1, 2):
        shard = harness_cli("run", matrix, "--shard", f"{i}/2", "--out", tmp_path / f"s{i}")
        assert shard.code == 0, shard.stdout + shard.stderr
    own = [{k for k, c in cells_of(tmp_path / f"s{i}").items() if not c["control"]} for i in (1, 2)]
    assert not own[0] & own[1] and len(own[0]) == len(own[1]) == 2  # disjoint and even
    # A missing shard: its cells are there, cancelled, every verdict inconclusive, so
    # the merged run never looks complete and the report still works.
    partial = harness_cli("merge", tmp_path / "s1", "--out", tmp_path / "partial")
    assert partial.code == 0, partial.stderr
    shown = json.loads((tmp_path / "partial" / "manifest.json").read_text())
    assert shown["missing_shards"] == ["2/2"] and shown["exit_code"] == 3
    lost = cells_of(tmp_path / "partial")
    for key in own[1]:
        assert lost[key]["status"] == "cancelled" and "shard 2/2 is missing" in lost[key]["reason"]
    rows = [
        json.loads(x) for x in (tmp_path / "partial" / "verdicts.jsonl").read_text().splitlines()
    ]
    for row in rows:
        if (row["host"], row["runtime"]) in own[1] and "property" in row:
            assert row["verdict"] == "inconclusive", row
    assert {(r["host"], r["runtime"]) for r in rows} >= own[0] | own[1]
    report = harness_cli("report", tmp_path / "partial", "--format", "json")
    assert report.code == 0, report.stderr
    twice = harness_cli("merge", tmp_path / "s1", tmp_path / "s1", "--out", tmp_path / "twice")
    assert twice.code == 2 and "repeated 1/2" in twice.stderr
    merged = harness_cli("merge", tmp_path / "s1", tmp_path / "s2", "--out", tmp_path / "merged")
    assert merged.code == 0, merged.stderr
    assert _verdicts(tmp_path / "merged") == _verdicts(tmp_path / "whole")
    manifest = json.loads((tmp_path / "merged" / "manifest.json").read_text())
    assert [m["shard"] for m in manifest["merged_from"]] == ["1/2", "2/2"]


def test_bad_shard_and_mixed_merge_are_bad_input(tmp_path: Path) -> None:
    """A malformed --shard, and merging folders of different matrices: exit 2."""
    matrix = _matrix(tmp_path, '[runtimes.host]\nkind = "host"\n', '["mechanisms"]')
    bad = harness_cli("run", matrix, "--shard", "3/2", "--out", tmp_path / "x")
    assert bad.code == 2 and "--shard" in bad.stderr
    assert harness_cli("run", matrix, "--out", tmp_path / "a").code == 0
    other = tmp_path / "other"
    other.mkdir()
    matrix2 = _matrix(other, '[runtimes.host2]\nkind = "host"\n', '["mechanisms"]')
    assert harness_cli("run", matrix2, "--out", tmp_path / "b").code == 0
    mixed = harness_cli("merge", tmp_path / "a", tmp_path / "b", "--out", tmp_path / "m")
    assert mixed.code == 2 and "different matrices" in mixed.stderr


def test_resume_runs_only_unfinished_cells(tmp_path: Path) -> None:
    """Interrupt a run, then `--resume`: only the unfinished cell runs; each cell
    ends with exactly one final set of verdicts, and a regression recorded before
    the interruption survives the resume and keeps the exit code at 1."""
    flag = tmp_path / "go"
    slow = (
        '[runtimes.slow]\nkind = "command"\n'
        f'argv = ["sh", "-c", "[ -e {flag} ] || sleep 60; exec \\"$0\\" \\"$@\\"",'
        ' "{probe}", "{args}"]\n'
    )
    # No sandbox at all, yet expected to enforce: a regression on the privilege floor.
    unconfined = '[runtimes.open]\nkind = "command"\nargv = ["{probe}", "{args}"]\n'
    matrix = _matrix(
        tmp_path,
        '[runtimes.host]\nkind = "host"\n' + unconfined + slow,
        '["privilege-floor", "mechanisms"]',
    )
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", str(matrix), "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        judged = (out / "verdicts.jsonl").read_text() if (out / "verdicts.jsonl").exists() else ""
        if '"runtime":"open"' in judged and '"runtime":"host"' in judged:
            break
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=30)
    assert process.returncode == 130
    before = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    regression = [v for v in before if v["verdict"] == "regression"]
    assert [(v["runtime"], v["property"]) for v in regression] == [("open", "privilege_floor")]
    hold_lock = "import fcntl,sys,time; f=open(sys.argv[1],'a'); fcntl.flock(f, 2); time.sleep(3)"
    busy = subprocess.Popen([sys.executable, "-c", hold_lock, str(out / ".lock")])
    time.sleep(0.5)
    locked = harness_cli("run", "--resume", out)
    busy.wait()
    assert locked.code == 2 and "another run is writing here" in locked.stderr
    flag.touch()
    resumed = harness_cli("run", "--resume", out)
    assert resumed.code == 1, resumed.stdout + resumed.stderr
    rows = [json.loads(line) for line in (out / "cells.jsonl").read_text().splitlines()]
    statuses = [(r["runtime"], r["status"]) for r in rows if not r.get("control")]
    assert statuses.count(("host", "complete")) == 1  # judged once; rerun only as a control
    assert statuses.count(("open", "complete")) == 1
    assert ("slow", "cancelled") in statuses and ("slow", "complete") in statuses
    verdicts = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    keys = [(v["runtime"], v.get("property") or v["fact"]) for v in verdicts]
    assert len(keys) == len(set(keys))  # one final verdict per (runtime, subject)
    final = {(v["runtime"], v.get("property") or v["fact"]): v["verdict"] for v in verdicts}
    assert final[("open", "privilege_floor")] == "regression"  # kept from before
    assert final[("slow", "privilege_floor")] == "regression"  # judged after the resume
    assert final[("host", "privilege_floor")] == "pass"
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["segments"]) == 1 and manifest["exit_code"] == 1
    assert manifest["interrupted"] is False


def test_resume_refuses_a_changed_matrix(tmp_path: Path) -> None:
    """If the matrix changed since the run started, resuming is refused."""
    matrix = _matrix(tmp_path, '[runtimes.host]\nkind = "host"\n', '["mechanisms"]')
    assert harness_cli("run", matrix, "--out", tmp_path / "out").code == 0
    matrix.write_text(matrix.read_text() + "\n# edited\n")
    result = harness_cli("run", "--resume", tmp_path / "out")
    assert result.code == 2 and "changed since the run" in result.stderr


BARE = """
[runtimes.host]
kind = "host"
[runtimes.bare]
kind = "command"
argv = ["{probe}", "{args}"]
expect = { filesystem_confinement = "enforced" }
"""


def test_resume_after_a_torn_write_keeps_the_regression(tmp_path: Path) -> None:
    """A crash that wrote only part of a cell's verdicts and left a torn last line:
    `--resume` judges the cell again, so the regression and exit 1 survive, and
    every line of the folder still parses."""
    out = tmp_path / "out"
    matrix = _matrix(tmp_path, BARE, '["filesystem-confinement", "mechanisms"]')
    first = harness_cli("run", matrix, "--out", out)
    assert first.code == 1, first.stdout + first.stderr
    lines = (out / "verdicts.jsonl").read_text().splitlines()
    bare = [n for n, line in enumerate(lines) if json.loads(line)["runtime"] == "bare"]
    regression = [n for n in bare if json.loads(lines[n])["verdict"] == "regression"]
    assert regression and len(bare) > 1
    # The crash: the bare cell's block cut after one of its lines, mid-line.
    kept = [
        line
        for n, line in enumerate(lines)
        if n not in bare or n == min(set(bare) - set(regression))
    ]
    (out / "verdicts.jsonl").write_text("\n".join(kept) + "\n" + lines[regression[0]][:25])
    for torn in ("cells.jsonl",):
        text = (out / torn).read_text()
        (out / torn).write_text(text + text.splitlines()[0][:30])
    resumed = harness_cli("run", "--resume", out)
    assert resumed.code == 1, resumed.stdout + resumed.stderr
    rows = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    got = [(r["runtime"], r.get("property") or r.get("fact"), r["verdict"]) for r in rows]
    assert ("bare", "filesystem_confinement", "regression") in got
    assert len(got) == len(set(got)) == len(lines)  # the partial block was not kept twice
    for line in (out / "cells.jsonl").read_text().splitlines():
        json.loads(line)


def test_merge_keeps_the_final_record_of_a_resumed_shard(tmp_path: Path) -> None:
    """A shard interrupted and then resumed holds a cell's `cancelled` record and,
    later, its final one: merge keeps the final record, raw output and all."""
    runtimes = '[runtimes.host]\nkind = "host"\n' + "".join(
        f'[runtimes.r{i}]\nkind = "command"\nargv = ["{{probe}}", "{{args}}"]\n' for i in range(2)
    )
    matrix = _matrix(tmp_path, runtimes, '["mechanisms"]')
    for i in (1, 2):
        shard = harness_cli("run", matrix, "--shard", f"{i}/2", "--out", tmp_path / f"s{i}")
        assert shard.code == 0, shard.stdout + shard.stderr
    cells = tmp_path / "s1" / "cells.jsonl"
    rows = [json.loads(line) for line in cells.read_text().splitlines()]
    final = next(r for r in rows if not r["control"])
    cancelled = {**final, "status": "cancelled", "reason": "run interrupted", "stdout": ""}
    # What an interrupted run followed by --resume leaves: cancelled first, final later.
    text = "".join(json.dumps(r) + "\n" for r in [cancelled, *rows])
    cells.write_text(text)
    merged = harness_cli("merge", tmp_path / "s1", tmp_path / "s2", "--out", tmp_path / "m")
    assert merged.code == 0, merged.stderr
    kept = cells_of(tmp_path / "m")[(final["host"], final["runtime"])]
    assert kept["status"] == "complete" and kept["stdout"] == final["stdout"] != ""
