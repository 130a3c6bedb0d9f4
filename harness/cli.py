"""The `harness` command: verbs, their flags, and the exit-code contract.

Exit codes: 0 every verdict passed or was skipped; 1 a regression or unexpected
verdict; 2 bad input (matrix, names, flags); 3 no mismatch but something was
inconclusive (the lab is broken, not the sandbox); 130/143 interrupted by
SIGINT/SIGTERM (what finished is kept); 70 an internal error (a bug).
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

import anyio
import click
from rich.console import Console

from harness._version import __version__
from harness.errors import HarnessError, ResultsError, SpecError, UsageError
from harness.probe import build_probe
from harness.report.console import LiveProgress, print_report
from harness.results import ResultsStore, default_folder
from harness.runner import Plan, Runner, RunOutcome, make_plan
from harness.scenarios import SCENARIOS
from harness.spec import Matrix, load_matrix

# Raised when a group is invoked bare; its message is the help text.
NoArgsIsHelp: type[click.UsageError] = getattr(
    click.exceptions, "NoArgsIsHelpError", click.exceptions.UsageError
)
EXIT_OK, EXIT_MISMATCH, EXIT_INPUT, EXIT_INCONCLUSIVE = 0, 1, 2, 3
EXIT_INTERNAL = 70  # EX_SOFTWARE: distinct from every verdict code
EXIT_SIGNAL = {signal.SIGINT: 130, signal.SIGTERM: 143}

err_console = Console(stderr=True, highlight=False)


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


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="harness")
@click.option("-v", "--verbose", is_flag=True, help="Log what harness does (to stderr).")
def cli(verbose: bool) -> None:
    """Prove, by attempting violations, which security properties each sandbox
    runtime really enforces.

    A matrix (TOML) names hosts and runtimes; `harness run` starts each sandbox
    once per (host, runtime) cell, runs the static probe inside it, and judges
    what it saw against the expectations in the matrix.
    """
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="harness: %(message)s",
        stream=sys.stderr,
    )


@cli.command()
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


@cli.command()
@click.argument("matrix", type=click.Path(path_type=Path, dir_okay=False))
def validate(matrix: Path) -> None:
    """Check MATRIX and the inventories it names, without running anything."""
    loaded = load_matrix(matrix)
    cells = len(loaded.hosts) * len(loaded.runtimes)
    click.echo(
        f"{matrix}: ok: {len(loaded.hosts)} hosts x {len(loaded.runtimes)} runtimes"
        f" = {cells} cells; scenarios: {', '.join(loaded.scenarios)}"
    )


@cli.command("scenarios")
def list_scenarios() -> None:
    """List the scenarios and the facts each measures."""
    for scenario in SCENARIOS.values():
        click.echo(f"{scenario.name}: {scenario.summary}")
        for fact, doc in scenario.facts.items():
            click.echo(f"  {fact:<26} {doc}")


def _fail(code: int, message: str) -> None:
    err_console.print(f"harness: error: {message}", markup=False, soft_wrap=True)
    raise SystemExit(code)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: map every expected failure to one line and an exit code."""
    try:
        cli.main(args=list(argv) if argv is not None else None, standalone_mode=False)
    except NoArgsIsHelp as exc:
        click.echo(exc.format_message(), err=True)
        raise SystemExit(EXIT_INPUT) from None
    except click.UsageError as exc:
        hint = (
            f" (see 'harness {exc.ctx.command.name} --help')"
            if exc.ctx and exc.ctx.command.name != "cli"
            else ""
        )
        _fail(EXIT_INPUT, f"{exc.format_message()}{hint}")
    except click.Abort:
        _fail(EXIT_SIGNAL[signal.SIGINT], "interrupted")
    except (SpecError, UsageError) as exc:
        _fail(EXIT_INPUT, str(exc))
    except ResultsError as exc:
        _fail(EXIT_INPUT, str(exc))
    except HarnessError as exc:
        _fail(EXIT_INCONCLUSIVE, str(exc))
    except click.exceptions.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except Exception:  # a bug: keep the traceback, but never pass as a verdict code
        traceback.print_exc()
        _fail(EXIT_INTERNAL, "internal error (a bug in harness; the traceback is above)")
