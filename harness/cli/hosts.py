"""`harness hosts MATRIX`: one line per host, before a first fleet run."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import click
from rich.console import Console
from rich.text import Text

from harness.cli.app import json_or_human
from harness.errors import UsageError
from harness.exitcodes import ExitCode
from harness.hostcheck import HostCheck, check_hosts
from harness.matrix import load_matrix
from harness.probe import Probes
from harness.runtimes import make_runtime
from harness.text import visible


def _line(found: HostCheck) -> Text:
    """Everything after the mark came from the inventory or the host: shown visibly."""
    mark, style = ("✓", "green") if found.usable else ("?", "yellow")
    head = Text.assemble(
        (f"{mark} ", style), (visible(found.name), "bold"), f" ({visible(found.address)})"
    )
    if found.error is not None:
        return Text.assemble(head, ": ", (f"unreachable: {visible(found.error)}", "yellow"))
    parts = [
        f"key {found.host_key}" if found.host_key else "",
        f"{found.kernel} {found.machine}",
        "; ".join(f"{name}: {what}" for name, what in found.runtimes.items()),
        f"canary {found.canary}",
    ]
    return Text.assemble(head, ": ", visible(" | ".join(p for p in parts if p)))


@click.command("hosts")
@click.argument("matrix", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--host", "hosts", multiple=True, metavar="NAME", help="Only this host (repeatable).")
@json_or_human("one object per host on stdout, for scripts.")
def hosts(matrix: Path, hosts: tuple[str, ...], fmt: str) -> None:
    """Reach each host of MATRIX once and say whether a run could use it.

    One line per host: reachability and its host key, kernel and architecture, each
    runtime's version (or why it is unusable: a `command` runtime must start the
    probe from the work folder, as whichever user it runs it), and whether the netns
    canary can be made there (root, `ip netns`). Two entries on one machine with one
    work folder are refused. Use it before a first fleet run.

    Exit 0 when every host and runtime is usable, 3 when one is not (as `run`
    would be inconclusive there), 2 on bad input.
    """
    loaded = load_matrix(matrix)
    known = [h.name for h in loaded.hosts]
    for name in hosts:
        if name not in known:
            raise UsageError(f"--host: unknown host {name!r} (known: {', '.join(known)})")
    chosen = [h for h in loaded.hosts if not hosts or h.name in hosts]
    runtimes = [make_runtime(name, spec) for name, spec in loaded.runtimes.items()]
    probes = Probes()
    found = anyio.run(lambda: check_hosts(chosen, runtimes, probes), backend="asyncio")
    if fmt == "json":
        click.echo(json.dumps([f.to_json() for f in found], indent=2))
    else:
        console = Console(highlight=False, soft_wrap=True)
        for item in found:
            console.print(_line(item))
        bad = sum(not f.usable for f in found)
        console.print(f"{len(found) - bad}/{len(found)} hosts usable")
    raise SystemExit(ExitCode.OK if all(f.usable for f in found) else ExitCode.INCONCLUSIVE)
