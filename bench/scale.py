"""Scale: the controller's memory and CPU against 1000 simulated SSH hosts.

A thousand real sshd and sandboxes do not fit on two cores, and here the
question is what the *controller* costs per host and per cell. So the hosts are
simulated: one separate process runs asyncssh servers on 127.0.0.1, one port per
host, each with the same ed25519 host key (known_hosts still has one line per
host, as a real fleet's would). They answer harness's commands with canned
output: the setup script's facts (the probe already staged), each runtime's
version, and for a cell the real probe's JSON lines for that runtime, recorded
once at the start of the benchmark by running the real probe in the real
runtime on this machine. A cell's answer comes after the time that runtime's
cell really took here, so connections stay open about as long as they would.

The controller is the real CLI (`harness run`), in its own process: its peak RSS
and CPU come from wait4, alone. The server's CPU is reported for information.

Run: bench/.venv/bin/python bench/scale.py [--hosts 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import contextlib

from bench._common import (
    ROOT,
    ensure_bytecode,
    envelope_split,
    harness_argv,
    machine,
    require_complete,
    run_measured,
    save,
    table,
    tree_cpu,
    verdict,
    wait_for_quiet,
)

RUNTIMES = ["host", "bwrap", "runsc"]
SCENARIOS = ["mechanisms"]
RSS_TARGET_MB = 250.0
CPU_TARGET_MS = 5.0


# -- recording the real probe's output ------------------------------------------------


def record_outputs(work: Path, matrix: Path) -> dict[str, dict[str, Any]]:
    """Run the real probe once in each real runtime, with harness's own invocation."""
    from harness.matrix import load_matrix
    from harness.plan import make_plan
    from harness.probe import build_probe
    from harness.probe.protocol import probe_args
    from harness.runtimes import CellPaths

    probe = build_probe()
    folder = work / "record"
    (folder / "empty").mkdir(parents=True)
    staged = folder / "probe"
    shutil.copy(probe.path, staged)
    staged.chmod(0o755)
    plan = make_plan(load_matrix(matrix))
    first = plan.cells[0].host
    out: dict[str, dict[str, Any]] = {}
    for cell in (c for c in plan.cells if c.host is first):
        cid = f"bench-scale-{os.getpid()}-{cell.runtime.name}"  # two benches at once
        paths = CellPaths(
            probe=str(staged), workdir=str(folder), cell_dir=str(folder / cid), cell_id=cid
        )
        args = probe_args(["mechanisms"], check_timeout=5, deadline=60, tag=cid)
        inv = cell.runtime.invocation(paths, args)
        started = time.monotonic()
        done = subprocess.run(inv.argv, input=inv.stdin or b"", capture_output=True, check=False)
        elapsed = time.monotonic() - started
        text = done.stdout.decode()
        if '"type":"done"' not in text:
            raise SystemExit(f"recording {cell.runtime.name} failed: {done.stderr[-500:]!r}")
        out[cell.runtime.name] = {"stdout": text, "elapsed": elapsed, "version": ""}
        version = cell.runtime.version_argv()
        if version:
            v = subprocess.run(version, capture_output=True, text=True, check=False)
            out[cell.runtime.name]["version"] = (v.stdout or v.stderr).strip()
    return out


# -- the simulated hosts (a separate process) -----------------------------------------


NONCE = re.compile(rb'--cell-nonce"?[\s,]*"?([0-9a-f]{16,})')


def bound_to(recorded: str, nonce: str) -> str:
    """The recorded probe output, bound to this cell as the probe itself would bind it
    (harness/probe/protocol.py `parse_output`): the nonce in the start and done lines,
    the done line's digest over the nonce and every line in between."""
    lines = [x for x in recorded.split("\n") if x.strip()]
    digest = hashlib.sha256(f"{nonce}\n".encode())
    out = []
    for line in lines:
        obj = json.loads(line)
        if obj.get("type") == "start":
            obj["cell_nonce"] = nonce
            line = json.dumps(obj, separators=(",", ":"))
        elif obj.get("type") == "done":
            obj["cell_nonce"] = nonce
            obj["digest"] = digest.hexdigest()
            line = json.dumps(obj, separators=(",", ":"))
        else:
            digest.update(f"{line}\n".encode())
        out.append(line)
    return "\n".join(out) + "\n"


def serve(spec_path: str) -> None:
    import asyncssh

    spec = json.loads(Path(spec_path).read_text())
    canned: dict[str, dict[str, Any]] = spec["canned"]
    by_binary = {"runsc": "runsc", "bwrap": "bwrap"}

    def setup(argv: list[str], port: int) -> str:
        """The host's preparation: workdir, sha; then MARKER and per runtime: N, words.
        Each host has a machine id of its own, as a fleet's hosts do."""
        workdir, sha = argv[4] or ".cache/harness", argv[5]
        out = [f"/sim/{workdir}\n6.1.0-sim x86_64\n{sha}  probe/{sha}\nsim{port:08d}\n"]
        if len(argv) > 6:
            marker, rest, k = argv[6], argv[7:], 0
            while rest:
                n = int(rest[0])
                binary, has_version = rest[1], n > 1
                out.append(f"{marker} {k}\n")
                if binary in by_binary and has_version:
                    version = canned[by_binary[binary]]["version"]
                    out.append(f"{version}\n\nharness-version-status=0\n")
                rest, k = rest[1 + n :], k + 1
        return "".join(out)

    def cell(argv: list[str], stdin: bytes) -> tuple[str, float]:
        """The envelope: the recorded output of this runtime, bound to the cell's
        nonce (in the command, or in the runsc bundle's config on stdin)."""
        split = envelope_split(argv)
        assert split is not None
        values, inner = split
        joined = " ".join(inner)
        rt = "runsc" if "harness-runsc" in joined else "bwrap" if "bwrap" in joined else "host"
        found = NONCE.search(joined.encode()) or NONCE.search(stdin)
        nonce = found.group(1).decode() if found else ""
        # Mechanisms only: no canary, no sentinels, so an empty report.
        marker = values[0]
        text = (
            canned[rt]["stdout"] if spec.get("unbound") else bound_to(canned[rt]["stdout"], nonce)
        )
        out = f"{text}\n{marker} evidence\n{marker} 0 0\n"
        return out, canned[rt]["elapsed"]

    async def handle(process: asyncssh.SSHServerProcess[bytes]) -> None:
        port = process.get_extra_info("sockname")[1]
        argv = shlex.split(process.command or "")
        out, delay = "", 0.0
        if argv[:2] == ["sh", "-c"] and len(argv) > 3 and argv[3] == "harness-setup":
            out = setup(argv, port)
        elif argv[:2] == ["sh", "-c"] and len(argv) > 3 and argv[3] == "harness-cell":
            stdin = b""
            if "harness-runsc" in " ".join(argv):  # the bundle's config, then EOF
                with contextlib.suppress(TimeoutError, asyncssh.Error, OSError):
                    stdin = await asyncio.wait_for(process.stdin.read(), timeout=30)
            out, delay = cell(argv, stdin)
        if delay:
            await asyncio.sleep(delay)
        process.stdout.write(out.encode())
        process.exit(0)

    async def main() -> None:
        key = asyncssh.import_private_key(Path(spec["host_key"]).read_text())
        servers = []
        ports = []
        for _ in range(spec["hosts"]):
            server = await asyncssh.listen(
                "127.0.0.1",
                0,
                server_host_keys=[key],
                authorized_client_keys=spec["authorized"],
                process_factory=handle,
                encoding=None,
                allow_scp=False,
                sftp_factory=False,
                reuse_address=True,
            )
            servers.append(server)
            ports.append(server.sockets[0].getsockname()[1])
        Path(spec["ports"]).write_text(json.dumps(ports))
        await asyncio.Event().wait()

    asyncio.run(main())


def prepare(
    work: Path, *, hosts: int, concurrency: int, results: dict[str, Any], unbound: bool = False
) -> tuple[Path, subprocess.Popen[bytes]]:
    """Record the real outputs, start the simulated hosts, write the matrix."""
    local = (ROOT / "matrices" / "local.toml").read_text()
    import tomllib

    bwrap_argv = json.dumps(tomllib.loads(local)["runtimes"]["bwrap"]["argv"])
    runtimes_toml = f"""
[runtimes.host]
kind = "host"

[runtimes.bwrap]
kind = "command"
argv = {bwrap_argv}
allowed_inside = "/allowed"
helpers_inside = "/helpers"

[runtimes.runsc]
kind = "runsc"
binary = "runsc"
flags = ["--network=none"]
"""
    # A one-host local matrix to record the real outputs with.
    (work / "local-inv.toml").write_text('[hosts.localhost]\ntransport = "local"\n')
    rec_matrix = work / "record.toml"
    rec_matrix.write_text(
        'name = "record"\ninventory = "local-inv.toml"\nscenarios = ["mechanisms"]\n'
        + runtimes_toml
    )
    print("recording the real probe's output in each runtime", flush=True)
    canned = record_outputs(work, rec_matrix)
    results["recorded"] = {
        k: {"elapsed": v["elapsed"], "lines": v["stdout"].count("\n")} for k, v in canned.items()
    }

    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(work / "host_key")],
        check=True,
    )
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(work / "client_key")],
        check=True,
    )
    spec = {
        "hosts": hosts,
        "host_key": str(work / "host_key"),
        "authorized": str(work / "client_key.pub"),
        "canned": canned,
        "ports": str(work / "ports.json"),
        "unbound": unbound,
    }
    (work / "spec.json").write_text(json.dumps(spec))
    print(f"starting {hosts} simulated hosts", flush=True)
    server = subprocess.Popen([sys.executable, __file__, "_serve", str(work / "spec.json")])
    deadline = time.monotonic() + 120
    while not (work / "ports.json").exists():
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the simulated hosts did not start")
        time.sleep(0.2)
    ports = json.loads((work / "ports.json").read_text())
    host_pub = (work / "host_key.pub").read_text().split()[:2]
    (work / "known_hosts").write_text(
        "".join(f"[127.0.0.1]:{p} {host_pub[0]} {host_pub[1]}\n" for p in ports)
    )
    inv = [
        "[defaults]",
        'user = "root"',
        f'identity_file = "{work / "client_key"}"',
        f'known_hosts = "{work / "known_hosts"}"',
        "connect_timeout = 120",
        "",
    ]
    for i, port in enumerate(ports):
        inv += [f"[hosts.s{i:04d}]", 'address = "127.0.0.1"', f"port = {port}", ""]
    (work / "inventory.toml").write_text("\n".join(inv))
    matrix = work / "scale.toml"
    matrix.write_text(
        'name = "bench-scale"\ninventory = "inventory.toml"\n'
        f"scenarios = {json.dumps(SCENARIOS)}\n"
        f"\n[settings]\nconcurrency = {concurrency}\ntimeout = 120\ncheck_timeout = 5\n"
        f"{runtimes_toml}"
    )
    return matrix, server


# -- main ----------------------------------------------------------------------------------


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "_serve":
        serve(sys.argv[2])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument(
        "--smoke", action="store_true", help="3 hosts, no waiting, nothing saved: does it run?"
    )
    parser.add_argument(
        "--unbound",
        action="store_true",
        help="replay the recorded output as it is, which the cell nonce rejects (as before"
        " 2026-12): shows that the bench then refuses to judge its targets",
    )
    parser.add_argument(
        "--properties",
        action="store_true",
        help="full cells (every property, the whole catalogue): the controller's judging and"
        " storing of real recorded cells for --hosts hosts (bench/_full_cells.py)",
    )
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--no-wait", action="store_true")
    parser.add_argument(
        "--format",
        default="table",
        choices=["table", "json"],
        help="harness's stdout: the default tables, or the JSON array scripts read",
    )
    parser.add_argument("--keep", action="store_true", help="keep the work folder (results, keys)")
    parser.add_argument(
        "--profile", metavar="FILE", help="also write a cProfile (CPU time) of the controller here"
    )
    parser.add_argument(
        "--memory",
        metavar="FILE",
        help="also write a tracemalloc snapshot of the controller near its peak here"
        " (bench/_memory.py --top FILE reads it)",
    )
    args = parser.parse_args()
    if args.smoke:
        args.hosts, args.no_wait = 3, True
    if args.properties:
        from bench import _full_cells

        ensure_bytecode()
        wait_for_quiet(max_wait=0 if args.no_wait else 300)
        _full_cells.run(args.hosts, smoke=args.smoke, keep=args.keep)
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    ensure_bytecode()
    quiet = wait_for_quiet(max_wait=0 if args.no_wait else 300)
    work = Path(tempfile.mkdtemp(prefix="harness-bench-scale-"))
    results: dict[str, Any] = {
        "machine": machine(quiet),
        "hosts": args.hosts,
        "runtimes": RUNTIMES,
        "scenarios": SCENARIOS,
        "concurrency": args.concurrency,
        "simulated": True,
        "format": args.format,
    }
    server: subprocess.Popen[bytes] | None = None
    try:
        matrix, server = prepare(
            work,
            hosts=args.hosts,
            concurrency=args.concurrency,
            results=results,
            unbound=args.unbound,
        )
        server_cpu0 = tree_cpu([server.pid])
        print("harness run", flush=True)
        argv = harness_argv(
            "run", str(matrix), "--out", str(work / "run"), "--no-progress", "--format", args.format
        )
        if args.profile:  # CPU-time profile; slower, so the numbers below are not kept
            argv = [argv[0], str(Path(__file__).with_name("_profile.py")), args.profile, *argv[3:]]
        elif args.memory:  # traced allocations; slower and larger, so not kept either
            argv = [argv[0], str(Path(__file__).with_name("_memory.py")), args.memory, *argv[3:]]
        m = run_measured("harness", argv)
        server_cpu = tree_cpu([server.pid]) - server_cpu0
        found = work / "run" / "cells.jsonl"
        lines = found.read_text().splitlines() if found.exists() else []
        cells = [json.loads(x) for x in lines]
        complete = sum(c["status"] == "complete" for c in cells)
        # The interpreter and imports, for the fixed part of the controller's CPU.
        startup = run_measured("startup", harness_argv("--version"))
        if m.exit_status not in (0, 3):
            print(f"harness exited {m.exit_status}: {m.stderr[-1500:]}")
        reasons = sorted({str(c.get("reason")) for c in cells if c["status"] != "complete"})
        require_complete("scale", complete, args.hosts * len(RUNTIMES), "; ".join(reasons)[:500])
        per_cell_ms = 1000 * m.cpu / max(1, len(cells))
        per_cell_ms_net = 1000 * (m.cpu - startup.cpu) / max(1, len(cells))
        results.update(
            {
                "harness": m.brief(),
                "cells": len(cells),
                "complete": complete,
                "server_cpu_s": server_cpu,
                "startup_cpu_s": startup.cpu,
                "controller_cpu_per_cell_ms": per_cell_ms,
                "controller_cpu_per_cell_ms_without_startup": per_cell_ms_net,
                "controller_cpu_per_host_ms": 1000 * m.cpu / args.hosts,
                "peak_rss_mb": m.maxrss_mb,
                "targets": {
                    "peak RSS <= 250 MB": verdict(m.maxrss_mb, RSS_TARGET_MB),
                    "CPU per cell <= 5 ms": verdict(per_cell_ms, CPU_TARGET_MS),
                },
            }
        )
        print()
        print(
            table(
                [
                    "hosts",
                    "cells",
                    "complete",
                    "wall s",
                    "controller CPU s",
                    "CPU / cell ms",
                    "CPU / host ms",
                    "peak RSS MB",
                    "server CPU s",
                ],
                [
                    [
                        args.hosts,
                        len(cells),
                        complete,
                        m.wall,
                        m.cpu,
                        per_cell_ms,
                        1000 * m.cpu / args.hosts,
                        m.maxrss_mb,
                        server_cpu,
                    ]
                ],
            )
        )
        print(
            f"(interpreter start and imports: {startup.cpu:.2f} s CPU;"
            f" {per_cell_ms_net:.2f} ms/cell without it)"
        )
        for k, v in results["targets"].items():
            print(f"target {k}: {v}")
        if not args.smoke:
            print(f"results: {save('scale', results)}")
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` ends it as Ctrl-C does
    main()
