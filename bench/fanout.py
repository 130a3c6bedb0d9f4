"""Fan-out: harness over SSH against the floor and the tools people script with.

Setup: N real OpenSSH sshd hosts on loopback (127.0.1.1..N, port 2222, one ed25519
host key, a known_hosts the bench writes); runtimes host, bwrap, runsc; scenarios
mechanisms and egress-confinement. Every contender runs the same staged probe
command per (host, runtime); the egress canary is one netns canary the bench
starts (harness starts its own, one per host, as it always does).

Measured, in one run, each as wall time plus CPU by process tree:
- floor: one bare SSH connection per host, all in parallel, each running `true`
  (asyncssh and OpenSSH clients; the faster counts), plus the slowest cell's
  sandbox command run alone; and, because every "host" shares this machine's
  cores, the contended floor: every cell's command run locally at once;
- harness: `harness run` of the matrix (after one warm-up run that stages the probe);
- peers, one invocation per runtime: `ansible all -m raw -f N` (ControlPersist on
  by default), parallel-ssh (ParallelSSHClient, one run_command per runtime), and
  a sequential `ssh` loop;
- the SSH algorithms each client negotiates (from sshd's DEBUG log) and what a
  handshake costs per key exchange and host-key algorithm.

Run: bench/.venv/bin/python bench/fanout.py [--hosts 50]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import contextlib

from bench._common import (
    ROOT,
    Measured,
    ensure_bytecode,
    harness_run_complete,
    machine,
    machine_busy,
    median,
    require_complete,
    run_measured,
    save,
    table,
    tree_cpu,
    verdict,
    wait_for_quiet,
)
from bench._lab import PORT, Fleet, fleet

SCENARIOS = ["mechanisms", "egress-confinement"]
RUNTIMES = ["host", "bwrap", "runsc"]
TIMEOUT = 120
WALL_TARGET = 1.3
CPU_SHARE_TARGET = 0.10
PY = sys.executable


# -- helper modes, run as subprocesses so wait4 measures them alone -------------------


def _mode_true_asyncssh(spec: dict[str, Any]) -> None:
    import asyncssh

    async def one(address: str) -> None:
        async with asyncssh.connect(
            address,
            port=spec["port"],
            username="root",
            client_keys=[spec["key"]],
            known_hosts=spec["known_hosts"],
        ) as conn:
            await conn.run("true", check=True)

    async def everything() -> None:
        await asyncio.gather(*(one(a) for a in spec["addresses"]))

    asyncio.run(everything())


def _mode_true_openssh(spec: dict[str, Any]) -> None:
    procs = [
        subprocess.Popen(["ssh", *spec["options"], f"root@{a}", "true"]) for a in spec["addresses"]
    ]
    if any(p.wait() for p in procs):
        raise SystemExit("an ssh failed")


def _mode_parallel(spec: dict[str, Any]) -> None:
    """Run shell commands locally, `width` at a time; print how many completed."""

    def one(cmd: str) -> bool:
        done = subprocess.run(["bash", "-c", cmd], capture_output=True, check=False)
        return b'"type":"done"' in done.stdout

    with ThreadPoolExecutor(spec["width"]) as pool:
        ok = sum(pool.map(one, spec["commands"]))
    print(json.dumps({"complete": ok}))


def _mode_pssh(spec: dict[str, Any]) -> None:
    """What a parallel-ssh user writes: one client, one run_command per runtime."""
    from pssh.clients import ParallelSSHClient

    client = ParallelSSHClient(
        spec["addresses"],
        user="root",
        port=spec["port"],
        pkey=spec["key"],
        pool_size=len(spec["addresses"]),
        timeout=TIMEOUT + 30,
        num_retries=1,
    )
    complete = 0
    for cmd in spec["commands"]:
        output = client.run_command(cmd)
        client.join(output)
        for host_out in output:
            text = "\n".join(host_out.stdout or [])
            complete += '"type":"done"' in text
    print(json.dumps({"complete": complete}))


def _mode_canaries(spec: dict[str, Any]) -> None:
    """Start one egress canary per host at once, as harness does, then stop them."""
    import anyio

    from harness.hostside.canary_setup import high_port, start_canary, stop_canary
    from harness.matrix.models import Canary
    from harness.transport import LocalTransport

    async def everything() -> None:
        transport = LocalTransport()
        running: list[Any] = [None] * spec["count"]
        run_id = secrets.token_hex(4)

        async def one(i: int) -> None:
            running[i] = await start_canary(
                transport,
                probe=spec["probe"],
                workdir=spec["workdir"],
                canary=Canary(),
                run_id=run_id,
                host_index=i,
                nonce="00" * 8,
                high_port=high_port(Canary()),
            )

        async with anyio.create_task_group() as tg:
            for i in range(spec["count"]):
                tg.start_soon(one, i)
        async with anyio.create_task_group() as tg:
            for canary in running:
                tg.start_soon(stop_canary, transport, canary)
        print(json.dumps({"errors": sum(1 for c in running if c.error)}))

    anyio.run(everything)


def _mode_preps(spec: dict[str, Any]) -> None:
    """Prepare the host N times at once, as harness does once per host: its facts,
    the probe's sha256 and every runtime's version, in one command each. One
    preparation first stages the probe (the N=0 baseline does it too)."""
    import anyio

    from harness.matrix import load_matrix
    from harness.plan import make_plan
    from harness.probe import build_probe
    from harness.staging import prepare_host
    from harness.transport import LocalTransport

    plan = make_plan(load_matrix(spec["matrix"]))
    runtimes = list({c.runtime.name: c.runtime for c in plan.cells}.values())
    probe = build_probe()

    def prepare() -> Any:
        return prepare_host(LocalTransport(), probe, workdir=spec["workdir"], runtimes=runtimes)

    async def everything() -> None:
        await prepare()  # stages the probe, as the warm-up run does on every host
        async with anyio.create_task_group() as tg:
            for _ in range(spec["count"]):
                tg.start_soon(prepare)

    anyio.run(everything)
    print(json.dumps({"prepared": spec["count"]}))


MODES = {
    "_preps": _mode_preps,
    "_canaries": _mode_canaries,
    "_true_asyncssh": _mode_true_asyncssh,
    "_true_openssh": _mode_true_openssh,
    "_parallel": _mode_parallel,
    "_pssh": _mode_pssh,
}


def helper(
    label: str, mode: str, spec: dict[str, Any], *, env: dict[str, str] | None = None
) -> Measured:
    """Run a helper mode in a child process; its spec travels in a file."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(spec, fh)
    try:
        return run_measured(label, [PY, __file__, mode, fh.name], env=env)
    finally:
        os.unlink(fh.name)


def free_port() -> int:
    """A port nobody listens on now, so that a smoke run does not meet another's fleet."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- the setup ----------------------------------------------------------------------


def write_matrix(work: Path, lab: Fleet, *, concurrency: int, settle: float = 3.0) -> Path:
    local = tomllib.loads((ROOT / "matrices" / "local.toml").read_text())
    bwrap_argv = json.dumps(local["runtimes"]["bwrap"]["argv"])
    inventory = lab.inventory(work / "inventory.toml", workdir=work / "hosts")
    matrix = work / "fanout.toml"
    matrix.write_text(
        f"""name = "bench-fanout"
inventory = "{inventory}"
scenarios = {json.dumps(SCENARIOS)}

[settings]
concurrency = {concurrency}
timeout = {TIMEOUT}
check_timeout = 5

[canary]
settle = {settle}

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
    )
    return matrix


class PeerSetup:
    """The probe command per runtime, as a shell string, aimed at one bench canary."""

    def __init__(self, work: Path, matrix: Path, scenarios: list[str] | None = None) -> None:
        import anyio

        from harness.hostside.canary_setup import high_port, start_canary
        from harness.matrix import load_matrix
        from harness.matrix.models import Canary
        from harness.plan import make_plan
        from harness.probe import build_probe
        from harness.probe.protocol import probe_args
        from harness.runtimes import CellPaths
        from harness.transport import LocalTransport

        self.work = work / "peer"
        (self.work / "empty").mkdir(parents=True)
        probe = build_probe()
        self.probe = self.work / "probe"
        shutil.copy(probe.path, self.probe)
        self.probe.chmod(0o755)
        self.transport = LocalTransport()
        nonce = secrets.token_hex(8)
        scenarios = scenarios or ["mechanisms", "egress-confinement"]
        self.canary = None
        if "egress-confinement" in scenarios:
            self.canary = anyio.run(
                lambda: start_canary(
                    self.transport,
                    probe=str(self.probe),
                    workdir=str(self.work),
                    canary=Canary(),
                    run_id=secrets.token_hex(4),
                    host_index=63,
                    nonce=nonce,
                    high_port=high_port(Canary()),
                )
            )
            if self.canary.error:
                raise SystemExit(f"bench canary: {self.canary.error}")
        args = probe_args(
            scenarios,
            check_timeout=5,
            deadline=TIMEOUT,
            tag="bench-peer-cell",
            options=self.canary.probe_args() if self.canary else [],
        )
        plan = make_plan(load_matrix(matrix))
        first = plan.cells[0].host
        self.commands: dict[str, str] = {}
        for cell in (c for c in plan.cells if c.host is first):
            paths = CellPaths(
                probe=str(self.probe),
                workdir=str(self.work),
                cell_dir="@D@/cell",
                cell_id="@ID@",
            )
            inv = cell.runtime.invocation(paths, args)
            inner = shlex.join(["timeout", "-k", "5", str(TIMEOUT), *inv.argv])
            inner = inner.replace("@D@", "$d").replace("@ID@", "$id")
            if inv.stdin is not None:
                inner = f"printf %s {shlex.quote(inv.stdin.decode())} | {inner}"
            self.commands[cell.runtime.name] = (
                "d=$(mktemp -d /tmp/bench-peer-XXXXXX); id=peer-${d##*-}; "
                f'{inner}; s=$?; rm -rf "$d"; exit $s'
            )

    def close(self) -> None:
        import anyio

        from harness.hostside.canary import stop_canary

        if self.canary is not None:
            canary = self.canary
            anyio.run(lambda: stop_canary(self.transport, canary))


# -- contenders -------------------------------------------------------------------------


class Meter:
    """Wall, client-side CPU and server-side CPU (the sshd trees) of one phase."""

    def __init__(self, lab: Fleet | None, quiet: float = 1.0) -> None:
        self.lab = lab
        self.quiet = quiet

    def __call__(self, label: str, fn: Any) -> dict[str, Any]:
        server0 = tree_cpu(self.lab.pids) if self.lab else 0.0
        busy0 = machine_busy()
        extra_client = 0.0
        out = fn()
        if isinstance(out, tuple):
            out, extra_client = out
        time.sleep(self.quiet)  # let sshd reap its sessions
        server = (tree_cpu(self.lab.pids) if self.lab else 0.0) - server0
        busy = machine_busy() - busy0
        m: Measured = out
        client = m.cpu + extra_client
        row = {
            "label": label,
            "wall_s": m.wall,
            "client_cpu_s": client,
            "server_cpu_s": server,
            "total_cpu_s": client + server,
            "client_share": client / (client + server) if client + server else 0.0,
            "machine_busy_s": busy,
            "client_maxrss_mb": m.maxrss_mb,
            "exit_status": m.exit_status,
            "stdout_tail": m.stdout[-300:],
            "stderr_tail": m.stderr[-1500:],
        }
        print(
            f"  {label:<34} wall {m.wall:7.2f}s  client cpu {client:6.2f}s  "
            f"server cpu {server:6.2f}s  exit {m.exit_status}",
            flush=True,
        )
        return row


def completed(row: dict[str, Any]) -> int:
    """How many cells a contender's row says completed (its helper's last line)."""
    with contextlib.suppress(ValueError, IndexError, TypeError):
        return int(json.loads(row["stdout_tail"].strip().splitlines()[-1]).get("complete", 0))
    return 0


def peer_row(meter: Meter, label: str, fn: Any, total: int) -> dict[str, Any]:
    """A peer's row, retried once if some of its cells failed. A peer that fails again
    keeps its row, marked `peer_failed`: reported as such, and left out of the
    comparisons, never a reason to withhold harness's own verdicts."""
    row = meter(label, fn)
    if completed(row) == total:
        return row
    first = f"{completed(row)} of {total}"
    print(f"  {label}: {first} cells complete; retried once", flush=True)
    row = meter(f"{label} (retried)", fn)
    row["retried_after"] = first
    if completed(row) != total:
        why = row["stderr_tail"].strip().splitlines()[-1:] or [f"exit {row['exit_status']}"]
        row["peer_failed"] = f"{completed(row)} of {total} cells complete after one retry: {why[0]}"
    return row


def masters_cpu(control_dir: Path) -> tuple[float, list[int]]:
    """CPU of OpenSSH ControlPersist masters (they detach, so wait4 misses them)."""
    import psutil

    total, pids = 0.0, []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        if cmd.startswith("ssh") and str(control_dir) in cmd:
            try:
                t = proc.cpu_times()
            except psutil.Error:
                continue
            total += t.user + t.system
            pids.append(proc.pid)
    return total, pids


def ansible_phase(work: Path, lab: Fleet, peers: PeerSetup, width: int) -> tuple[Measured, float]:
    inv = work / "ansible.ini"
    lines = [
        f"{h.name} ansible_host={h.address} ansible_port={h.port} ansible_user=root"
        for h in lab.hosts
    ]
    inv.write_text(
        "[all]\n"
        + "\n".join(lines)
        + "\n\n[all:vars]\n"
        + f"ansible_ssh_private_key_file={lab.client_key}\n"
        + f"ansible_ssh_common_args='-o UserKnownHostsFile={lab.known_hosts} "
        + "-o StrictHostKeyChecking=yes'\n"
    )
    control = work / "cp"
    control.mkdir()
    env = {
        **os.environ,
        "ANSIBLE_HOME": str(work / "ansible-home"),
        "ANSIBLE_LOCAL_TEMP": str(work / "ansible-tmp"),
        "ANSIBLE_SSH_CONTROL_PATH_DIR": str(control),
        "ANSIBLE_HOST_KEY_CHECKING": "True",
        "ANSIBLE_TIMEOUT": "60",
        "ANSIBLE_NOCOLOR": "1",
    }
    ansible = str(Path(sys.executable).with_name("ansible"))
    script = " && ".join(
        shlex.join([ansible, "all", "-i", str(inv), "-m", "raw", "-f", str(width), "-a", cmd])
        for cmd in (peers.commands[r] for r in RUNTIMES)
    )
    m = run_measured("ansible", ["bash", "-c", script], env=env)
    extra, pids = masters_cpu(control)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, 15)
    m.stdout = json.dumps({"complete": m.stdout.count('"type":"done"')})
    return m, extra


def ssh_loop_phase(lab: Fleet, peers: PeerSetup) -> Measured:
    opts = shlex.join(lab.ssh_options())
    hosts = " ".join(h.address for h in lab.hosts)
    cmds = " ".join(shlex.quote(peers.commands[r]) for r in RUNTIMES)
    script = (
        f"n=0; for cmd in {cmds}; do for h in {hosts}; do "
        f'ssh {opts} root@$h "$cmd" | grep -q \'"type":"done"\' && n=$((n+1)); '
        'done; done; echo "{\\"complete\\": $n}"'
    )
    return run_measured("ssh loop", ["bash", "-c", script])


# -- SSH algorithms ------------------------------------------------------------------


def algorithms(work: Path) -> dict[str, Any]:
    """Which algorithms each client negotiates (read from sshd's DEBUG log), and the
    CPU of one connection running `true`, per key exchange and host-key algorithm."""
    import asyncssh

    out: dict[str, Any] = {"negotiated": {}, "cost": []}
    with fleet(
        work / "algs",
        1,
        host_key_types=("ed25519", "ecdsa", "rsa"),
        port=2223,
        log_level="DEBUG1",
    ) as lab:
        h = lab.hosts[0]
        log = h.folder / "sshd.log"

        def negotiated(label: str, connect: Any) -> None:
            before = log.stat().st_size
            connect()
            time.sleep(0.3)
            text = log.read_bytes()[before:].decode("utf-8", "replace")
            seen = {}
            for key, pattern in (
                ("kex", r"kex: algorithm: (\S+)"),
                ("host_key", r"kex: host key algorithm: (\S+)"),
                ("cipher", r"kex: client->server cipher: (\S+)"),
                ("mac", r"kex: client->server cipher: \S+ MAC: (\S+)"),
            ):
                found = re.search(pattern, text)
                seen[key] = found.group(1) if found else "?"
            out["negotiated"][label] = seen

        def openssh(extra: list[str]) -> subprocess.CompletedProcess[bytes]:
            return subprocess.run(
                ["ssh", *lab.ssh_options(), *extra, f"root@{h.address}", "true"],
                capture_output=True,
                check=True,
            )

        async def asyncssh_true(**kw: Any) -> None:
            async with asyncssh.connect(
                h.address,
                port=h.port,
                username="root",
                client_keys=[str(lab.client_key)],
                known_hosts=str(lab.known_hosts),
                **kw,
            ) as conn:
                await conn.run("true", check=True)

        def pssh_true() -> None:
            from pssh.clients import SSHClient

            c = SSHClient(h.address, user="root", port=h.port, pkey=str(lab.client_key))
            c.wait_finished(c.run_command("true"))
            c.disconnect()

        from harness.transport.ssh import default_ciphers

        negotiated(
            "harness (asyncssh, harness's defaults)",
            lambda: asyncio.run(asyncssh_true(encryption_algs=list(default_ciphers()))),
        )
        negotiated("asyncssh (its own defaults)", lambda: asyncio.run(asyncssh_true()))
        negotiated("OpenSSH ssh / ansible (defaults)", lambda: openssh([]))
        negotiated("parallel-ssh (libssh2, defaults)", pssh_true)

        reps = 5
        server = lambda: tree_cpu([h.process.pid])  # noqa: E731
        for kex in (
            "sntrup761x25519-sha512@openssh.com",
            "curve25519-sha256",
            "ecdh-sha2-nistp256",
        ):
            for hk in ("ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512"):
                rows = []
                for _ in range(reps):
                    s0 = server()
                    m = run_measured(
                        "ssh",
                        [
                            "ssh",
                            *lab.ssh_options(),
                            "-o",
                            f"KexAlgorithms={kex}",
                            "-o",
                            f"HostKeyAlgorithms={hk}",
                            f"root@{h.address}",
                            "true",
                        ],
                    )
                    time.sleep(0.15)
                    rows.append((m.wall, m.cpu, server() - s0))
                out["cost"].append(_cost_row("OpenSSH", kex, hk, rows))
        for kex in ("curve25519-sha256", "ecdh-sha2-nistp256"):
            for hk in ("ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512"):
                rows = []
                for _ in range(reps):
                    s0, c0, t0 = server(), time.process_time(), time.monotonic()
                    asyncio.run(asyncssh_true(kex_algs=[kex], server_host_key_algs=[hk]))
                    wall, cpu = time.monotonic() - t0, time.process_time() - c0
                    time.sleep(0.15)
                    rows.append((wall, cpu, server() - s0))
                out["cost"].append(_cost_row("asyncssh", kex, hk, rows))

        async def per_command(cipher: str, count: int = 200) -> float:
            async with asyncssh.connect(
                h.address,
                port=h.port,
                username="root",
                client_keys=[str(lab.client_key)],
                known_hosts=str(lab.known_hosts),
                encryption_algs=[cipher],
            ) as conn:
                c0 = time.process_time()
                for _ in range(count):
                    await conn.run("true", check=True)
                return (time.process_time() - c0) / count

        out["cipher_per_command"] = {
            cipher: asyncio.run(per_command(cipher))
            for cipher in ("chacha20-poly1305@openssh.com", "aes256-gcm@openssh.com")
        }
    return out


def _cost_row(
    client: str, kex: str, hk: str, rows: list[tuple[float, float, float]]
) -> dict[str, Any]:
    return {
        "client": client,
        "kex": kex,
        "host_key": hk,
        "wall_s": median([r[0] for r in rows]),
        "client_cpu_s": median([r[1] for r in rows]),
        "server_cpu_s": sum(r[2] for r in rows) / len(rows),  # 10 ms ticks: a mean
    }


# -- main -------------------------------------------------------------------------------


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] in MODES:
        MODES[sys.argv[1]](json.loads(Path(sys.argv[2]).read_text()))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--no-wait", action="store_true", help="do not wait for a quiet machine")
    parser.add_argument("--skip-algorithms", action="store_true")
    parser.add_argument("--algorithms-only", action="store_true")
    parser.add_argument("--skip", action="append", default=[], help="skip a contender")
    parser.add_argument(
        "--rounds", type=int, default=3, help="head-to-head rounds of harness and parallel-ssh"
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="2 hosts on a free port, one round, no SSH algorithms, a short settle window,"
        " the peers whose tools are installed, nothing saved: does it run?",
    )
    args = parser.parse_args()
    port, settle = PORT, 3.0
    if args.smoke:
        args.hosts, args.rounds, args.no_wait, args.skip_algorithms = 2, 1, True, True
        port, settle = free_port(), 0.5
        for peer, module in (("pssh", "pssh"), ("ansible", "ansible")):
            if importlib.util.find_spec(module) is None:
                print(f"smoke: {peer} is not installed here; skipped", flush=True)
                args.skip.append(peer)
    n = args.hosts
    ensure_bytecode()
    quiet = wait_for_quiet(max_wait=0 if args.no_wait else 300)
    work = Path(tempfile.mkdtemp(prefix="harness-bench-fanout-"))
    results: dict[str, Any] = {
        "machine": machine(quiet),
        "hosts": n,
        "runtimes": RUNTIMES,
        "scenarios": SCENARIOS,
    }
    started = time.monotonic()
    try:
        if not args.skip_algorithms:
            print("SSH algorithms", flush=True)
            results["algorithms"] = algorithms(work)
            if args.algorithms_only:
                print_algorithms(results["algorithms"])
                print(f"results: {save('fanout-algorithms', results)}")
                return
        print(f"starting {n} sshd on 127.0.1.1..{n}", flush=True)
        with fleet(work / "fleet", n, port=port) as lab:
            matrix = write_matrix(work, lab, concurrency=n, settle=settle)
            meter = Meter(lab, quiet=0.2 if args.smoke else 1.0)
            addresses = [h.address for h in lab.hosts]
            rows: dict[str, dict[str, Any]] = {}
            print("warm-up harness run (stages the probe on every host)", flush=True)

            def harness_run(out: str) -> Measured:
                return harness_run_complete(
                    f"fan-out, harness ({out})", matrix, work / out, n * len(RUNTIMES)
                )

            rows["harness (first run, stages)"] = meter(
                "harness (first run, stages)", lambda: harness_run("run-cold")
            )
            peers = PeerSetup(work, matrix)
            try:
                print("floor", flush=True)
                spec = {
                    "addresses": addresses,
                    "port": lab.hosts[0].port,
                    "key": str(lab.client_key),
                    "known_hosts": str(lab.known_hosts),
                }
                rows["ssh true, asyncssh"] = meter(
                    "ssh true x N, asyncssh", lambda: helper("asyncssh", "_true_asyncssh", spec)
                )
                rows["ssh true, OpenSSH"] = meter(
                    "ssh true x N, OpenSSH",
                    lambda: helper(
                        "openssh",
                        "_true_openssh",
                        {"addresses": addresses, "options": lab.ssh_options()},
                    ),
                )
                alone = {}
                for rt in RUNTIMES:
                    times = []
                    for _ in range(1 if args.smoke else 3):
                        t0 = time.monotonic()
                        subprocess.run(
                            ["bash", "-c", peers.commands[rt]], capture_output=True, check=False
                        )
                        times.append(time.monotonic() - t0)
                    alone[rt] = median(times)
                results["cell_alone_s"] = alone
                every = [peers.commands[rt] for rt in RUNTIMES for _ in range(n)]
                rows["every cell, local, at once"] = meter(
                    "every cell locally, N at a time",
                    lambda: helper("cells", "_parallel", {"commands": every, "width": n}),
                )
                rows["canaries"] = meter(
                    "N egress canaries at once, local",
                    lambda: helper(
                        "canaries",
                        "_canaries",
                        {"count": n, "probe": str(peers.probe), "workdir": str(peers.work)},
                    ),
                )

                def preps(count: int) -> Measured:
                    spec = {"count": count, "matrix": str(matrix), "workdir": str(work / "preps")}
                    return helper("preps", "_preps", spec)

                rows["helper start-up"] = meter(
                    "a helper doing nothing (start-up only)", lambda: preps(0)
                )
                rows["preparations"] = meter("N host preparations at once, local", lambda: preps(n))
                print("harness", flush=True)
                rows["harness"] = meter("harness run", lambda: harness_run("run"))
                cells = [
                    json.loads(x) for x in (work / "run" / "cells.jsonl").read_text().splitlines()
                ]
                rows["harness"]["complete"] = sum(c["status"] == "complete" for c in cells)
                rows["harness"]["cells"] = len(cells)
                print("peers", flush=True)
                total = n * len(RUNTIMES)
                if "ansible" not in args.skip:
                    rows["ansible"] = peer_row(
                        meter, "ansible -m raw -f N", lambda: ansible_phase(work, lab, peers, n),
                        total,
                    )  # fmt: skip
                if "pssh" not in args.skip:
                    pspec = {
                        "addresses": addresses,
                        "port": lab.hosts[0].port,
                        "key": str(lab.client_key),
                        "commands": [peers.commands[r] for r in RUNTIMES],
                    }
                    rows["parallel-ssh"] = peer_row(
                        meter, "parallel-ssh", lambda: helper("pssh", "_pssh", pspec), total
                    )
                if "ssh-loop" not in args.skip:
                    rows["ssh loop"] = peer_row(
                        meter, "sequential ssh loop", lambda: ssh_loop_phase(lab, peers), total
                    )
                if args.rounds and "pssh" not in args.skip:
                    # The closest peer, head to head: alternate runs, so that a noisy
                    # minute on this shared machine hits both alike.
                    print(f"head to head with parallel-ssh, {args.rounds} rounds", flush=True)
                    rounds = []
                    for i in range(args.rounds):
                        h_row = meter(
                            f"harness run, round {i + 1}",
                            lambda i=i: harness_run(f"run-round-{i}"),
                        )
                        p_row = peer_row(
                            meter, f"parallel-ssh, round {i + 1}",
                            lambda: helper("pssh", "_pssh", pspec), total,
                        )  # fmt: skip
                        rounds.append({"harness": h_row, "parallel-ssh": p_row})
                    results["head_to_head"] = rounds
            finally:
                peers.close()
        for row in rows.values():
            with contextlib.suppress(ValueError, IndexError):
                row.update(json.loads(row["stdout_tail"].strip().splitlines()[-1]))
        # The floor is harness's own measurement: it must be whole. A peer that failed
        # is reported and left out of the comparisons (peer_row).
        done = int(rows["every cell, local, at once"].get("complete", 0))
        require_complete("fan-out, every cell, local, at once", done, n * len(RUNTIMES))
        results["rows"] = rows
        report(results)
        results["elapsed_s"] = time.monotonic() - started
        if not args.smoke:
            print(f"results: {save('fanout', results)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(results: dict[str, Any]) -> None:
    rows = results["rows"]
    handshake = min(rows["ssh true, asyncssh"]["wall_s"], rows["ssh true, OpenSSH"]["wall_s"])
    slowest = max(results["cell_alone_s"].values())
    floor = handshake + slowest
    contended = handshake + rows["every cell, local, at once"]["wall_s"]
    with_canaries = contended + rows["canaries"]["wall_s"]
    floor_cpu = (
        min(rows["ssh true, asyncssh"]["total_cpu_s"], rows["ssh true, OpenSSH"]["total_cpu_s"])
        + rows["every cell, local, at once"]["client_cpu_s"]
    )
    h = rows["harness"]
    results["summary"] = {
        "floor_s": floor,
        "floor_parts": {"ssh_true_parallel_s": handshake, "slowest_cell_alone_s": slowest},
        "contended_floor_s": contended,
        "floor_cpu_s": floor_cpu,
        "harness_over_floor": h["wall_s"] / floor,
        "harness_over_contended_floor": h["wall_s"] / contended,
        "contended_floor_with_canaries_s": with_canaries,
        "harness_over_contended_floor_with_canaries": h["wall_s"] / with_canaries,
        "controller_share": h["client_share"],
        "targets": {
            "wall <= 1.3 x floor": verdict(h["wall_s"] / floor, WALL_TARGET),
            "wall <= 1.3 x contended floor": verdict(h["wall_s"] / contended, WALL_TARGET),
            "wall <= 1.3 x contended floor with canaries": verdict(
                h["wall_s"] / with_canaries, WALL_TARGET
            ),
            "controller cpu <= 10% of total": verdict(h["client_share"], CPU_SHARE_TARGET),
            **{
                f"faster than {p}": verdict(h["wall_s"], rows[p]["wall_s"])
                if "peer_failed" not in rows[p]
                else f"not compared: {p} failed ({rows[p]['peer_failed']})"
                for p in ("ansible", "parallel-ssh", "ssh loop")
                if p in rows
            },
        },
    }
    table_rows = []
    for name, r in rows.items():
        table_rows.append(
            [
                name,
                r["wall_s"],
                r["wall_s"] / h["wall_s"],
                r["client_cpu_s"],
                r["server_cpu_s"],
                f"{100 * r['client_share']:.1f}%",
                r.get("complete", ""),
            ]
        )
    print()
    print(
        table(
            [
                "contender",
                "wall s",
                "wall / harness",
                "client CPU s",
                "server CPU s",
                "client share",
                "complete cells",
            ],
            table_rows,
        )
    )
    print()
    print(
        table(
            ["floor", "seconds", "harness / floor"],
            [
                ["ssh true x N in parallel + slowest cell alone", floor, h["wall_s"] / floor],
                ["ssh true x N + every cell locally at once", contended, h["wall_s"] / contended],
                [
                    "... + N egress canaries at once (harness's per-host fixture)",
                    with_canaries,
                    h["wall_s"] / with_canaries,
                ],
                ["floor CPU (handshakes + every cell), s", floor_cpu, h["total_cpu_s"] / floor_cpu],
            ],
        )
    )
    for name, r in rows.items():
        if "peer_failed" in r:
            print(f"PEER FAILED: {name}: {r['peer_failed']}; its figures are not compared")
    failed_rounds = [
        i + 1 for i, r in enumerate(results.get("head_to_head") or ())
        if "peer_failed" in r["parallel-ssh"]
    ]  # fmt: skip
    if failed_rounds:
        print(f"PEER FAILED: parallel-ssh in head-to-head round(s) {failed_rounds}; left out")
    rounds = [
        r for r in results.get("head_to_head") or () if "peer_failed" not in r["parallel-ssh"]
    ]
    if rounds:
        walls = {k: [r[k]["wall_s"] for r in rounds] for k in ("harness", "parallel-ssh")}
        cpus = {k: [r[k]["total_cpu_s"] for r in rounds] for k in ("harness", "parallel-ssh")}
        ratios = [h / p for h, p in zip(walls["harness"], walls["parallel-ssh"], strict=True)]
        results["summary"]["head_to_head"] = {
            "harness_wall_median_s": median(walls["harness"]),
            "pssh_wall_median_s": median(walls["parallel-ssh"]),
            "wall_ratios": ratios,
            "harness_cpu_median_s": median(cpus["harness"]),
            "pssh_cpu_median_s": median(cpus["parallel-ssh"]),
        }
        results["summary"]["targets"]["faster than parallel-ssh, head to head (median)"] = verdict(
            median(walls["harness"]), median(walls["parallel-ssh"])
        )
        print()
        print(
            table(
                ["round", "harness wall s", "parallel-ssh wall s", "harness / parallel-ssh",
                 "harness CPU s", "parallel-ssh CPU s"],
                [
                    [i + 1, walls["harness"][i], walls["parallel-ssh"][i], ratios[i],
                     cpus["harness"][i], cpus["parallel-ssh"][i]]
                    for i in range(len(rounds))
                ],
            )
        )  # fmt: skip
    if (
        "preparations" in rows
        and "parallel-ssh" in rows
        and "peer_failed" not in rows["parallel-ssh"]
    ):
        # harness's per-host work that no peer does: the egress canary and the host's
        # preparation (facts, the probe's sha256, each runtime's version). The canary
        # daemons leave the helper's process tree, so the machine's busy time counts.
        for name in ("helper start-up", "preparations", "canaries"):
            if rows[name]["exit_status"] != 0:
                raise SystemExit(f"the {name} helper failed: {rows[name]['stderr_tail'][-500:]}")
        base = rows["helper start-up"]["machine_busy_s"]
        canaries = max(rows["canaries"]["machine_busy_s"] - base, 0.0)
        preps = max(rows["preparations"]["machine_busy_s"] - base, 0.0)
        extra = canaries + preps
        p = rows["parallel-ssh"]
        results["summary"]["per_host_extra"] = {
            "cpu_s": extra,
            "per_host_ms": 1000 * extra / results["hosts"],
            "harness_cpu_over_pssh_cpu_plus_extra": h["total_cpu_s"] / (p["total_cpu_s"] + extra),
        }
        print()
        print(
            table(
                ["harness's own per-host work", "CPU s", "per host ms"],
                [
                    ["N canaries up and down (machine busy time)", canaries,
                     1000 * canaries / results["hosts"]],
                    ["N host preparations (machine busy time)", preps,
                     1000 * preps / results["hosts"]],
                    ["harness CPU / (parallel-ssh CPU + both)",
                     h["total_cpu_s"] / (p["total_cpu_s"] + extra), ""],
                ],
            )
        )  # fmt: skip
    for k, v in results["summary"]["targets"].items():
        print(f"target {k}: {v}")
    if "algorithms" in results:
        print_algorithms(results["algorithms"])


def print_algorithms(alg: dict[str, Any]) -> None:
    seen = alg["negotiated"].items()
    print()
    print(
        table(
            ["client", "kex", "host key", "cipher", "mac"],
            [[k, v["kex"], v["host_key"], v["cipher"], v["mac"]] for k, v in seen],
        )
    )
    cost = [
        [c["client"], c["kex"], c["host_key"], c["wall_s"], c["client_cpu_s"], c["server_cpu_s"]]
        for c in alg["cost"]
    ]
    print()
    print(table(["client", "kex", "host key", "wall s", "client CPU s", "sshd CPU s"], cost))
    if "cipher_per_command" in alg:
        print()
        rows = [[k, 1000 * v] for k, v in alg["cipher_per_command"].items()]
        print(table(["asyncssh cipher", "client CPU per command, ms"], rows))


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` ends it as Ctrl-C does
    main()
