"""Fleet-shaped fan-out: harness, parallel-ssh and Ansible over a WAN to N hosts that
each have a network namespace and a CPU quota of their own.

Setup (bench/_netlab.py): N OpenSSH sshd, each in its own network namespace behind a
veth pair, a round trip of --rtt (40 ms) away (bench/_wanproxy.py: 20 ms each way; this
kernel has no netem), each in a PID namespace of its own (--shared-pids: not), each
host's sshd and all it starts in a cgroup with a CPU quota (--host-cpu cores each,
--fleet-cpu for all hosts together, so the controller keeps the rest of the machine).
Runtimes host and bwrap (--runtimes to change), scenario mechanisms; every contender
runs the same staged probe command per (host, runtime).

Measured, in one run, as fanout.py does: a floor (one connection per host running
`true`, all at once), a warm-up harness run that stages the probe, then harness,
parallel-ssh and Ansible (`ansible all -m raw -f N`, ControlPersist), and --rounds
alternating rounds of all three, whose ratios are the figures to quote.

Run: bench/.venv/bin/python bench/fanout_wan.py [--hosts 50]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import fanout
from bench._common import (
    ROOT,
    Measured,
    ensure_bytecode,
    harness_run_complete,
    machine,
    median,
    save,
    table,
    tree_cpu,
    verdict,
    wait_for_quiet,
)
from bench._netlab import WanFleet, leftovers, wan_fleet

SCENARIOS = ["mechanisms"]
RUNTIMES = ["host", "bwrap"]
PSSH_TARGET = 1.0
ANSIBLE_TARGET = 0.5


def write_matrix(work: Path, lab: WanFleet, runtimes: list[str], *, concurrency: int) -> Path:
    import tomllib

    local = tomllib.loads((ROOT / "matrices" / "local.toml").read_text())
    inventory = lab.inventory(work / "inventory.toml", workdir=work / "hosts")
    blocks = {
        "host": '[runtimes.host]\nkind = "host"\n',
        "bwrap": "[runtimes.bwrap]\n"
        'kind = "command"\n'
        f"argv = {json.dumps(local['runtimes']['bwrap']['argv'])}\n"
        'allowed_inside = "/allowed"\n'
        'helpers_inside = "/helpers"\n',
        "runsc": '[runtimes.runsc]\nkind = "runsc"\nbinary = "runsc"\nflags = ["--network=none"]\n',
    }
    matrix = work / "fanout-wan.toml"
    matrix.write_text(
        f"""name = "bench-fanout-wan"
inventory = "{inventory}"
scenarios = {json.dumps(SCENARIOS)}

[settings]
concurrency = {concurrency}
timeout = {fanout.TIMEOUT}
check_timeout = 5

"""
        + "\n".join(blocks[r] for r in runtimes)
    )
    return matrix


class Meter(fanout.Meter):
    """fanout's meter; the server side also counts the WAN proxy (its CPU is the
    network's, which every contender's traffic crosses alike: reported apart)."""

    def __call__(self, label: str, fn: Any) -> dict[str, Any]:
        assert isinstance(self.lab, WanFleet)
        proxy0 = tree_cpu(self.lab.proxy_pids)
        fleet0 = self.lab.fleet_cpu_s()
        row = super().__call__(label, fn)
        row["proxy_cpu_s"] = tree_cpu(self.lab.proxy_pids) - proxy0
        # The hosts' cgroup: everything they ran, detached processes too.
        row["fleet_cpu_s"] = self.lab.fleet_cpu_s() - fleet0
        print(f"  {'':<34} fleet cpu (cgroup) {row['fleet_cpu_s']:6.2f}s", flush=True)
        return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--rtt", type=float, default=0.040, help="round trip, seconds")
    parser.add_argument("--host-cpu", type=float, default=1.0, help="each host's quota, cores")
    parser.add_argument(
        "--fleet-cpu", type=float, default=1.0, help="all hosts' quota together, cores"
    )
    parser.add_argument("--runtimes", default=",".join(RUNTIMES))
    parser.add_argument(
        "--shared-pids",
        action="store_true",
        help="no PID namespace per host: every host sees every host's processes"
        " (how the 2026-12-07 run was measured)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of all three")
    parser.add_argument("--skip", action="append", default=[], help="skip a peer (pssh, ansible)")
    parser.add_argument("--no-wait", action="store_true", help="do not wait for a quiet machine")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="3 hosts, one round, the peers whose tools are installed, nothing saved,"
        " and a check that nothing of the lab is left: does it run?",
    )
    args = parser.parse_args()
    runtimes = [r for r in args.runtimes.split(",") if r]
    if args.smoke:
        args.hosts, args.rounds, args.no_wait = 3, 1, True
        for peer, module in (("pssh", "pssh"), ("ansible", "ansible")):
            if importlib.util.find_spec(module) is None:
                print(f"smoke: {peer} is not installed here; skipped", flush=True)
                args.skip.append(peer)
    fanout.RUNTIMES = runtimes  # the peers' invocations, one per runtime
    n = args.hosts
    total = n * len(runtimes)
    ensure_bytecode()
    quiet = wait_for_quiet(max_wait=0 if args.no_wait else 300)
    work = Path(tempfile.mkdtemp(prefix="harness-bench-fanout-wan-"))
    results: dict[str, Any] = {
        "machine": machine(quiet),
        "hosts": n,
        "rtt_s": args.rtt,
        "host_cpu": args.host_cpu,
        "fleet_cpu": args.fleet_cpu,
        "own_pids": not args.shared_pids,
        "runtimes": runtimes,
        "scenarios": SCENARIOS,
    }
    started = time.monotonic()
    print(f"work folder: {work}", flush=True)
    try:
        print(
            f"starting {n} hosts: a namespace each, {1000 * args.rtt:.0f} ms round trip,"
            f" {args.host_cpu} core each, {args.fleet_cpu} for all",
            flush=True,
        )
        with wan_fleet(
            work / "fleet",
            n,
            rtt=args.rtt,
            host_cpu=args.host_cpu,
            fleet_cpu=args.fleet_cpu,
            pid_ns=not args.shared_pids,
        ) as lab:
            results["cgroup"] = lab.cgroup_kind
            matrix = write_matrix(work, lab, runtimes, concurrency=n)
            meter = Meter(lab, quiet=0.2 if args.smoke else 1.0)
            addresses = [h.address for h in lab.hosts]
            rows: dict[str, dict[str, Any]] = {}

            def harness_run(out: str) -> Measured:
                return harness_run_complete(
                    f"fan-out over WAN, harness ({out})", matrix, work / out, total
                )

            print("warm-up harness run (stages the probe on every host)", flush=True)
            rows["harness (first run, stages)"] = meter(
                "harness (first run, stages)", lambda: harness_run("run-cold")
            )
            peers = fanout.PeerSetup(work, matrix, SCENARIOS)
            try:
                spec = {
                    "addresses": addresses,
                    "port": lab.hosts[0].port,
                    "key": str(lab.client_key),
                    "known_hosts": str(lab.known_hosts),
                }
                rows["ssh true, asyncssh"] = meter(
                    "floor: ssh true x N, asyncssh",
                    lambda: fanout.helper("asyncssh", "_true_asyncssh", spec),
                )
                pspec = {
                    "addresses": addresses,
                    "port": lab.hosts[0].port,
                    "key": str(lab.client_key),
                    "commands": [peers.commands[r] for r in runtimes],
                }
                contenders: dict[str, Any] = {"harness": None}
                if "pssh" not in args.skip:
                    contenders["parallel-ssh"] = lambda: fanout.helper("pssh", "_pssh", pspec)
                if "ansible" not in args.skip:

                    def ansible() -> tuple[Measured, float]:
                        folder = work / f"ansible-{time.monotonic_ns()}"
                        folder.mkdir()
                        return fanout.ansible_phase(folder, lab, peers, n)

                    contenders["ansible"] = ansible
                rounds = []
                for i in range(args.rounds):
                    print(f"round {i + 1} of {args.rounds}", flush=True)
                    one: dict[str, Any] = {}
                    for name, fn in contenders.items():
                        if name == "harness":
                            one[name] = meter(
                                f"harness, round {i + 1}",
                                lambda i=i: harness_run(f"run-round-{i}"),
                            )
                        else:
                            one[name] = fanout.peer_row(meter, f"{name}, round {i + 1}", fn, total)
                    rounds.append(one)
                results["rounds"] = rounds
            finally:
                peers.close()
        results["rows"] = rows
        report(results)
        results["elapsed_s"] = time.monotonic() - started
        if not args.smoke:
            print(f"results: {save('fanout-wan', results)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    left = leftovers(os.getpid())  # its own: another run's lab may be up
    if left:
        raise SystemExit(f"LEFT BEHIND: {left}")
    print("lab removed: no namespace, veth, cgroup or process of the bench's left")


def report(results: dict[str, Any]) -> None:
    rounds = results["rounds"]
    peers = [p for p in ("parallel-ssh", "ansible") if rounds and p in rounds[0]]
    floor = results["rows"]["ssh true, asyncssh"]["wall_s"]
    summary: dict[str, Any] = {"floor_ssh_true_s": floor, "targets": {}}
    body = []
    for i, r in enumerate(rounds):
        h = r["harness"]["wall_s"]
        line: list[Any] = [i + 1, h]
        for p in peers:
            failed = "peer_failed" in r[p]
            line += [r[p]["wall_s"], "failed" if failed else h / r[p]["wall_s"]]
        line += [r["harness"]["client_cpu_s"], r["harness"]["fleet_cpu_s"]]
        body.append(line)
    headers = ["round", "harness wall s"]
    for p in peers:
        headers += [f"{p} wall s", f"harness / {p}"]
    # The hosts' CPU from their cgroup: the sshd process tree misses what detaches,
    # and, in PID namespaces, all that its namespace's init has not yet reaped.
    headers += ["harness client CPU s", "harness hosts' CPU s"]
    print()
    print(table(headers, body))
    for p, target in (("parallel-ssh", PSSH_TARGET), ("ansible", ANSIBLE_TARGET)):
        if p not in peers:
            continue
        ok = [r for r in rounds if "peer_failed" not in r[p]]
        if len(ok) < len(rounds):
            print(f"PEER FAILED: {p} in {len(rounds) - len(ok)} round(s); those left out")
        if not ok:
            summary["targets"][f"harness <= {target} x {p}"] = f"not compared: {p} failed"
            continue
        ratios = [r["harness"]["wall_s"] / r[p]["wall_s"] for r in ok]
        summary[f"harness_over_{p}"] = ratios
        summary[f"harness_over_{p}_median"] = median(ratios)
        summary["targets"][f"harness <= {target} x {p} (median of rounds)"] = verdict(
            median(ratios), target
        )
    hw = median([r["harness"]["wall_s"] for r in rounds])
    summary["harness_wall_median_s"] = hw
    summary["harness_over_floor"] = hw / floor
    cpu = [
        [name, median([r[name]["wall_s"] for r in rounds]),
         median([r[name]["client_cpu_s"] for r in rounds]),
         median([r[name]["fleet_cpu_s"] for r in rounds]),
         1000 * median([r[name]["fleet_cpu_s"] for r in rounds]) / results["hosts"],
         median([r[name]["proxy_cpu_s"] for r in rounds])]
        for name in ("harness", *peers)
    ]  # fmt: skip
    summary["medians"] = {row[0]: dict(zip(
        ("wall_s", "client_cpu_s", "fleet_cpu_s", "fleet_cpu_per_host_ms", "proxy_cpu_s"),
        row[1:], strict=True)) for row in cpu}  # fmt: skip
    print()
    print(
        table(
            ["contender (medians)", "wall s", "client CPU s", "hosts' CPU s (cgroup)",
             "per host ms", "proxy CPU s"],
            cpu,
        )
    )  # fmt: skip
    fleet = results["fleet_cpu"]
    print(
        f"the hosts share {fleet} core(s): harness's hosts' CPU alone takes at least"
        f" {summary['medians']['harness']['fleet_cpu_s'] / fleet:.2f} s of wall time"
    )
    print(f"floor: ssh true on every host at once {floor:.2f} s; harness / floor {hw / floor:.2f}")
    results["summary"] = summary
    for k, v in summary["targets"].items():
        print(f"target {k}: {v}")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` ends it as Ctrl-C does
    try:
        main()
    except KeyboardInterrupt:  # the lab is gone by now (its finally blocks ran)
        raise SystemExit(130) from None
