"""Where harness's hosts' CPU and time go on the fleet-shaped lab, command by command.

A profile, not a benchmark: on bench/_netlab.py's lab, one harness run in this
process (cold, then warm) records every SSH command it sends to each host; then each
kind of command (`harness-setup`, `harness-claim`, `harness-cell`, ...) is sent again
to every host at once over connections opened beforehand, and the hosts' CPU (their
cgroup) and the wall time of each kind are printed. The lock holder is left out: it
runs beside the others for the whole run.

Run: bench/.venv/bin/python bench/_wan_commands.py [--hosts 50] [--shared-pids]
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import asyncssh

import harness.transport.ssh as ssh
from bench import fanout_wan
from bench._netlab import WanFleet, wan_fleet
from harness.cli.app import main as harness_main

SENT: dict[str, list[tuple[str, list[str], bytes | None]]] = {}


def record() -> None:
    """Wrap the SSH transport's `run` so that every command is noted per host."""
    original = ssh.SSHTransport.run

    async def run(self: Any, argv: Any, *args: Any, **kwargs: Any) -> Any:
        kind = str(argv[3]) if len(argv) > 3 and argv[0] == "sh" else str(argv[0])
        SENT.setdefault(str(getattr(self.host, "name", self.host)), []).append(
            (kind, list(argv), kwargs.get("stdin"))
        )
        return await original(self, argv, *args, **kwargs)

    ssh.SSHTransport.run = run  # type: ignore[method-assign]


async def replay(lab: WanFleet) -> None:
    kinds: dict[str, list[tuple[str, list[str], bytes | None]]] = {}
    for host, sent in SENT.items():
        for kind, argv, stdin in sent:
            if kind != "harness-hold":
                kinds.setdefault(kind, []).append((host, argv, stdin))
    address = {h.name: h.address for h in lab.hosts}
    conns: dict[str, asyncssh.SSHClientConnection] = {}

    async def connect(name: str) -> None:
        conns[name] = await asyncssh.connect(
            address[name],
            port=lab.hosts[0].port,
            username="root",
            client_keys=[str(lab.client_key)],
            known_hosts=str(lab.known_hosts),
        )

    async def measured(label: str, count: int, work: Any) -> None:
        cpu0, t0 = lab.fleet_cpu_s(), time.monotonic()
        await work
        wall = time.monotonic() - t0
        await asyncio.sleep(1.0)  # what the commands left to finish
        cpu = lab.fleet_cpu_s() - cpu0
        print(
            f"| {label} | {count} | {wall:.2f} | {cpu:.3f} | {1000 * cpu / count:.1f} |",
            flush=True,
        )

    print("| command | on hosts at once | wall s | hosts' CPU s | per command ms |")
    print("|---|---|---|---|---|")
    await measured("connect", len(address), asyncio.gather(*(connect(h) for h in address)))
    for kind, items in kinds.items():

        async def one(host: str, argv: list[str], stdin: bytes | None) -> None:
            await conns[host].run(shlex.join(argv), input=stdin, encoding=None)

        await measured(kind, len(items), asyncio.gather(*(one(*it) for it in items)))
    for conn in conns.values():
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--shared-pids", action="store_true")
    args = parser.parse_args()
    record()
    work = Path(tempfile.mkdtemp(prefix="harness-bench-wan-commands-"))
    with wan_fleet(work / "fleet", args.hosts, pid_ns=not args.shared_pids) as lab:
        matrix = fanout_wan.write_matrix(work, lab, fanout_wan.RUNTIMES, concurrency=args.hosts)
        for name in ("cold", "warm"):
            SENT.clear()
            cpu0, t0 = lab.fleet_cpu_s(), time.monotonic()
            try:
                harness_main(["run", str(matrix), "--out", str(work / name), "--no-progress"])
            except SystemExit as exc:
                time.sleep(1.0)
                print(
                    f"harness run ({name}): exit {exc.code}, {time.monotonic() - t0:.2f} s,"
                    f" hosts' CPU {lab.fleet_cpu_s() - cpu0:.2f} s",
                    file=sys.stderr,
                    flush=True,
                )
        asyncio.run(replay(lab))
    import shutil

    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
