"""Reports on a large results folder: seconds and peak RSS per format.

A synthetic folder of N hosts (default 2,000) is made from one real run's
records: each host gets the template host's cells and verdicts under its own name
(and its own manifest entry), so the records are exactly what harness writes, only
many. Then `harness report --format F -o FILE` runs once per format, in its own
process, measured alone (wall time, and peak RSS from wait4).

Run: python bench/reports.py TEMPLATE_RUN [--hosts 2000] [--formats markdown,json,...]
(TEMPLATE_RUN: any results folder, e.g. from
`harness run matrices/local.toml --runtime host --runtime runsc --runtime bwrap`).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ["markdown", "json", "junit", "html"]


def synthesize(template: Path, folder: Path, hosts: int) -> int:
    """`hosts` copies of the template's records, host by host; returns cells.jsonl's size."""
    manifest = json.loads((template / "manifest.json").read_text())
    cells = [json.loads(line) for line in (template / "cells.jsonl").read_text().splitlines()]
    verdicts = [json.loads(line) for line in (template / "verdicts.jsonl").read_text().splitlines()]
    (source,) = {c["host"] for c in cells}
    entry = (manifest.get("hosts") or {}).get(source, {})
    names = [f"host-{i:05d}" for i in range(hosts)]
    manifest["hosts"] = {name: entry for name in names}
    manifest["cells_planned"] = len(cells) * hosts
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))
    with open(folder / "cells.jsonl", "w") as c_out, open(folder / "verdicts.jsonl", "w") as v_out:
        for name in names:
            for cell in cells:
                c_out.write(json.dumps({**cell, "host": name}, separators=(",", ":")) + "\n")
            for row in verdicts:
                v_out.write(json.dumps({**row, "host": name}, separators=(",", ":")) + "\n")
    return (folder / "cells.jsonl").stat().st_size


def measure(argv: list[str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MB) and exit status of one command, alone."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    _pid, status, usage = os.wait4(proc.pid, 0)
    return time.monotonic() - started, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("template", type=Path, nargs="?", help="a results folder (else: --smoke)")
    parser.add_argument("--hosts", type=int, default=2000)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--smoke", action="store_true", help="3 hosts: does it run?")
    args = parser.parse_args()
    if args.smoke:
        args.hosts = 3
    elif args.template is None:
        parser.error("a template results folder is needed (or --smoke)")
    with tempfile.TemporaryDirectory(prefix="bench-reports-") as tmp:
        folder = Path(tmp) / "run"
        if args.template is None:  # smoke: the host runtime alone, on this machine
            args.template = Path(tmp) / "template"
            run = [sys.executable, "-m", "harness", "run", "matrices/local.toml", "--runtime"]
            out = str(args.template)
            subprocess.run([*run, "host", "--out", out], cwd=ROOT, check=False, capture_output=True)
        size = synthesize(args.template, folder, args.hosts)
        print(f"{args.hosts} hosts, cells.jsonl {size / 1e6:.0f} MB")
        print("| format | seconds | peak RSS | exit |\n|---|---|---|---|")
        for fmt in args.formats.split(","):
            out = Path(tmp) / f"report.{fmt}"
            argv = [sys.executable, "-m", "harness", "report", str(folder), "--format", fmt]
            wall, rss, code = measure([*argv, "-o", str(out)])
            print(f"| {fmt} | {wall:.1f} s | {rss:.0f} MB | {code} |", flush=True)
            if code != 0:  # a report that failed has no time worth quoting
                raise SystemExit(f"harness report --format {fmt} exited {code}")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` ends it as Ctrl-C does
    main()
