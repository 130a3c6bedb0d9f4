"""Issue 27's budget for the egress checks: the probe's whole `egress-confinement`
scenario (the five named attempts, the sweep, the binary checks) per cell, in three
situations the bench makes itself, against a real canary in its outside namespace:

- `refused`: bwrap with its own network namespace, only `lo`: every attempt fails at
  once (ENETUNREACH). Budget 0.5 s.
- `answered`: the probe in the host's namespace, as the `host` runtime runs it: every
  attempt reaches the canary and the nonce comes back. Budget 0.5 s.
- `vanish`: bwrap in a namespace whose routes lead to a neighbour that is pinned to a
  MAC address nobody has, so every packet leaves and is silently dropped (as by a
  firewall that drops): every attempt waits until it gives up. Budget 2.5 s.

Figures: the median wall time of the probe process over the rounds, its ratio to the
budget, to today's (the probe of `--base`, built from that commit's sources and run
alternately with this tree's in the same rounds) and the vanish case's ratio to the
refused case, all from one run; the per-check `elapsed_ms` of the vanish case says
what dominates. A run whose probe did not finish every row (exit status, `done`
line, a row the runner timed out or whose child it lost) is not a figure.

    .venv/bin/python bench/egress_budget.py [--rounds N] [--base COMMIT] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import local_canary, machine, require_complete, save, table, verdict  # noqa: E402
from harness.hostside.canary import stop_canary  # noqa: E402
from harness.probe.build import build_probe  # noqa: E402
from harness.transport.local import LocalTransport  # noqa: E402

BUDGET_S = {"refused": 0.5, "answered": 0.5, "vanish": 2.5}
NOBODY = "02:00:5e:00:53:99"  # a locally administered MAC that no interface here has


def _vanish(ns: str) -> None:
    """A namespace whose default routes (IPv4 and IPv6) go out a veth to a gateway
    pinned to a MAC nobody has: the peer end drops every frame as not its own."""
    a, b = f"ev{os.getpid()}a"[:15], f"ev{os.getpid()}b"[:15]
    for step in (
        ["netns", "add", ns],
        ["-n", ns, "link", "set", "lo", "up"],
        ["-n", ns, "link", "add", a, "type", "veth", "peer", "name", b],
        ["-n", ns, "addr", "add", "10.252.254.1/30", "dev", a],
        ["-n", ns, "link", "set", a, "up"],
        ["-n", ns, "link", "set", b, "up"],
        ["-n", ns, "neigh", "add", "10.252.254.2", "lladdr", NOBODY, "dev", a, "nud", "permanent"],
        ["-n", ns, "-6", "neigh", "add", "fe80::2", "lladdr", NOBODY, "dev", a, "nud", "permanent"],
        ["-n", ns, "route", "add", "default", "via", "10.252.254.2"],
        ["-n", ns, "-6", "route", "add", "default", "via", "fe80::2", "dev", a],
    ):
        subprocess.run(["ip", *step], check=True, capture_output=True)


def _bwrap(probe: str, other: str, *, own_net: bool) -> list[str]:
    return [
        "bwrap", "--unshare-pid", *(["--unshare-net", "--unshare-ipc"] if own_net else []),
        "--die-with-parent", "--ro-bind", probe, "/probe", "--ro-bind", other, "/other",
        "--proc", "/proc", "--dev", "/dev", "--", "/probe",
    ]  # fmt: skip


# A line the runner wrote for a row whose child failed it: not the check's answer.
_RUNNER = ("child ", "check exceeded", "the sweep ", "pipe() ", "fork() ")


def _run(argv: list[str]) -> tuple[float, dict[str, float], str, list[str]]:
    """Wall time, each check line's elapsed_ms by id, why the round is not complete
    ("" when it is: the probe exited 0 with its done line, and no row timed out or
    lost its child), and the checks' own errors (an answer, timed all the same)."""
    t0 = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    wall = time.monotonic() - t0
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    checks = [o for o in lines if o.get("type") == "check"]
    errors = [f"{o['id']}: {o.get('detail', '')}" for o in checks if o.get("outcome") == "error"]
    broken = [
        f"{o['id']}: {o.get('outcome')} {o.get('detail', '')}"
        for o in checks
        if o.get("outcome") == "timeout"
        or (o.get("outcome") == "error" and str(o.get("detail", "")).startswith(_RUNNER))
    ]
    why = (
        f"probe exited {done.returncode}: {done.stderr.strip()[-200:]}"
        if done.returncode
        else "no done line"
        if not any(o.get("type") == "done" for o in lines)
        else "; ".join(broken)
    )
    by_id = {o["id"]: float(o.get("elapsed_ms") or 0.0) for o in checks}
    return wall, by_id, why, errors


def _base_probe(commit: str, tmp: Path) -> str:
    """The probe of `commit` ("today's"), built from its own sources in tmp."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "harness/probe"], check=True,
        capture_output=True,
    )  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
    return str(build_probe(source_dir=tmp / "harness/probe", cache=tmp / "cache").path)


def _known_to(sources: Path, args: list[str]) -> list[str]:
    """`args` without the options (and their values) that the probe built from
    `sources` does not parse: the canary offers today's destinations, and an older
    probe would refuse the whole run (exit 2) over one it never heard of."""
    text = "".join(f.read_text() for f in sorted(sources.glob("*.c")))
    kept: list[str] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
        elif arg.startswith("--") and f'"{arg}"' not in text:
            skip = i + 1 < len(args) and not args[i + 1].startswith("--")
        else:
            kept.append(arg)
    return kept


def _other(probe: str, path: Path) -> str:
    """The helpers' `other` binary: the probe with bytes appended (harness's recipe)."""
    shutil.copy(probe, path)
    with path.open("ab") as f:
        f.write(b"\nharness: another binary\n")
    return str(path)


async def main(rounds: int, smoke: bool, base: str) -> dict[str, object]:
    tmp = Path(tempfile.mkdtemp(prefix="harness-egress-budget-"))
    probes = {"this": str(build_probe().path), "base": _base_probe(base, tmp)}
    transport = LocalTransport()
    run_id = secrets.token_hex(4)
    canary = await local_canary(probes["this"], run_id)
    ns = f"harness-bench-ev-{os.getpid()}"
    walls: dict[str, dict[str, list[float]]] = {t: {n: [] for n in BUDGET_S} for t in probes}
    elapsed: dict[str, dict[str, list[float]]] = {name: {} for name in BUDGET_S}
    problems: list[str] = []
    errors: set[str] = set()
    try:
        if canary.error:
            raise SystemExit(canary.error)
        _vanish(ns)
        args = ["run", "--tag", f"harness-{run_id}-00001", "--check-timeout-ms", "5000",
                *canary.probe_args(), "--other-binary", "/other", "egress-confinement"]  # fmt: skip
        argvs: dict[str, dict[str, list[str]]] = {}
        for tree, probe in probes.items():
            other = _other(probe, tmp / f"other-{tree}")
            own = args if tree == "this" else _known_to(tmp / "harness/probe", args)
            argvs[tree] = {
                "refused": [*_bwrap(probe, other, own_net=True), *own],
                "answered": [probe, *(a if a != "/other" else other for a in own)],
                "vanish": ["ip", "netns", "exec", ns, *_bwrap(probe, other, own_net=False), *own],
            }
        for i in range(rounds):
            for name in BUDGET_S:
                for tree in ("this", "base") if i % 2 == 0 else ("base", "this"):
                    wall, by_id, why, check_errors = _run(argvs[tree][name])
                    errors.update(f"{tree}, {name}: {e}" for e in check_errors)
                    if why:
                        problems.append(f"{tree}, {name}: {why}")
                        continue
                    walls[tree][name].append(wall)
                    if tree == "this":
                        for check, ms in by_id.items():
                            elapsed[name].setdefault(check, []).append(ms)
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        await stop_canary(transport, canary)
        shutil.rmtree(tmp, ignore_errors=True)
    complete = sum(len(w) for tree in walls.values() for w in tree.values())
    require_complete(
        "egress budget", complete, rounds * len(BUDGET_S) * len(probes), "; ".join(problems[:3])
    )

    med = {t: {n: statistics.median(w) for n, w in walls[t].items()} for t in probes}
    this = walls["this"]
    rows = [
        (name, len(elapsed[name]), med["this"][name], min(this[name]), max(this[name]),
         med["base"][name], med["this"][name] / med["base"][name], budget,
         med["this"][name] / budget, verdict(med["this"][name], budget))
        for name, budget in BUDGET_S.items()
    ]  # fmt: skip
    headers = ["situation", "check lines", "median s", "min s", "max s", f"{base} s",
               f"x {base}", "budget s", "x budget", "budget"]  # fmt: skip
    print(f"the probe's whole egress-confinement scenario, wall time, {rounds} round(s):")
    print(table(headers, rows))
    for error in sorted(errors):
        print(f"note: a check's own error (its answer, timed all the same): {error[:160]}")
    print(
        f"\nvanish / refused: {med['this']['vanish'] / med['this']['refused']:.1f} x"
        f" ({base}: {med['base']['vanish'] / med['base']['refused']:.1f} x; medians, this run)"
    )
    slow = sorted(
        ((statistics.median(ms), check) for check, ms in elapsed["vanish"].items()), reverse=True
    )[:8]
    print("\nslowest checks where packets vanish (median elapsed_ms):")
    print(table(["check", "elapsed ms"], [(check, ms) for ms, check in slow]))
    data: dict[str, object] = {
        "machine": machine(),
        "rounds": rounds,
        "base": base,
        "walls": walls,
        "elapsed_ms": elapsed,
        "budget_s": BUDGET_S,
        "check_errors": sorted(errors),
    }
    if not smoke:
        print(f"\nsaved {save('egress_budget', data)}")
    return data


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` ends it as Ctrl-C does
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--base", default="a5545dc", help="the commit whose probe is today's (default: a5545dc)"
    )
    parser.add_argument(
        "--smoke", action="store_true", help="one round, nothing saved: does it run?"
    )
    ns = parser.parse_args()
    anyio.run(main, 1 if ns.smoke else ns.rounds, ns.smoke, ns.base)
