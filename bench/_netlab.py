"""A fleet-shaped lab for the fleet fan-out bench: N OpenSSH sshd hosts, each in a
network namespace of its own reached over a veth pair, a WAN round trip away, each
with a CPU quota of its own.

- network: namespace `hbfleet-<pid>-<i>`, a veth pair with a /30 of 10.<b>.0.0/16 (a
  /16 no route of the machine's touches, chosen at start); the host's address is its
  namespace's end. Nothing else: no other address is used.
- round trip: this kernel has no sch_netem (nor fq or etf, for a BPF departure time),
  so the delay is bench/_wanproxy.py's: a listener on the namespace's end, port 22,
  holding each chunk rtt/2 each way and a connection's set-up one round trip, in
  front of the host's sshd on the namespace's loopback (127.0.0.1:2222).
- CPU: every host's sshd, and all it starts (sessions, probes, sandboxes, canaries),
  in a cgroup of its own with a quota (`host_cpu` cores), under one parent with a
  quota for the whole fleet (`fleet_cpu` cores), so that the controller keeps the rest
  of the machine. cgroup v2's cpu.max where v2 has the cpu controller, else cgroup
  v1's cpu.cfs_quota_us (this machine: v1; its v2 hierarchy has hugetlb only).

Everything is removed on the way out, interrupted or not; what an earlier run that was
killed outright left (its pid gone) is removed at the start of the next.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from bench._lab import CLEAN_SHELL, Fleet
from tests.sshd import keygen, spawn_sshd

PREFIX = "hbfleet"
SSH_PORT = 22
INNER_PORT = 2222
PERIOD_US = 100_000
PROXY = Path(__file__).resolve().parent / "_wanproxy.py"
# $1 a cgroup.procs to join, $2 another ('' for none), then the command to become.
JOIN = 'echo $$ > "$1" && { [ -z "$2" ] || echo $$ > "$2"; } && shift 2 && exec "$@"'


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def cgroup_root() -> tuple[Path, str]:
    """Where cpu quotas are set here, and how: ("v2", cpu.max) or ("v1", cfs)."""
    v2 = Path("/sys/fs/cgroup")
    controllers = v2 / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        return v2, "v2"
    v1 = Path("/sys/fs/cgroup/cpu")
    if (v1 / "cpu.cfs_quota_us").exists():
        return v1, "v1"
    raise SystemExit("no cgroup cpu controller (v2 cpu.max or v1 cpu.cfs_quota_us) here")


def set_quota(group: Path, kind: str, cores: float) -> None:
    quota = max(int(cores * PERIOD_US), 1000)
    if kind == "v2":
        (group / "cpu.max").write_text(f"{quota} {PERIOD_US}\n")
    else:
        (group / "cpu.cfs_period_us").write_text(f"{PERIOD_US}\n")
        (group / "cpu.cfs_quota_us").write_text(f"{quota}\n")


def group_pids(group: Path) -> list[int]:
    pids: list[int] = []
    for sub in [group, *(p for p in group.rglob("*") if p.is_dir())]:
        with contextlib.suppress(OSError):
            pids += [int(x) for x in (sub / "cgroup.procs").read_text().split()]
    return pids


def remove_group(group: Path) -> None:
    """Kill what is left in a cgroup of ours (all started by our sshd), then remove it."""
    if not group.exists():
        return
    for _ in range(50):
        pids = group_pids(group)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
    for sub in sorted((p for p in group.rglob("*") if p.is_dir()), reverse=True):
        with contextlib.suppress(OSError):
            sub.rmdir()
    with contextlib.suppress(OSError):
        group.rmdir()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale() -> list[str]:
    """Remove what a killed run left: its namespaces and cgroups, named by its pid."""
    removed = []
    for name in ip("netns", "list", check=False).stdout.split():
        found = re.fullmatch(rf"{PREFIX}-(\d+)-\d+", name)
        if found and not alive(int(found[1])):
            ip("netns", "del", name, check=False)
            removed.append(name)
    with contextlib.suppress(SystemExit):
        root, _kind = cgroup_root()
        for group in [*root.glob(f"{PREFIX}-*"), *ACCT_V1.glob(f"{PREFIX}-*")]:
            found = re.fullmatch(rf"{PREFIX}-(\d+)", group.name)
            if found and not alive(int(found[1])):
                remove_group(group)
                removed.append(str(group))
    return removed


def leftovers(pid: int | None = None) -> list[str]:
    """Namespaces and cgroups of this bench's (of run `pid` if given) that still exist."""
    tag = PREFIX + "-" + (str(pid) if pid is not None else r"\d+")
    out = [n for n in ip("netns", "list", check=False).stdout.split() if re.match(tag + "-", n)]
    with contextlib.suppress(SystemExit):
        root, _kind = cgroup_root()
        groups = [*root.glob(f"{PREFIX}-*"), *ACCT_V1.glob(f"{PREFIX}-*")]
        out += [str(g) for g in groups if re.fullmatch(tag, g.name)]
    return out


def free_slash16() -> int:
    """b, for a 10.b.0.0/16 that no address or route of the machine's overlaps."""
    routes = ip("-4", "route", "show", "table", "all", check=False).stdout
    addrs = ip("-4", "addr", check=False).stdout
    used = set(re.findall(r"\b10\.(\d+)\.", routes + addrs))
    for b in range(200, 250):
        if str(b) not in used:
            return b
    raise SystemExit("no free 10.b.0.0/16 for the bench's veth pairs")


ACCT_V1 = Path("/sys/fs/cgroup/cpuacct")


def usage_s(group: Path, kind: str) -> float:
    """CPU seconds used by a cgroup of ours and all in it, detached processes too."""
    try:
        if kind == "v2":
            for line in (group / "cpu.stat").read_text().splitlines():
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
            return 0.0
        return int((ACCT_V1 / group.name / "cpuacct.usage").read_text()) / 1e9
    except OSError:
        return 0.0


@dataclass
class WanFleet(Fleet):
    """A Fleet whose hosts sit in namespaces, behind a WAN delay, under CPU quotas."""

    rtt: float = 0.0
    host_cpu: float = 0.0
    fleet_cpu: float = 0.0
    cgroup: Path | None = None
    cgroup_kind: str = ""
    proxy: subprocess.Popen[bytes] | None = None
    namespaces: list[str] = field(default_factory=list)

    @property
    def proxy_pids(self) -> list[int]:
        return [self.proxy.pid] if self.proxy else []

    def fleet_cpu_s(self) -> float:
        """CPU used so far by every host: sshd and all it started, detached or not
        (the canaries, a lingering probe), from the hosts' cgroup."""
        assert self.cgroup is not None
        return usage_s(self.cgroup, self.cgroup_kind)


def _addresses(b: int, i: int) -> tuple[str, str]:
    base = i * 4
    third, fourth = base // 256, base % 256
    return f"10.{b}.{third}.{fourth + 1}", f"10.{b}.{third}.{fourth + 2}"


@contextmanager
def wan_fleet(
    folder: Path,
    count: int,
    *,
    rtt: float = 0.040,
    host_cpu: float = 1.0,
    fleet_cpu: float = 1.0,
    pid_ns: bool = False,
) -> Iterator[WanFleet]:
    """Start `count` hosts; stop and remove everything after, whatever happens.

    `pid_ns`: each host's sshd also in a PID namespace of its own (as pid 1's child,
    with its own /proc), so that what scans the process table (pgrep) sees that
    host's processes only, as on a real host, not every host's of this machine."""
    if count > 16000:
        raise SystemExit("at most 16000 hosts (a /30 each in a /16)")
    sweep_stale()
    folder.mkdir(parents=True, exist_ok=True)
    client_key = folder / "client_key"
    authorized = folder / "authorized_keys"
    authorized.write_text(keygen(client_key, comment="bench-client") + "\n")
    host_key = folder / "host_ed25519"
    kind, key = keygen(host_key, comment="bench-host").split()[:2]
    root, cg_kind = cgroup_root()
    me = os.getpid()
    group = root / f"{PREFIX}-{me}"
    out = WanFleet(
        folder=folder,
        client_key=client_key,
        known_hosts=folder / "known_hosts",
        rtt=rtt,
        host_cpu=host_cpu,
        fleet_cpu=fleet_cpu,
        cgroup=group,
        cgroup_kind=cg_kind,
    )
    old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}

    def interrupted(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)  # unwinds through the finally below

    for s in old:
        signal.signal(s, interrupted)
    try:
        group.mkdir()
        if cg_kind == "v2":
            (group / "cgroup.subtree_control").write_text("+cpu\n")
        set_quota(group, cg_kind, fleet_cpu)
        acct = ACCT_V1 / group.name if cg_kind == "v1" and ACCT_V1.is_dir() else None
        if acct is not None:
            acct.mkdir()
        b = free_slash16()
        hosts = []
        for i in range(count):
            name = f"h{i + 1:03d}"
            ns = f"{PREFIX}-{me}-{i + 1}"
            outer, inner = _addresses(b, i)
            veth = f"hbf{me % 100000:05d}{i:04d}"[:15]
            ip("netns", "add", ns)
            out.namespaces.append(ns)
            ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
            ip("addr", "add", f"{outer}/30", "dev", veth)
            ip("link", "set", veth, "up")
            ip("-n", ns, "addr", "add", f"{inner}/30", "dev", "eth0")
            ip("-n", ns, "link", "set", "eth0", "up")
            ip("-n", ns, "link", "set", "lo", "up")
            hosts.append((name, ns, inner))
        spec = folder / "proxy.json"
        spec.write_text(
            json.dumps(
                {
                    "rtt": rtt,
                    "hosts": [
                        {
                            "netns": ns,
                            "listen": [a, SSH_PORT],
                            "upstream": ["127.0.0.1", INNER_PORT],
                        }
                        for _n, ns, a in hosts
                    ],
                }
            )
        )
        out.proxy = subprocess.Popen(
            [sys.executable, str(PROXY), str(spec)], stdout=subprocess.PIPE
        )
        assert out.proxy.stdout is not None
        if out.proxy.stdout.readline().strip() != b"ready":
            raise SystemExit("the WAN proxy did not start")
        entries = []
        for name, ns, address in hosts:
            sub = group / name
            sub.mkdir()
            set_quota(sub, cg_kind, host_cpu)

            # Into the host's cgroups before sshd starts, so nothing of it is outside;
            # v1's CPU accounting is a hierarchy of its own.
            join = (
                "sh", "-c", JOIN, "hbfleet-join",
                str(sub / "cgroup.procs"), str(acct / "cgroup.procs") if acct else "",
            )  # fmt: skip
            own_pids = ("unshare", "--pid", "--fork", "--kill-child", "--mount-proc")
            sshd = spawn_sshd(
                folder / name,
                name=name,
                address="127.0.0.1",
                port=INNER_PORT,
                host_keys=[host_key],
                authorized=authorized,
                extra=CLEAN_SHELL,
                prefix=(*join, "ip", "netns", "exec", ns, *(own_pids if pid_ns else ())),
                reach=(address, SSH_PORT),
            )
            # Clients know the host by its own address, on port 22.
            sshd.address, sshd.port = address, SSH_PORT
            out.hosts.append(sshd)
            entries.append(f"{address} {kind} {key}")
        out.known_hosts.write_text("\n".join(entries) + "\n")
        yield out
    finally:
        for h in out.hosts:
            with contextlib.suppress(Exception):
                h.stop()
        if out.proxy is not None:
            out.proxy.terminate()
            try:
                out.proxy.wait(5)
            except subprocess.TimeoutExpired:
                out.proxy.kill()
                out.proxy.wait()
        remove_group(group)
        remove_group(ACCT_V1 / group.name)
        for ns in out.namespaces:
            ip("netns", "del", ns, check=False)  # takes its veth pair with it
        for s, handler in old.items():
            signal.signal(s, handler)
