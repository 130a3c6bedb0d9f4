"""What the reference supervisor costs: start-up, memory, and each connection.

    .venv/bin/python bench/supervisor.py [--connections 50] [--starts 5]

Measures, on this machine (root; loopback and a namespace of its own only):
- the fixture's start and stop (namespace + `python3 -` reading the program from stdin),
  next to the floor a C mode of the probe would have (exec of the static probe);
- the daemon's resident memory;
- an allowed connection through the supervisor (connect, one line each way, with the
  /proc attribution lookup) next to the same exchange made directly;
- the attribution lookup alone (TCP tables, then every /proc/PID/fd), with the number
  of processes on the machine, since the fd scan grows with it.
The numbers of one run are in docs/supervisor.md.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.hostside.supervisor import start_supervisor, stop_supervisor  # noqa: E402
from harness.matrix.models import Canary  # noqa: E402
from harness.probe import build_probe  # noqa: E402
from harness.supervisor import reference  # noqa: E402
from harness.transport import LocalTransport  # noqa: E402

EXCHANGE = r"""
import socket, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
times = []
for _ in range(n):
    t = time.perf_counter()
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(b"HARNESS bench x\n")
    s.recv(64)
    s.close()
    times.append((time.perf_counter() - t) * 1000)
print(" ".join(f"{x:.3f}" for x in times))
"""


def listener() -> socket.socket:
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(64)
                conn.sendall(b"NONCE bench\n")

    threading.Thread(target=serve, daemon=True).start()
    return server


# $1 a supervisor's namespace: its daemon killed, the namespace removed (if either is).
GONE = """pkill -KILL -f -- "[-]-netns /run/netns/$1 --daemon"
ip netns del "$1" 2>/dev/null; true"""


def ms(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"median {statistics.median(values):.1f} ms (min {low:.1f}, max {high:.1f})"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument(
        "--smoke", action="store_true", help="2 starts, 5 connections, nothing saved: does it run?"
    )
    args = parser.parse_args()
    if args.smoke:
        args.starts, args.connections = 2, 5
    server = listener()
    port = server.getsockname()[1]
    canary = Canary(allowed_port=port)
    transport = LocalTransport()
    work = Path(f"/tmp/harness-bench-supervisor-{os.getpid()}")
    work.mkdir(exist_ok=True)
    starts, stops, rss = [], [], []
    running = None
    made: list[str] = []  # every supervisor's namespace, as named before its start
    try:
        for i in range(args.starts):
            t = time.perf_counter()
            run_id = secrets.token_hex(4)
            made.append(f"harness-{run_id}-0-sup{i}")  # its name, before it exists
            running = await start_supervisor(
                transport, runtime="bench", workdir=str(work), run_id=run_id,
                host_index=0, serial=i, canary=canary, canary_address="127.0.0.1", fault=None,
            )  # fmt: skip
            starts.append((time.perf_counter() - t) * 1000)
            assert running.error is None, running.error
            status = Path(f"/proc/{running.pid}/status").read_text()
            vm = next(ln for ln in status.splitlines() if ln.startswith("VmRSS"))
            rss.append(int(vm.split()[1]))
            if i < args.starts - 1:
                t = time.perf_counter()
                await stop_supervisor(transport, running)
                stops.append((time.perf_counter() - t) * 1000)
        assert running is not None
        probe = build_probe()
        floor = []
        for _ in range(args.starts):
            t = time.perf_counter()
            subprocess.run([str(probe.path), "version"], capture_output=True, check=True)
            floor.append((time.perf_counter() - t) * 1000)
        py = []
        for _ in range(args.starts):
            t = time.perf_counter()
            subprocess.run(["python3", "-c", "pass"], check=True)
            py.append((time.perf_counter() - t) * 1000)
        n = str(args.connections)
        through = subprocess.run(
            running.wrap((sys.executable, "-c", EXCHANGE, "127.0.0.1", str(port), n)),
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        direct = subprocess.run(
            [sys.executable, "-c", EXCHANGE, "127.0.0.1", str(port), n],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        # The lookup alone, for a live connection of this process.
        client = socket.create_connection(("127.0.0.1", port))
        here, there = client.getsockname(), client.getpeername()
        lookups = []
        for _ in range(20):
            t = time.perf_counter()
            found = reference.identify("/proc/self/net", here, there, "none")
            lookups.append((time.perf_counter() - t) * 1000)
        client.close()
    finally:  # also when interrupted (Ctrl-C, or SIGTERM: see the end of this file)
        with anyio.CancelScope(shield=True):
            if running is not None:
                await stop_supervisor(transport, running)
        for ns in made:  # one interrupted while it started: its daemon and namespace
            subprocess.run(["sh", "-c", GONE, "bench-supervisor-gone", ns], check=False)
        server.close()
        shutil.rmtree(work, ignore_errors=True)
    processes = sum(1 for p in os.listdir("/proc") if p.isdigit())
    results = {
        "fixture_start_ms": starts,
        "fixture_stop_ms": stops,
        "probe_exec_ms": floor,
        "python3_start_ms": py,
        "daemon_rss_kib": rss,
        "through_supervisor_ms": [float(x) for x in through.split()],
        "direct_ms": [float(x) for x in direct.split()],
        "lookup_ms": lookups,
        "processes": processes,
        "lookup_found": "binary" in found,
    }
    print(f"fixture start (netns + python3 -):     {ms(starts)}")
    print(f"fixture stop:                          {ms(stops or [0.0])}")
    print(f"floor for a C mode (exec the probe):   {ms(floor)}")
    print(f"python3 -c pass:                       {ms(py)}")
    print(f"daemon RSS:                            {statistics.median(rss)} KiB")
    print(f"allowed exchange through it:           {ms(results['through_supervisor_ms'])}")
    print(f"the same exchange, direct:             {ms(results['direct_ms'])}")
    print(f"attribution lookup ({processes} processes):    {ms(lookups)}")
    if args.smoke:
        return
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "supervisor-latest.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` ends it as Ctrl-C does
    anyio.run(main, backend="asyncio")
