"""`harness run`, `harness validate`, `harness scenarios`."""

from __future__ import annotations

import json
import signal
from collections.abc import Sequence
from pathlib import Path

import anyio
import click
from rich.console import Console

from harness.cli.app import EXIT_SIGNAL, err_console
from harness.errors import UsageError
from harness.plan import Plan, make_plan
from harness.probe import build_probe
from harness.report.console import LiveProgress, print_report
from harness.results import ResultsStore, default_folder
from harness.runner import Runner, RunOutcome
from harness.scenarios import SCENARIOS
from harness.spec import Matrix, load_matrix


def _check_names(kind: str, asked: Sequence[str], known: Sequence[str]) -> None:
    for name in asked:
        if name not in known:
            raise UsageError(
                f"--{kind}: unknown {kind} {name!r} (known: {', '.join(known) or 'none'})"
            )


def _plan(
    matrix: Matrix, hosts: Sequence[str], runtimes: Sequence[str], scenarios: Sequence[str]
) -> Plan:
    _check_names("host", hosts, [h.name for h in matrix.hosts])
    _check_names("runtime", runtimes, list(matrix.runtimes))
    _check_names("scenario", scenarios, list(matrix.scenarios))
    return make_plan(matrix, hosts=hosts, runtimes=runtimes, scenarios=scenarios)


async def _run_until_signal(runner: Runner) -> tuple[RunOutcome | None, int | None]:
    """Run, but let SIGINT or SIGTERM cancel it cleanly (cleanup runs shielded)."""
    caught: list[int] = []
    outcome: RunOutcome | None = None
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    caught.append(signum)
                    tg.cancel_scope.cancel()
                    return

        async def main() -> None:
            nonlocal outcome
            outcome = await runner.run()
            tg.cancel_scope.cancel()

        tg.start_soon(watch)
        tg.start_soon(main)
    return outcome, (caught[0] if caught else None)


@click.command()
@click.argument("matrix", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    help="Results folder (default: results/<UTC time>-<matrix name>). Must not already hold a run.",
)
@click.option("--host", "hosts", multiple=True, metavar="NAME", help="Only this host (repeatable).")
@click.option(
    "--runtime", "runtimes", multiple=True, metavar="NAME", help="Only this runtime (repeatable)."
)
@click.option(
    "--scenario",
    "scenarios",
    multiple=True,
    metavar="NAME",
    help="Only this scenario (repeatable).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="json: print the verdicts as a JSON array on stdout, for scripts.",
)
@click.option(
    "--no-progress",
    is_flag=True,
    help="No live progress on stderr (default when stderr is not a terminal).",
)
def run(
    matrix: Path,
    out: Path | None,
    hosts: tuple[str, ...],
    runtimes: tuple[str, ...],
    scenarios: tuple[str, ...],
    fmt: str,
    no_progress: bool,
) -> None:
    """Run MATRIX: every (host, runtime) cell, every scenario, then judge.

    Exit 0 all verdicts pass, 1 a mismatch, 2 bad input, 3 inconclusive only.
    """
    loaded = load_matrix(matrix)
    plan = _plan(loaded, hosts, runtimes, scenarios)
    probe = build_probe()
    folder = out or default_folder(loaded.name)
    store = ResultsStore(folder)
    store.open()
    per_host: dict[str, int] = {}
    for cell in plan.cells:
        per_host[cell.host.name] = per_host.get(cell.host.name, 0) + 1
    show_progress = not no_progress and err_console.is_terminal
    live = LiveProgress(err_console, per_host) if show_progress else None
    runner = Runner(plan, probe=probe, store=store, observer=live)
    try:
        if live:
            with live:
                outcome, signum = anyio.run(_run_until_signal, runner, backend="asyncio")
        else:
            outcome, signum = anyio.run(_run_until_signal, runner, backend="asyncio")
    finally:
        store.close()
    result = outcome or runner.outcome
    if signum is not None:
        name = signal.Signals(signum).name
        err_console.print(f"harness: interrupted by {name}; finished cells kept in {folder}")
        raise SystemExit(EXIT_SIGNAL.get(signal.Signals(signum), 130))
    code = result.exit_code
    if fmt == "json":
        click.echo(json.dumps([v.to_json() for v in result.verdicts], indent=2, default=str))
    else:
        out_console = Console(highlight=False)
        if not out_console.is_terminal:
            out_console.width = max(out_console.width, 160)  # logs and pipes: no wrap at 80
        print_report(
            out_console,
            result.verdicts,
            runtimes=list(loaded.runtimes),
            folder=str(folder),
            exit_code=code,
        )
    raise SystemExit(code)


@click.command()
@click.argument("matrix", type=click.Path(path_type=Path, dir_okay=False))
def validate(matrix: Path) -> None:
    """Check MATRIX and the inventories it names, without running anything."""
    loaded = load_matrix(matrix)
    cells = len(loaded.hosts) * len(loaded.runtimes)
    click.echo(
        f"{matrix}: ok: {len(loaded.hosts)} hosts x {len(loaded.runtimes)} runtimes"
        f" = {cells} cells; scenarios: {', '.join(loaded.scenarios)}"
    )


@click.command("scenarios")
def list_scenarios() -> None:
    """List the scenarios and the facts each measures."""
    for scenario in SCENARIOS.values():
        click.echo(f"{scenario.name}: {scenario.summary}")
        for fact, doc in scenario.facts.items():
            click.echo(f"  {fact:<26} {doc}")
