"""What the probe's filesystem and privilege checks cost in one cell, next to the probe
of an earlier commit measured in the same run (issue 26's budget: under 0.5 s per cell
on runsc and bwrap).

    .venv/bin/python bench/probe_checks.py [--rounds 5] [--base 171f239]

Each round runs `harness run matrices/local.toml --runtime R --scenario
filesystem-confinement --scenario privilege-floor` for each runtime, once with this tree
and once with the base commit's (checked out in a temporary git worktree, whose harness
builds its own probe and reads its own matrix), the two alternating which goes first. The
figure is the sum of the two scenarios' checks' `elapsed_ms` in the runtime's cell(s):
the probe times each check from the fork of its child to the child's end, so this is the
probe's own work, without the sandbox's start. One runtime at a time: no cell of another
shares the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import (  # noqa: E402
    harness_argv,
    machine,
    median,
    require_complete,
    save,
    table,
    verdict,
)

SCENARIOS = ("filesystem-confinement", "privilege-floor")
BUDGET_MS = 500.0


def checks_ms(out: Path, runtime: str) -> tuple[float, int, int]:
    """(the two scenarios' checks' elapsed_ms summed, checks counted, incomplete cells)
    of the runtime's cells in one results folder."""
    total, count, incomplete = 0.0, 0, 0
    for line in (out / "cells.jsonl").read_text().splitlines():
        cell = json.loads(line)
        if cell["runtime"] != runtime:
            continue
        incomplete += cell["status"] != "complete"
        for check in cell.get("checks") or []:
            if check.get("scenario") in SCENARIOS and check.get("elapsed_ms") is not None:
                total += float(check["elapsed_ms"])
                count += 1
    return total, count, incomplete


def one_run(tree: Path, runtime: str, out: Path) -> tuple[float, int, int]:
    scenarios = [a for s in SCENARIOS for a in ("--scenario", s)]
    argv = harness_argv(
        "run", "matrices/local.toml", "--runtime", runtime, *scenarios, "--out", str(out),
        "--no-progress",
    )  # fmt: skip
    done = subprocess.run(
        argv, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if not (out / "cells.jsonl").exists():
        raise SystemExit(f"harness run in {tree} wrote no cells: {done.stderr[-800:]}")
    return checks_ms(out, runtime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--base", default="171f239", help="the commit to compare with")
    ap.add_argument("--runtime", action="append", help="default: runsc and bwrap")
    ap.add_argument("--smoke", action="store_true", help="bwrap, one round, nothing saved")
    args = ap.parse_args()
    runtimes = args.runtime or (["bwrap"] if args.smoke else ["runsc", "bwrap"])
    rounds = 1 if args.smoke else args.rounds
    with tempfile.TemporaryDirectory(prefix="bench-probe-checks-") as tmp:
        base = Path(tmp) / "base"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(base), args.base],
            check=True,
        )
        try:
            figures = measure(runtimes, rounds, {"this": ROOT, "base": base}, Path(tmp))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)])
    rows, total, complete = [], 0, 0
    for runtime in runtimes:
        mine, theirs = figures[runtime]["this"], figures[runtime]["base"]
        total += 2 * rounds
        complete += sum(1 for m in (*mine, *theirs) if m["incomplete"] == 0 and m["checks"])
        now, before = median([m["ms"] for m in mine]), median([m["ms"] for m in theirs])
        rows.append(
            [runtime, before, now, now / before if before else float("nan"),
             mine[0]["checks"], theirs[0]["checks"], verdict(now, BUDGET_MS)]
        )  # fmt: skip
    print(f"the filesystem and privilege checks' elapsed_ms per cell, median of {rounds}:")
    headers = ["runtime", f"{args.base} ms", "this tree ms", "ratio", "checks", "checks before"]
    print(table([*headers, f"under {BUDGET_MS:.0f} ms"], rows))
    require_complete("the probe's check time", complete, total)
    if not args.smoke:
        print(save("probe_checks", {"machine": machine(), "base": args.base, "figures": figures}))
    return 0


def measure(
    runtimes: list[str], rounds: int, trees: dict[str, Path], tmp: Path
) -> dict[str, dict[str, list[dict[str, float]]]]:
    """Each runtime's runs of both trees, alternating which tree goes first."""
    figures: dict[str, dict[str, list[dict[str, float]]]] = {
        r: {name: [] for name in trees} for r in runtimes
    }
    for i in range(rounds):
        order = list(trees) if i % 2 == 0 else list(reversed(trees))
        for runtime in runtimes:
            for name in order:
                ms, n, bad = one_run(trees[name], runtime, tmp / f"{runtime}-{name}-{i}")
                figures[runtime][name].append({"ms": ms, "checks": n, "incomplete": bad})
                print(f"round {i + 1} {runtime} {name}: {ms:.1f} ms over {n} checks", flush=True)
    return figures


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` ends it as Ctrl-C does
    sys.exit(main())
