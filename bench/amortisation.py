"""Start amortisation: the local matrix against the floor of its sandbox work.

Measures, on this machine (local transport, matrices/local.toml, all scenarios):
- harness: `harness run matrices/local.toml` end to end (interpreter start to exit),
  and once per runtime with `--runtime NAME` (the host control cell comes along);
- the floor of each cell:
  - bare: the runtime started with a no-op workload (`probe version`), the same
    bundle / argv template / initramfs recipe and granted folders as the cell,
    plus the probe's own run time in that cell (the sum of its checks'
    `elapsed_ms`, from harness's records);
  - direct: the cell's exact sandbox command (recorded from a harness run, with
    its canary, sentinels and helpers left in place) run by a bare script, alone;
    and every cell's command at once, as harness runs them;
- naive: one sandbox start per check, i.e. checks x bare start + probe time.

Run: bench/.venv/bin/python bench/amortisation.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anyio

from bench._common import (
    ROOT,
    ensure_bytecode,
    envelope_split,
    harness_argv,
    machine,
    median,
    require_complete,
    run_measured,
    save,
    table,
    verdict,
    wait_for_quiet,
)

MATRIX = ROOT / "matrices" / "local.toml"
TARGET = 1.2


def smoke_matrix(work: Path) -> Path:
    """The local matrix cut down to host and bwrap, with a short settle window: the
    whole bench in seconds, to show that it runs (its numbers mean nothing)."""
    local = tomllib.loads(MATRIX.read_text())
    bwrap = local["runtimes"]["bwrap"]
    path = work / "smoke.toml"
    path.write_text(
        f"""name = "bench-smoke"
inventory = "{(MATRIX.parent / local["inventory"]).resolve()}"
hosts = ["localhost"]
scenarios = ["egress-confinement", "filesystem-confinement", "mechanisms"]

[settings]
concurrency = 4
timeout = 60
check_timeout = 5

[canary]
mode = "netns"
settle = 0.5

[runtimes.host]
kind = "host"

[runtimes.bwrap]
kind = "command"
argv = {json.dumps(bwrap["argv"])}
allowed_inside = "/allowed"
helpers_inside = "/helpers"
"""
    )
    return path


@dataclass
class Recorded:
    """A cell's sandbox command as harness ran it."""

    runtime: str
    argv: list[str]
    stdin: bytes | None
    barriers: str = ""  # the folder where the probe stops at the cell's phases


def cell_stats(folder: Path) -> dict[str, dict[str, Any]]:
    """Per runtime: the cell's elapsed time, its checks, and the probe's own time."""
    out: dict[str, dict[str, Any]] = {}
    for line in (folder / "cells.jsonl").read_text().splitlines():
        rec = json.loads(line)
        probe_ms, checks = 0.0, 0
        for raw in rec.get("stdout", "").splitlines():
            raw = raw.strip("\r")
            if not raw.startswith('{"type":'):
                continue
            obj = json.loads(raw)
            if obj.get("type") in ("fact", "check"):
                checks += 1
                probe_ms += float(obj.get("elapsed_ms", 0.0))
        out[rec["runtime"]] = {
            "status": rec["status"],
            "elapsed": rec["elapsed"],
            "checks": checks,
            "probe_s": probe_ms / 1000,
        }
    return out


def run_harness(label: str, out: Path, *args: str) -> tuple[Any, dict[str, dict[str, Any]]]:
    m = run_measured(
        label, harness_argv("run", str(MATRIX), "--out", str(out), "--no-progress", *args)
    )
    if m.exit_status not in (0, 1, 3):
        raise SystemExit(f"{label}: harness exited {m.exit_status}: {m.stderr[-2000:]}")
    stats = cell_stats(out)
    failed = {rt: s["status"] for rt, s in stats.items() if s["status"] != "complete"}
    why = ", ".join(f"{rt} {status}" for rt, status in failed.items())
    require_complete(f"amortisation, {label}", len(stats) - len(failed), len(stats), why)
    return m, stats


# -- recording the cells' commands ----------------------------------------------------


def record_cells(work: Path) -> tuple[list[Recorded], list[tuple[list[str], bytes | None]]]:
    """Run the matrix in-process with a transport that records each cell's command
    (the sandbox command inside the cell's envelope) and holds back the canary's
    teardown; the sentinels, which the envelope removes, are made again, so the
    cells can be replayed afterwards with identical fixtures. Returns the cells and the
    deferred teardown commands."""
    from harness import runner as runner_mod
    from harness.hostside.filesystem import FUNCTIONS
    from harness.matrix import load_matrix
    from harness.plan import make_plan
    from harness.probe import build_probe
    from harness.results import ResultsStore
    from harness.results.store import read_cells
    from harness.runner import Runner
    from harness.transport import Completed, LocalTransport

    recorded: list[Recorded] = []
    deferred: list[tuple[list[str], bytes | None]] = []
    # The canary and the supervisors stay up for the replays (a supervised cell's
    # sandbox joins its supervisor's namespace).
    held = ("harness-canary-down", "harness-supervisor-down", "harness-release")
    fixtures: list[list[str]] = []  # each cell's sentinels, made again for the replays

    class Recording(LocalTransport):
        async def run(self, argv, *, stdin=None, timeout=None):  # type: ignore[no-untyped-def]
            argv = list(argv)
            if argv[:2] == ["sh", "-c"] and len(argv) > 3 and argv[3] in held:
                deferred.append((argv, stdin))
                return Completed(tuple(argv), 0, None, "", "", 0.0)
            if argv[:1] == ["rm"] and "--" in argv and argv[-1].endswith(".log"):
                deferred.append((argv, stdin))
                return Completed(tuple(argv), 0, None, "", "", 0.0)
            done = await super().run(argv, stdin=stdin, timeout=timeout)
            split = envelope_split(argv)
            if split is not None:
                # The envelope: $1 marker, $2-$4 the sentinels, $5 tag, $6-$7 the
                # canary, $8 where no sentinel goes; then the sandbox command itself.
                values, inner = split
                root, token, original, skip = values[1], values[2], values[3], values[7]
                recorded.append(Recorded(runtime="?", argv=inner, stdin=stdin, barriers=values[8]))
                if root:
                    setup = FUNCTIONS + 'fs_setup "$1" "$2" "$3" "$4"'
                    fixtures.append(["sh", "-c", setup, "fs", root, token, original, skip])
                    deferred.append((["rm", "-rf", "--", root], None))
                    # fs_setup's sentinels outside the fixture (Sentinels.places),
                    # which the envelope's fs_inspect would have removed.
                    name = f"harness-sentinel-{root.rsplit('/', 1)[-1]}"
                    places = [f"/tmp/{name}", f"/var/tmp/{name}"]
                    places.append(f"{root.rsplit('/fs/', 1)[0]}/{name}")
                    deferred.append((["rm", "-f", "--", *places], None))
            return done

    matrix = load_matrix(MATRIX)
    plan = make_plan(matrix)
    store = ResultsStore(work / "record")
    store.open()
    original = runner_mod.open_transport
    runner_mod.open_transport = lambda host: Recording(host.name)  # type: ignore[assignment]
    try:
        r = Runner(plan, probe=build_probe(), store=store)
        print(f"recorded run: {r.outcome.run_id}", flush=True)  # what it makes is named so
        anyio.run(r.run)
    finally:
        runner_mod.open_transport = original
        store.close()
    cells = [c for _line, c in read_cells(work / "record")]
    done = sum(c.status == "complete" for c in cells)
    require_complete("amortisation, the recorded run", done, len(cells))
    for argv in fixtures:
        subprocess.run(argv, capture_output=True, check=True)
    # Match commands to runtimes by the cell tags in the records, in order.
    by_tag = {c.host_side.tag: c.runtime for c in cells}
    for rec in recorded:
        tag = next((t for t in by_tag if t and any(t in a for a in rec.argv)), None)
        if tag is None and rec.stdin:
            tag = next((t for t in by_tag if t and t.encode() in rec.stdin), None)
        rec.runtime = by_tag.get(tag, "?")
    return recorded, deferred


def release_barriers(folder: str, running: threading.Event) -> None:
    """What the envelope's phase watcher does where nobody acts: each barrier the
    probe stops at is released at once, "idle". Without it a replay waits out every
    barrier's time limit, and the floor would hold seconds of nobody's work."""
    base = Path(folder)
    while running.is_set():
        for phase in base.glob(".harness-phase-*"):
            go = base / phase.name.replace(".harness-phase-", ".harness-go-", 1)
            if not go.exists():
                aside = go.with_name(go.name.replace(".harness-go-", ".harness-wait-", 1))
                aside.write_text("idle\n")
                aside.rename(go)
        time.sleep(0.005)
    for left in [*base.glob(".harness-phase-*"), *base.glob(".harness-go-*")]:
        left.unlink(missing_ok=True)


def replay(cmd: Recorded) -> float:
    """The cell's sandbox command, run bare (its barriers released as nobody acts); a
    replay that did not complete is no floor."""
    running = threading.Event()
    running.set()
    watcher = threading.Thread(target=release_barriers, args=(cmd.barriers, running))
    if cmd.barriers:
        watcher.start()
    started = time.monotonic()
    try:
        done = subprocess.run(cmd.argv, input=cmd.stdin or b"", capture_output=True, check=False)
    finally:
        elapsed = time.monotonic() - started
        running.clear()
        if cmd.barriers:
            watcher.join()
    if b'"type":"done"' not in done.stdout:
        require_complete(f"amortisation, {cmd.runtime} replayed", 0, 1, "no completion line")
    return elapsed


def teardown(deferred: list[tuple[list[str], bytes | None]]) -> None:
    for argv, stdin in deferred:
        subprocess.run(argv, input=stdin or b"", capture_output=True, check=False)


# -- bare starts ------------------------------------------------------------------------


def bare_starts(repeats: int, work: Path) -> dict[str, float]:
    """Each runtime started with the probe's no-op `version` as its workload."""
    from harness.matrix import load_matrix
    from harness.plan import make_plan
    from harness.probe import build_probe
    from harness.runtimes import CellPaths

    probe = build_probe()
    plan = make_plan(load_matrix(MATRIX))
    work.mkdir(parents=True, exist_ok=True)
    staged = work / "probe"
    shutil.copy(probe.path, staged)
    staged.chmod(0o755)
    allowed = work / "allowed"
    helpers = work / "helpers"
    allowed.mkdir()
    helpers.mkdir()
    for name in ("setuid", "fcap"):
        shutil.copy(probe.path, helpers / name)
    (work / "empty").mkdir()
    out: dict[str, float] = {}
    for cell in plan.cells:
        rt = cell.runtime
        times = []
        for i in range(repeats + 1):
            cid = f"bench-bare-{rt.name}-{i:03d}"
            paths = CellPaths(
                probe=str(staged),
                workdir=str(work),
                cell_dir=str(work / "cells" / cid),
                cell_id=cid,
                allowed=str(allowed),
                helpers=str(helpers),
            )
            inv = rt.invocation(paths, ["version"])
            started = time.monotonic()
            done = subprocess.run(
                inv.argv, input=inv.stdin or b"", capture_output=True, check=False
            )
            elapsed = time.monotonic() - started
            if b'"type":"version"' not in done.stdout:
                raise SystemExit(f"bare start of {rt.name} failed: {done.stderr[-500:]!r}")
            if i:  # the first one warms caches
                times.append(elapsed)
        out[rt.name] = median(times)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-wait", action="store_true", help="do not wait for a quiet machine")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="host and bwrap only, one round, no warm-up, nothing saved: does it run?",
    )
    args = parser.parse_args()
    global MATRIX
    ensure_bytecode()
    work = Path(tempfile.mkdtemp(prefix="harness-bench-amort-"))
    if args.smoke:
        args.repeats, args.no_wait = 1, True
        MATRIX = smoke_matrix(work)
    quiet = wait_for_quiet(max_wait=0 if args.no_wait else 300)
    results: dict[str, Any] = {"machine": machine(quiet), "matrix": str(MATRIX)}
    try:
        if not args.smoke:
            print(f"busy cores {quiet['busy_cores_at_start']}; warming up", flush=True)
            run_harness("warm-up", work / "warm")

        # 1. harness, whole matrix, then per runtime (interleaved repeats).
        whole: list[Any] = []
        stats: list[dict[str, dict[str, Any]]] = []
        per_rt: dict[str, list[float]] = {}
        runtimes: list[str] = []
        for i in range(args.repeats):
            m, s = run_harness("matrix", work / f"whole-{i}")
            whole.append(m)
            stats.append(s)
            runtimes = list(s)
            for rt in runtimes:
                if rt == "host":
                    continue
                mr, _ = run_harness(rt, work / f"{rt}-{i}", "--runtime", rt)
                per_rt.setdefault(rt, []).append(mr.wall)
            print(f"  round {i + 1}: matrix {m.wall:.2f}s", flush=True)
        mr_host = [
            run_harness("host", work / f"host-{i}", "--runtime", "host")[0].wall
            for i in range(args.repeats)
        ]
        per_rt["host"] = mr_host

        # 2. floors.
        bare = bare_starts(args.repeats, work / "bare")
        recorded, deferred = record_cells(work)
        try:
            direct: dict[str, float] = {}
            for cmd in recorded:
                times = [replay(cmd) for _ in range(args.repeats)]
                direct[cmd.runtime] = median(times)
            together = []
            for _ in range(args.repeats):
                started = time.monotonic()
                with ThreadPoolExecutor(len(recorded)) as pool:
                    list(pool.map(replay, recorded))
                together.append(time.monotonic() - started)
        finally:
            teardown(deferred)

        # 3. the numbers.
        def med(rt: str, key: str) -> float:
            return median([s[rt][key] for s in stats])

        rows = []
        per_runtime: dict[str, Any] = {}
        for rt in runtimes:
            probe_s = med(rt, "probe_s")
            checks = int(med(rt, "checks"))
            floor_bare = bare[rt] + probe_s
            naive = checks * bare[rt] + probe_s
            wall = median(per_rt[rt])
            cell = med(rt, "elapsed")
            per_runtime[rt] = {
                "bare_start_s": bare[rt],
                "probe_s": probe_s,
                "checks": checks,
                "floor_bare_s": floor_bare,
                "floor_direct_s": direct.get(rt),
                "cell_in_harness_s": cell,
                "harness_wall_s": wall,
                "naive_s": naive,
            }
            rows.append(
                [
                    rt,
                    checks,
                    bare[rt],
                    probe_s,
                    direct.get(rt, float("nan")),
                    cell,
                    cell / direct[rt] if rt in direct else float("nan"),
                    wall,
                    wall / direct[rt] if rt in direct else float("nan"),
                    naive / direct[rt] if rt in direct else float("nan"),
                ]
            )
        whole_wall = median([m.wall for m in whole])
        whole_cpu = median([m.cpu for m in whole])
        floor_matrix = median(together)
        floor_bare_matrix = max(v["floor_bare_s"] for v in per_runtime.values())
        # The floor read literally: a bare start plus the probe, per cell, summed.
        floor_sum = sum(v["floor_bare_s"] for v in per_runtime.values())
        sum_ratio = whole_wall / floor_sum
        naive_matrix = max(v["naive_s"] for v in per_runtime.values())
        ratio = whole_wall / floor_matrix
        bare_ratio = whole_wall / floor_bare_matrix
        naive_ratio = whole_wall / naive_matrix
        results.update(
            {
                "repeats": args.repeats,
                "per_runtime": per_runtime,
                "matrix": {
                    "harness_wall_s": whole_wall,
                    "harness_walls_s": [m.wall for m in whole],
                    "harness_tree_cpu_s": whole_cpu,
                    "harness_maxrss_mb": max(m.maxrss_mb for m in whole),
                    "floor_direct_parallel_s": floor_matrix,
                    "floor_bare_s": floor_bare_matrix,
                    "naive_s": naive_matrix,
                    "ratio_to_floor": ratio,
                    "ratio_to_bare_floor": whole_wall / floor_bare_matrix,
                    "floor_sum_s": floor_sum,
                    "ratio_to_floor_sum": sum_ratio,
                    "target_met_sum": sum_ratio <= TARGET,
                    "naive_over_harness": naive_matrix / whole_wall,
                    "target": TARGET,
                    "target_met": ratio <= TARGET,
                },
            }
        )
        print()
        print(
            table(
                [
                    "runtime",
                    "checks",
                    "bare start s",
                    "probe s",
                    "direct cell s",
                    "cell in harness s",
                    "cell / direct",
                    "harness --runtime wall s",
                    "wall / direct",
                    "naive / direct",
                ],
                rows,
            )
        )
        print()
        print(
            table(
                ["whole matrix", "seconds", "harness / it"],
                [
                    ["harness run matrices/local.toml", whole_wall, 1.0],
                    ["floor: every cell's command at once, direct", floor_matrix, ratio],
                    ["floor: max cell (bare start + probe)", floor_bare_matrix, bare_ratio],
                    ["floor: sum over cells (bare start + probe)", floor_sum, sum_ratio],
                    ["naive: one start per check (modelled)", naive_matrix, naive_ratio],
                ],
            )
        )
        print(
            f"\ntarget: harness <= {TARGET} x floor (cells at once, direct): {ratio:.2f}"
            f" -> {verdict(ratio, TARGET)}"
        )
        print(
            f"target: harness <= {TARGET} x floor (sum of bare start + probe per cell):"
            f" {sum_ratio:.2f} -> {verdict(sum_ratio, TARGET)}"
        )
        if not args.smoke:
            print(f"results: {save('amortisation', results)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` ends it as Ctrl-C does
    main()
