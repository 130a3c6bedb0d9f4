"""`bench/scale.py --properties`: what the controller spends on full cells (every
property, the whole catalogue), per cell, at fleet size.

Full cells cannot be simulated the way mechanisms-only cells are (bench/scale.py's
SSH hosts answer with canned probe output): a full cell's host evidence (the canary's
log, the sentinels, the phases) is bound to the run's own random values. So this mode
measures the part of the controller's work that grows with a full cell, on real
records: one real run on this machine (matrices/local.toml; a smaller matrix for
--smoke) records a full cell per runtime; a separate process then plays the
controller for H hosts: each host's cells are the recorded ones under its name, and
for each it parses the probe's output (checking its nonce and digest), judges it
against its host's control, writes the cell and its verdicts to a results folder,
and keeps the verdicts as the runner does (without their check results). Its CPU
and peak RSS come from wait4; the results folder's size per cell is measured on disk.

The SSH fan-out's own cost per cell is bench/scale.py's (mechanisms-only cells over
simulated hosts); the two add up to a full cell's controller cost.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (
    ROOT,
    harness_argv,
    require_complete,
    run_measured,
    save,
    table,
    verdict,
)

CPU_TARGET_MS = 5.0
RSS_TARGET_MB = {1000: 250.0, 10000: 1024.0}
DISK_TARGET_KB = 20.0
SMOKE_MATRIX = """name = "full-cells-smoke"
inventory = "inv.toml"
scenarios = ["filesystem-confinement", "privilege-floor", "mechanisms"]
[runtimes.host]
kind = "host"
[runtimes.bwrap]
kind = "command"
argv = {argv}
allowed_inside = "/allowed"
helpers_inside = "/helpers"
"""


def record(work: Path, *, smoke: bool) -> tuple[Path, Path]:
    """A real run whose cells are replayed: (its matrix, its results folder)."""
    if smoke:
        import tomllib

        local = tomllib.loads((ROOT / "matrices" / "local.toml").read_text())
        (work / "inv.toml").write_text(
            f'[hosts.localhost]\ntransport = "local"\nworkdir = "{work}/wd"\n'
        )
        matrix = work / "smoke.toml"
        argv = json.dumps(local["runtimes"]["bwrap"]["argv"])
        matrix.write_text(SMOKE_MATRIX.format(argv=argv))
    else:
        matrix = ROOT / "matrices" / "local.toml"
    out = work / "recorded"
    print(f"recording full cells: harness run {matrix.name}", flush=True)
    done = run_measured(
        "record", harness_argv("run", str(matrix), "--out", str(out), "--no-progress")
    )
    cells = [json.loads(x) for x in (out / "cells.jsonl").read_text().splitlines()]
    complete = sum(c["status"] == "complete" for c in cells)
    why = "; ".join(sorted({str(c.get("reason")) for c in cells if c["status"] != "complete"}))
    require_complete(
        "scale --properties, the recorded run", complete, len(cells), why or done.stderr[-300:]
    )
    return matrix, out


def replay(spec: dict[str, Any]) -> None:
    """The controller's per-cell work for `hosts` hosts (a process of its own)."""
    from harness.judge.cell import judge_cell
    from harness.judge.properties import JudgedControl
    from harness.matrix import load_matrix
    from harness.plan import make_plan
    from harness.probe.protocol import parse_output
    from harness.results import ResultsStore
    from harness.results.store import read_cells
    from harness.runner import without_checks

    plan = make_plan(load_matrix(Path(spec["matrix"])))
    first = plan.cells[0].host
    cells = {c.runtime.name: c for c in plan.cells if c.host is first}
    recorded = [c for _line, c in read_cells(Path(spec["recorded"]))]
    store = ResultsStore(Path(spec["out"]))
    store.open()
    kept = []
    try:
        for i in range(spec["hosts"]):
            name = f"s{i:05d}"
            control = None
            for rec in recorded:  # the control cell first, as a run records it
                cell = cells[rec.runtime]
                nonce = (rec.probe_start or {}).get("cell_nonce")
                text = cell.runtime.filter_output(rec.stdout or "")
                output = parse_output(text, cell_nonce=nonce)
                if not output.complete:
                    raise SystemExit(
                        f"{rec.runtime}: recorded output does not parse: {output.failure()}"
                    )
                mine = replace(
                    rec, host=name, facts=output.facts, checks=output.checks, info=output.info
                )
                if control is None and cell.is_host_runtime:
                    # The first host-runtime cell, itself included, as the runner judges
                    # them (`HostContext.control`).
                    control = JudgedControl(mine)
                verdicts = judge_cell(cell, mine, control=control)
                store.add_cell(mine)
                store.add_verdicts(verdicts)
                kept.extend(without_checks(verdicts))  # as the runner keeps them
    finally:
        store.close()
    print(json.dumps({"cells": spec["hosts"] * len(recorded), "verdicts": len(kept)}))


def differs(recorded: Path, replay: Path) -> str | None:
    """What the replay's first host wrote that the recorded run did not (its host's
    name aside), or None: a replay that judges otherwise than the run measures
    something else."""
    for name in ("cells.jsonl", "verdicts.jsonl"):
        want = (recorded / name).read_text().splitlines()
        with (replay / name).open() as fh:
            got = [fh.readline() for _ in want]
        for line, again in zip(want, got, strict=True):
            was, now = json.loads(line), json.loads(again or "{}")
            now["host"] = was["host"]
            if now != was:
                key = [k for k in was if was[k] != now.get(k)]
                return f"{name}, {was.get('runtime')}: {key[:3]} differ"
    return None


def disk_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def run(hosts: int, *, smoke: bool, keep: bool) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="harness-bench-full-"))
    results: dict[str, Any] = {"hosts": hosts, "mode": "properties"}
    try:
        matrix, recorded = record(work, smoke=smoke)
        lines = (recorded / "cells.jsonl").read_text().splitlines()
        results["recorded"] = {
            json.loads(x)["runtime"]: {
                "checks": len(json.loads(x).get("checks") or []),
                "bytes": len(x),
            }
            for x in lines
        }
        spec = {
            "matrix": str(matrix),
            "recorded": str(recorded),
            "out": str(work / "replay"),
            "hosts": hosts,
        }
        (work / "spec.json").write_text(json.dumps(spec))
        print(f"replaying {len(lines)} full cells for {hosts} hosts", flush=True)
        m = run_measured("replay", [sys.executable, __file__, "_replay", str(work / "spec.json")])
        if m.exit_status != 0:
            raise SystemExit(f"the replay failed: {m.stderr[-1500:]}")
        if (why := differs(recorded, work / "replay")) is not None:
            raise SystemExit(f"the replay does not judge as the recorded run did: {why}")
        startup = run_measured(
            "startup",
            [
                sys.executable,
                "-c",
                "import harness.judge.cell, harness.results, harness.matrix, harness.plan",
            ],
        )
        said = json.loads(m.stdout.strip().splitlines()[-1])
        cells = said["cells"]
        size = disk_bytes(work / "replay")
        per_cell_ms = 1000 * (m.cpu - startup.cpu) / cells
        rss_target = RSS_TARGET_MB.get(hosts, RSS_TARGET_MB[1000])
        results.update(
            {
                "cells": cells,
                "verdicts": said["verdicts"],
                "replay": m.brief(),
                "startup_cpu_s": startup.cpu,
                "cpu_per_full_cell_ms": per_cell_ms,
                "peak_rss_mb": m.maxrss_mb,
                "disk_bytes": size,
                "disk_kb_per_cell": size / 1024 / cells,
                "targets": {
                    f"judge and store CPU per full cell <= {CPU_TARGET_MS:g} ms": verdict(
                        per_cell_ms, CPU_TARGET_MS
                    ),
                    f"peak RSS <= {rss_target:g} MB": verdict(m.maxrss_mb, rss_target),
                    f"results folder <= {DISK_TARGET_KB:g} KB per full cell": verdict(
                        size / 1024 / cells, DISK_TARGET_KB
                    ),
                },
            }
        )
        print()
        print(
            table(
                ["hosts", "full cells", "verdicts", "CPU s", "CPU / cell ms", "peak RSS MB",
                 "results MB", "KB / cell"],
                [[hosts, cells, said["verdicts"], m.cpu, per_cell_ms, m.maxrss_mb,
                  size / 1e6, size / 1024 / cells]],
            )
        )  # fmt: skip
        print(
            f"(interpreter start and imports: {startup.cpu:.2f} s CPU,"
            " left out of the per-cell figure)"
        )
        for k, v in results["targets"].items():
            print(f"target {k}: {v}")
        if not smoke:
            print(f"results: {save('scale-properties', results)}")
        return results
    finally:
        if keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "_replay":
        replay(json.loads(Path(sys.argv[2]).read_text()))
    else:
        raise SystemExit(
            subprocess.call(
                [
                    sys.executable,
                    str(Path(__file__).with_name("scale.py")),
                    "--properties",
                    *sys.argv[1:],
                ]
            )
        )
