"""`harness run`, `harness validate`, `harness scenarios`."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import click

from harness.cli.app import err_console, json_or_human, out_console, with_index
from harness.cli.signals import run_until_signal
from harness.errors import UsageError
from harness.exitcodes import ExitCode, for_signal
from harness.judge.verdicts import exit_code
from harness.matrix import Matrix, load_matrix
from harness.plan import Plan, make_plan, without
from harness.plan import shard as shard_plan
from harness.probe import build_probe
from harness.report.console import LiveProgress, print_report
from harness.report.render import FORMATS, write_reports
from harness.results import ResultsStore, VerdictRecord, default_folder
from harness.results.resume import read_resumable
from harness.results.store.layout import MANIFEST
from harness.results.store.manifest import Manifest, Selection
from harness.runner import Runner
from harness.scenarios import listed
from harness.text import rich_text


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


@click.command()
@click.argument("matrix", type=click.Path(path_type=Path, dir_okay=False), required=False)
@click.option(
    "--resume",
    type=click.Path(path_type=Path),
    metavar="DIRECTORY",
    help="Finish the interrupted run in this results folder: run only the cells that have "
    "no final record, with the matrix and selection it was started with.",
)
@click.option(
    "--reruns",
    type=click.IntRange(0, 10),
    default=0,
    show_default=True,
    help="Run a cell with a regression or unexpected verdict up to N more times; "
    "verdicts that disagree are reported as flaky (exit 1), never silently passed.",
)
@click.option(
    "--shard",
    metavar="I/N",
    help="Run only shard I of N (1-based): cells split deterministically and evenly. "
    "Combine the shards' folders with `harness merge`.",
)
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
@json_or_human("print the verdicts as a JSON array on stdout, for scripts.")
@click.option(
    "--no-progress",
    is_flag=True,
    help="No live progress on stderr (default when stderr is not a terminal).",
)
@click.option(
    "--index",
    metavar="URL|DIR",
    help="Where runsc runtimes with `release` find their builds: a bucket or mirror URL, "
    "or a folder laid out like it. Overrides `index` in [settings]; default: gVisor's bucket.",
)
@click.option(
    "--report",
    "reports",
    multiple=True,
    type=click.Choice(list(FORMATS)),
    help="Also write report.<ext> in this format into the results folder (repeatable).",
)
def run(
    matrix: Path,
    out: Path | None,
    hosts: tuple[str, ...],
    runtimes: tuple[str, ...],
    scenarios: tuple[str, ...],
    fmt: str,
    no_progress: bool,
    reports: tuple[str, ...],
    resume: Path | None,
    shard: str | None,
    reruns: int,
    index: str | None,
) -> None:
    """Run MATRIX: every (host, runtime) cell, every scenario, then judge.

    Exit 0 all verdicts pass, 1 a mismatch, 2 bad input, 3 inconclusive only.
    """
    prior: list[VerdictRecord] = []
    previous: Manifest | None = None
    if resume is not None:
        if matrix or out or hosts or runtimes or scenarios or shard or index:
            raise UsageError("--resume takes the matrix and selection from the results folder")
        previous, done, prior = read_resumable(resume)
        recorded = previous.matrix
        if recorded is None or not recorded.path or not recorded.sha256:
            raise UsageError(f"{resume}/{MANIFEST}: cannot resume: matrix.path or sha256 missing")
        loaded = load_matrix(Path(recorded.path))
        if loaded.sha256 != recorded.sha256:
            raise UsageError(f"{loaded.path}: changed since the run in {resume} started")
        asked = previous.selection or Selection()
        hosts, runtimes, scenarios = (
            tuple(names or ()) for names in (asked.hosts, asked.runtimes, asked.scenarios)
        )
        shard, index = asked.shard, asked.index
    elif matrix is None:
        raise UsageError("MATRIX is required (or --resume DIR)")
    else:
        loaded = load_matrix(matrix)
    if index is not None:
        loaded = with_index(loaded, index)
    plan = _plan(loaded, hosts, runtimes, scenarios)
    if shard:
        plan = shard_plan(plan, *_parse_shard(shard))
    if resume is not None:
        plan = without(plan, done)
    probe = build_probe()
    folder = resume or out or default_folder(loaded.name)
    store = ResultsStore(folder)
    store.open(resume=resume is not None)
    per_host: dict[str, int] = {}
    for cell in plan.cells:
        per_host[cell.host.name] = per_host.get(cell.host.name, 0) + 1
    show_progress = not no_progress and err_console.is_terminal
    live = LiveProgress(err_console, per_host) if show_progress else None
    selection = {
        "hosts": list(hosts),
        "runtimes": list(runtimes),
        "scenarios": list(scenarios),
        "shard": shard,
        "index": index,
    }
    runner = Runner(
        plan,
        probe=probe,
        store=store,
        observer=live,
        selection=selection,
        resumed_from=previous.to_json() if previous else None,
        prior=prior,
        reruns=reruns,
        releases=_resumed_releases(loaded, previous),
        keep_checks=fmt == "json",  # the JSON array is each verdict whole
    )
    try:
        if live:
            with live:
                outcome, signum = run_until_signal(runner.run)
        else:
            outcome, signum = run_until_signal(runner.run)
    finally:
        store.close()
    if reports:
        write_reports(folder, reports)
    result = outcome or runner.outcome
    if signum is not None:
        name = signal.Signals(signum).name
        err_console.print(
            rich_text(f"harness: interrupted by {name}; finished cells kept in {folder}")
        )
        raise SystemExit(for_signal(signum))
    verdicts = [*prior, *result.verdicts]
    code = exit_code(verdicts)
    if code == ExitCode.OK and result.store_error:
        code = ExitCode.INCONCLUSIVE
    if result.store_error:
        err_console.print(
            rich_text(f"harness: error: {result.store_error}; verdicts below were not all saved")
        )
    if fmt == "json":
        echo_json_array(v.to_json() for v in verdicts)
    else:
        print_report(
            out_console(),
            verdicts,
            runtimes=list(loaded.runtimes),
            folder=str(folder),
            exit_code=code,
            after_run=True,
        )
    raise SystemExit(code)


def _resumed_releases(matrix: Matrix, previous: Manifest | None) -> Any:
    """A resumed run keeps the builds its first part resolved ("latest" included)."""
    resolved = ((previous.releases if previous else None) or {}).get("resolved") or {}
    pins = {
        k: v["version"] for k, v in resolved.items() if isinstance(v, dict) and v.get("version")
    }
    if not pins:
        return None
    from harness.releases.builds import ReleaseBuilds

    return ReleaseBuilds(matrix.settings.index, pinned=pins)


def echo_json_array(items: Iterable[Any]) -> None:
    """Print what `json.dumps(list(items), indent=2)` would, one item at a time: a
    fleet's verdicts as one list and one string cost more memory than the run."""
    first = True
    for item in items:
        text = json.dumps(item, indent=2, default=str).replace("\n", "\n  ")
        click.echo(("[\n  " if first else ",\n  ") + text, nl=False)
        first = False
    click.echo("[]" if first else "\n]")


def _parse_shard(text: str) -> tuple[int, int]:
    try:
        index, total = (int(x) for x in text.split("/"))
    except ValueError:
        raise UsageError(f"--shard: expected I/N such as 2/4, got {text!r}") from None
    if not 1 <= index <= total:
        raise UsageError(f"--shard: I must be between 1 and N, got {text!r}")
    return index, total


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
    for name, spec in loaded.runtimes.items():
        if spec.policy is None:
            continue
        policy = spec.policy
        click.echo(
            f"runtimes.{name}.policy: {policy.source} (sha256 {policy.sha256[:16]}):"
            f" {len(policy.readable)} readable, {len(policy.writable)} writable paths"
        )
        for note in policy.notes():
            click.echo(f"  note: {note}")


@click.command("scenarios")
@click.option(
    "--checks",
    "show_checks",
    is_flag=True,
    help="Also list every check: its id, the rule that judges it, its control, how its"
    " arrivals are matched, and what it attempts (docs/checks.md has the same).",
)
def list_scenarios(show_checks: bool) -> None:
    """List the scenarios and the facts each measures."""
    from harness.scenarios.listing import rows

    for scenario in listed():
        click.echo(f"{scenario.name}: {scenario.summary}")
        for fact, doc in scenario.facts.items():
            click.echo(f"  {fact:<26} {doc}")
        if not show_checks:
            continue
        for r in rows(scenario):
            inside = " (inside control)" if r.kind == "inside control" else ""
            click.echo(
                f"  {r.id:<22} {r.rule:<8} {r.transport:<3} control: {r.control}; {r.doc}{inside}"
            )
