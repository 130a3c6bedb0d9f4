"""Reports for a fleet: how big is the HTML of 30 nights, and how fast is it made?

A real fleet's results are not at hand, so one real run of `matrices/local.toml` on this
machine (every scenario, seven runtimes) is copied into a fleet: HOSTS hosts (the
run's records under each host's name) and NIGHTS nights (the same records under each
night's run id). Night by night one host is dead (every cell unreachable, as a real
dead host leaves them) and, from the middle night on, one runtime regresses on one
host, so the history has something to mark. The page is the real `harness report
... --format html`, in its own process; its size and wall time are recorded, and the
Markdown and JUnit sizes of the newest night for comparison.

Run: .venv/bin/python bench/report_size.py [--hosts 10] [--nights 30] [--from RESULTS]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"

# The history must cost little next to the newest night (its grid, every verdict's
# checks and the raw output, which a fleet's page needs): 30 nights at most 1.5 times
# one night, made within 10 s.
TARGET_RATIO = 1.5
TARGET_S = 10.0


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _dead(row: dict[str, Any], *, cell: bool) -> dict[str, Any]:
    """A record as a host that could not be reached leaves it."""
    reason = "connection refused"
    if cell:
        return {**row, "status": "unreachable", "reason": reason, "stdout": "", "stderr": "",
                "checks": [], "facts": []}  # fmt: skip
    why = f"cell unreachable: {reason}"
    return {**row, "verdict": "inconclusive", "observed": "inconclusive",
            "display": "unreachable", "reason": why, "checks": []}  # fmt: skip


def fleet(source: Path, root: Path, *, hosts: int, nights: int) -> list[Path]:
    """NIGHTS results folders of HOSTS hosts each, made of SOURCE's records."""
    manifest = json.loads((source / "manifest.json").read_text())
    cells, verdicts = _lines(source / "cells.jsonl"), _lines(source / "verdicts.jsonl")
    (original,) = list(manifest["hosts"])
    names = [f"node-{i + 1:02d}" for i in range(hosts)]
    runtimes = list(manifest["runtimes"])
    folders = []
    for night in range(nights):
        folder = root / f"2026{night + 1:04d}T000000Z-fleet"
        folder.mkdir(parents=True)
        dead = names[night % hosts]
        run_id = f"night-{night + 1:02d}"
        out_cells, out_verdicts = [], []
        for name in names:
            for row in cells:
                row = {**row, "host": name, "run_id": run_id}
                out_cells.append(_dead(row, cell=True) if name == dead else row)
            for row in verdicts:
                row = {**row, "host": name}
                if name == dead:
                    row = _dead(row, cell=False)
                elif (night >= nights // 2 and name == names[-1]
                      and row["runtime"] == runtimes[-1] and row.get("property")):  # fmt: skip
                    row = {**row, "verdict": "regression", "observed": "violated",
                           "display": "violated", "reason": "an attempt escaped"}  # fmt: skip
                out_verdicts.append(row)
        _write(folder / "cells.jsonl", out_cells)
        _write(folder / "verdicts.jsonl", out_verdicts)
        hosts_entry = {n: {**manifest["hosts"][original]} for n in names}
        hosts_entry[dead] = {"transport": "ssh", "address": dead, "error": "connection refused"}
        (folder / "manifest.json").write_text(
            json.dumps({**manifest, "run_id": run_id, "hosts": hosts_entry})
        )
        folders.append(folder)
    return folders


def _harness(*args: str) -> list[str]:
    """The real CLI of this checkout, as a separate process (no bench-only packages:
    this script needs nothing beyond harness's own environment)."""
    return [sys.executable, "-m", "harness", *args]


def _timed(args: list[str]) -> float:
    started = time.monotonic()
    done = subprocess.run(_harness(*args), cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"harness {' '.join(args[:2])} failed: {done.stderr}")
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=10)
    parser.add_argument("--nights", type=int, default=30)
    parser.add_argument("--from", dest="source", type=Path, help="a results folder to copy")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="2 hosts, 2 nights, the host runtime alone if no --from, nothing saved",
    )
    args = parser.parse_args()
    if args.smoke:
        args.hosts, args.nights = 2, 2
    work = Path(tempfile.mkdtemp(prefix="harness-report-size-"))
    try:
        source = args.source
        if source is None:
            source = work / "local"
            only = ["--runtime", "host"] if args.smoke else []
            run = _harness("run", "matrices/local.toml", "--out", str(source), *only)
            done = subprocess.run(run, cwd=ROOT, capture_output=True, text=True)
            if done.returncode not in (0, 1):
                raise SystemExit(f"harness run failed: {done.stderr[-2000:]}")
        folders = fleet(source, work / "fleet", hosts=args.hosts, nights=args.nights)
        rows, results = [], {}
        for label, chosen in (("1 night", folders[-1:]), (f"{args.nights} nights", folders)):
            html = work / f"{len(chosen)}.html"
            seconds = _timed(["report", *map(str, chosen), "--format", "html", "-o", str(html)])
            size = html.stat().st_size
            rows.append([label, "html", f"{size / 1e6:.2f} MB", seconds])
            results[f"html_{len(chosen)}"] = {"bytes": size, "seconds": seconds}
        for fmt in ("markdown", "junit"):
            out = work / f"newest.{fmt}"
            seconds = _timed(["report", str(folders[-1]), "--format", fmt, "-o", str(out)])
            rows.append(["1 night", fmt, f"{out.stat().st_size / 1e6:.2f} MB", seconds])
            results[fmt] = {"bytes": out.stat().st_size, "seconds": seconds}
        cells = sum(1 for _ in (folders[-1] / "cells.jsonl").open())
        print(f"{args.hosts} hosts x {cells // args.hosts} cells, {args.nights} nights")
        print("| runs | format | size | seconds |\n|---|---|---|---|")
        for label, fmt, size, seconds in rows:
            print(f"| {label} | {fmt} | {size} | {seconds:.2f} |")
        whole, one = results[f"html_{args.nights}"], results["html_1"]
        ratio = whole["bytes"] / one["bytes"]
        met = ratio <= TARGET_RATIO and whole["seconds"] <= TARGET_S
        print(f"{args.nights} nights / 1 night: {ratio:.2f}x; target {TARGET_RATIO}x and"
              f" {TARGET_S} s: {'met' if met else 'MISSED'}")  # fmt: skip
        if args.smoke:
            return
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "report-size-latest.json").write_text(json.dumps(
            {"hosts": args.hosts, "nights": args.nights, "cells_per_night": cells,
             "results": results}, indent=2))  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` ends it as Ctrl-C does
    main()
