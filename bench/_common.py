"""What every benchmark shares: the machine's description, CPU accounting by
process tree, timed subprocesses, tables and the JSON results file.

CPU accounting (see bench/README.md):
- a process the bench starts itself (the harness CLI, ansible, a shell loop) is
  measured with os.wait4: its rusage holds its own CPU plus that of every
  descendant it reaped, and its peak RSS;
- long-lived servers (the sshd fleet, the simulated hosts) are measured from
  /proc/PID/stat as a delta of user+system+children's user+system between two
  quiet points, so it covers every session, shell, probe and sandbox they reaped;
- /proc/stat's machine-wide busy time is recorded as a cross-check; it also
  counts anything else running on the machine, which is why it is not primary.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
HARNESS_PY = ROOT / ".venv" / "bin" / "python"  # the project's venv: what users run
TICK = os.sysconf("SC_CLK_TCK")


def harness_argv(*args: str) -> list[str]:
    """The real CLI, from the project's venv (not the bench's)."""
    python = HARNESS_PY if HARNESS_PY.exists() else Path(sys.executable)
    return [str(python), "-m", "harness", *args]


def ensure_bytecode() -> None:
    """Compile harness's modules, as `pip install` does for a regular install.

    An editable install writes __pycache__ on first import, unless
    PYTHONDONTWRITEBYTECODE is set (it is, on this machine): then every run would
    compile harness from source, 0.08 s that no installed copy pays.
    """
    python = HARNESS_PY if HARNESS_PY.exists() else Path(sys.executable)
    subprocess.run(
        [str(python), "-m", "compileall", "-q", str(ROOT / "harness")],
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )


def envelope_split(argv: Sequence[str]) -> tuple[list[str], list[str]] | None:
    """A cell's one command (harness/hostside/envelope.py), split into the envelope's
    own values ($1 marker, $2 sentinel root, $3 token, $4 original, ...) and the
    sandbox command; None for any other command. The count of values is read from
    the envelope's own `shift`, so the benches follow when it changes."""
    import re

    from harness.hostside.envelope import SCRIPT

    if len(argv) < 4 or list(argv[:2]) != ["sh", "-c"] or argv[3] != "harness-cell":
        return None
    found = re.search(r"shift (\d+)", SCRIPT)
    assert found, "the envelope's script no longer shifts its own values"
    n = int(found.group(1))
    return list(argv[4 : 4 + n]), list(argv[4 + n :])


# -- the machine -------------------------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def loadavg() -> tuple[float, float, float]:
    return os.getloadavg()


def busy_cores(seconds: float = 3.0) -> float:
    """How many cores were busy, on average, over the next few seconds (/proc/stat).

    The load average is not used to decide: on this machine it also counts tasks
    that wait in the kernel (network namespace clean-up), so it can read 20 while
    the CPUs are idle.
    """
    before = machine_busy()
    time.sleep(seconds)
    return (machine_busy() - before) / seconds


def wait_for_quiet(*, below: float = 0.25, max_wait: float = 600.0) -> dict[str, Any]:
    """Wait (bounded) until the CPUs are nearly idle; say what happened."""
    started = time.monotonic()
    first = busy_cores()
    busy = first
    while busy >= below and time.monotonic() - started < max_wait:
        busy = busy_cores(5.0)
    return {
        "busy_cores_before_wait": round(first, 2),
        "busy_cores_at_start": round(busy, 2),
        "load_at_start": loadavg(),
        "waited_s": round(time.monotonic() - started, 1),
    }


def memory_kib() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1])
    return 0


def machine(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    def version(argv: Sequence[str]) -> str:
        if not shutil.which(argv[0]):
            return "missing"
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        return (
            (done.stdout or done.stderr).strip().splitlines()[0]
            if done.stdout or done.stderr
            else ""
        )

    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "nproc": os.cpu_count(),
        "cpu_model": cpu_model(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "memory_gib": round(memory_kib() / 2**20, 1),
        "openssh": version(["ssh", "-V"]),
        "runsc": version(["runsc", "--version"]),
        "bwrap": version(["bwrap", "--version"]),
        **(extra or {}),
    }


# -- CPU --------------------------------------------------------------------------


def machine_busy() -> float:
    """Seconds of CPU spent, all cores, all processes, since boot (/proc/stat)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / TICK


def tree_cpu(pids: Iterable[int]) -> float:
    """CPU of long-lived processes and of every descendant they have reaped
    (/proc/PID/stat: utime, stime, cutime, cstime), so the bench needs no psutil."""
    total = 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()  # the name may hold spaces
        total += sum(int(x) for x in fields[11:15])
    return total / TICK


class Incomplete(SystemExit):
    """A target's verdict over cells that did not complete is not a figure."""


def require_complete(what: str, complete: int, total: int, why: str = "") -> None:
    """Refuse to judge a target unless every cell completed: say why, exit 2."""
    if total and complete == total:
        return
    detail = f": {why}" if why else ""
    print(
        f"NOT JUDGED: {what}: {complete} of {total} cells complete{detail}."
        " A figure measured on failed cells is not a figure; no target verdict printed.",
        flush=True,
    )
    raise Incomplete(2)


def harness_run_complete(what: str, matrix: Path, out: Path, total: int) -> Measured:
    """`harness run MATRIX --out OUT`, measured; refused (require_complete) unless all
    `total` of its cells completed, the failed cells' reasons said."""
    m = run_measured(
        "harness", harness_argv("run", str(matrix), "--out", str(out), "--no-progress")
    )
    found = out / "cells.jsonl"
    cells = [json.loads(x) for x in found.read_text().splitlines()] if found.exists() else []
    failed = sorted({str(c.get("reason")) for c in cells if c["status"] != "complete"})
    done = len(cells) - sum(c["status"] != "complete" for c in cells)
    why = "; ".join(failed)[:500] or f"harness exited {m.exit_status}: {m.stderr[-300:]}"
    require_complete(what, done, total, why)
    return m


@dataclass
class Measured:
    """One timed run of a command, measured as a process tree."""

    label: str
    wall: float
    cpu: float  # the process and every descendant it reaped
    maxrss_mb: float
    exit_status: int
    stdout: str = field(default="", repr=False)
    stderr: str = field(default="", repr=False)

    def brief(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("stdout")
        d["stderr"] = self.stderr[-2000:]
        return d


def run_measured(
    label: str,
    argv: Sequence[str],
    *,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 900.0,
) -> Measured:
    """Run argv to completion; wall time, and rusage from wait4 (tree CPU, peak RSS)."""
    started = time.monotonic()
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
    )
    out: list[bytes] = []
    err: list[bytes] = []

    def pump(stream: Any, sink: list[bytes]) -> None:
        sink.append(stream.read())

    def feed() -> None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(stdin or b"")
            proc.stdin.close()
        except OSError:
            pass

    threads = [
        threading.Thread(target=pump, args=(proc.stdout, out), daemon=True),
        threading.Thread(target=pump, args=(proc.stderr, err), daemon=True),
    ]
    if stdin is not None:
        threads.append(threading.Thread(target=feed, daemon=True))
    for t in threads:
        t.start()
    killer = threading.Timer(timeout, proc.kill)
    killer.start()
    try:
        _pid, status, usage = os.wait4(proc.pid, 0)
    finally:
        killer.cancel()
    wall = time.monotonic() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    for t in threads:
        t.join(10)
    return Measured(
        label=label,
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        maxrss_mb=usage.ru_maxrss / 1024,
        exit_status=proc.returncode,
        stdout=b"".join(out).decode("utf-8", "replace"),
        stderr=b"".join(err).decode("utf-8", "replace"),
    )


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


# -- output ---------------------------------------------------------------------------


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain Markdown table (also readable on a terminal)."""

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3f}" if abs(v) < 100 else f"{v:.1f}"
        return str(v)

    body = [[cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(headers)]
    lines = [
        "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |",
        "|" + "|".join("-" * (w + 2) for w in widths) + "|",
    ]
    lines += [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in body
    ]
    return "\n".join(lines)


def save(name: str, data: dict[str, Any]) -> Path:
    """Write bench/results/<name>-<UTC time>.json and <name>-latest.json."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    text = json.dumps(data, indent=2, default=str)
    path = RESULTS / f"{name}-{stamp}.json"
    path.write_text(text)
    (RESULTS / f"{name}-latest.json").write_text(text)
    return path


def verdict(value: float, target: float, *, lower_is_better: bool = True) -> str:
    ok = value <= target if lower_is_better else value >= target
    return "met" if ok else "MISSED"


# -- a canary of the bench's own --------------------------------------------------------


async def local_canary(probe: str, run_id: str) -> Any:
    """A netns canary on this machine for run `run_id`, as `harness run` starts one (a
    nonce and high port of its own): for the benches that time the probe against it
    directly. Stop it with `harness.hostside.canary.stop_canary`."""
    import secrets

    from harness.hostside.canary import start_canary
    from harness.matrix.models import Canary
    from harness.transport import LocalTransport

    return await start_canary(
        LocalTransport(),
        probe=probe,
        workdir="/tmp",
        canary=Canary(),
        run_id=run_id,
        host_index=0,
        nonce=secrets.token_hex(8),
        high_port=30000 + secrets.randbelow(30000),
    )
