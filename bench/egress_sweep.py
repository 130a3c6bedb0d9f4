"""What the egress sweep adds to a cell: the probe's egress scenario with and without
it, against a real canary in an outside namespace, in three kinds of sandbox.

- `host`: no sandbox; every attempt reaches the canary and gets the nonce back.
- `isolated`: bwrap with its own empty network namespace; every attempt is refused at
  once (ENETUNREACH).
- `blackhole`: bwrap in a namespace whose routes lead to a neighbour that never answers,
  as a firewall that drops would: every attempt waits until it gives up.

"Without the sweep" runs the same probe with the sweep's `--high-port` left out, so the
sweep stops at once: what the five older egress attempts cost on their own. Rounds
alternate the two. Everything is on this machine: the canary's namespace and veth
(harness's own), and the blackhole namespace made and removed here.

    .venv/bin/python bench/egress_sweep.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anyio

from bench._common import local_canary
from harness.hostside.canary import stop_canary
from harness.probe.build import build_probe
from harness.transport.local import LocalTransport

RESULTS = Path(__file__).resolve().parent / "results"


def _bwrap(probe: str) -> list[str]:
    return [
        "bwrap", "--unshare-pid", "--die-with-parent", "--ro-bind", probe, "/probe",
        "--proc", "/proc", "--dev", "/dev", "--", "/probe",
    ]  # fmt: skip


def _blackhole(ns: str) -> None:
    """A namespace whose default routes (IPv4 and IPv6) point at a silent neighbour."""
    a, b = f"bh{os.getpid()}a"[:15], f"bh{os.getpid()}b"[:15]
    for step in (
        ["netns", "add", ns],
        ["-n", ns, "link", "set", "lo", "up"],
        ["-n", ns, "link", "add", a, "type", "veth", "peer", "name", b],
        ["-n", ns, "addr", "add", "10.252.255.1/30", "dev", a],
        ["-n", ns, "link", "set", a, "up"],
        ["-n", ns, "link", "set", b, "up"],  # up, but nothing answers ARP or NDP there
        ["-n", ns, "route", "add", "default", "via", "10.252.255.2"],
        ["-n", ns, "-6", "route", "add", "default", "via", "fe80::2", "dev", a],
    ):
        subprocess.run(["ip", *step], check=True, capture_output=True)


def _time(argv: list[str]) -> tuple[float, int]:
    t0 = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return time.monotonic() - t0, sum(1 for o in lines if o.get("type") == "check")


async def main(rounds: int, smoke: bool = False) -> dict[str, object]:
    probe = str(build_probe().path)
    transport = LocalTransport()
    run_id = secrets.token_hex(4)
    canary = await local_canary(probe, run_id)
    ns = f"harness-bench-bh-{os.getpid()}"
    results: dict[str, dict[str, list[float]]] = {}
    checks: dict[str, dict[str, int]] = {}
    try:
        if canary.error:
            raise SystemExit(canary.error)
        _blackhole(ns)
        full = ["run", "--tag", f"harness-{run_id}-00001", "--check-timeout-ms", "5000",
                *canary.probe_args(), "egress-confinement"]  # fmt: skip
        at = full.index("--high-port")
        older = full[:at] + full[at + 2 :]
        sandboxes = {
            "host": [probe],
            "isolated": [*_bwrap(probe)[:1], "--unshare-net", "--unshare-ipc", *_bwrap(probe)[1:]],
            "blackhole": ["ip", "netns", "exec", ns, *_bwrap(probe)],
        }
        if smoke:  # the blackhole costs its attempts' whole limit: seconds
            del sandboxes["blackhole"]
        for name, prefix in sandboxes.items():
            results[name] = {"with": [], "without": []}
            checks[name] = {}
            for _ in range(rounds):
                for label, args in (("without", older), ("with", full)):
                    elapsed, count = _time([*prefix, *args])
                    results[name][label].append(elapsed)
                    checks[name][label] = count
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        await stop_canary(transport, canary)
    rows = []
    for name, times in results.items():
        with_s, without_s = statistics.median(times["with"]), statistics.median(times["without"])
        rows.append((name, checks[name]["without"], checks[name]["with"], without_s, with_s,
                     with_s - without_s))  # fmt: skip
    print("| sandbox | check lines without | with | s without | s with | added s |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row[0]} | {row[1]} | {row[2]} | {row[3]:.3f} | {row[4]:.3f} | {row[5]:.3f} |")
    data = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "rounds": rounds,
        "nproc": os.cpu_count(),
        "results": results,
        "checks": checks,
    }
    if not smoke:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "egress_sweep-latest.json").write_text(json.dumps(data, indent=2))
    return data


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` ends it as Ctrl-C does
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--smoke", action="store_true", help="one round, no blackhole, nothing saved: does it run?"
    )
    args = parser.parse_args()
    anyio.run(main, 1 if args.smoke else args.rounds, args.smoke)
