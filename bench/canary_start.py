"""What the netns canary's start and stop cost on a host, with and without its stand-ins
elsewhere (`[canary] elsewhere`: an address on the canary's `lo`, a route and a rule
each). Paid once per host per run; the figures are the medians of `--rounds` starts and
stops of each kind, alternated, from one run.

    .venv/bin/python bench/canary_start.py [--rounds 7] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._common import machine, median, save, table  # noqa: E402
from harness.hostside.canary_setup import start_canary, stop_canary  # noqa: E402
from harness.matrix.models import Canary  # noqa: E402
from harness.probe.build import build_probe  # noqa: E402
from harness.transport.local import LocalTransport  # noqa: E402

KINDS = {"none": Canary(elsewhere=[]), "default": Canary()}


async def once(probe: str, canary: Canary, workdir: str) -> tuple[float, float, int]:
    """One start and stop: their seconds, and how many stand-ins the canary took."""
    began = time.monotonic()
    running = await start_canary(
        LocalTransport(), probe=probe, workdir=workdir, canary=canary,
        run_id=secrets.token_hex(4), host_index=0, nonce="bench",
        high_port=30000 + secrets.randbelow(30000),
    )  # fmt: skip
    started = time.monotonic()
    try:
        if running.error:
            raise SystemExit(f"canary_start: the canary did not start: {running.error}")
    finally:
        await stop_canary(LocalTransport(), running)
    return started - began, time.monotonic() - started, len(running.stand_ins())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--smoke", action="store_true", help="one round, nothing saved")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("canary_start: makes network namespaces: root only", file=sys.stderr)
        return 2
    rounds = 1 if args.smoke else args.rounds
    probe = str(build_probe().path)
    seen: dict[str, list[tuple[float, float, int]]] = {k: [] for k in KINDS}

    async def run() -> None:
        with tempfile.TemporaryDirectory(prefix="harness-bench-canary-") as workdir:
            for _ in range(rounds):
                for kind, canary in KINDS.items():
                    seen[kind].append(await once(probe, canary, workdir))

    anyio.run(run)
    rows = [
        [kind, xs[0][2], f"{median([x[0] for x in xs]) * 1000:.0f}",
         f"{median([x[1] for x in xs]) * 1000:.0f}"]
        for kind, xs in seen.items()
    ]  # fmt: skip
    print(f"the netns canary's start and stop, medians of {rounds} round(s):")
    print(table(["stand-ins", "taken", "start ms", "stop ms"], rows))
    if not args.smoke:
        path = save("canary_start", {"machine": machine(), "rounds": rounds, "rows": rows})
        print(f"\nsaved {path}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` ends it as Ctrl-C does
    raise SystemExit(main())
