"""`harness bisect`: the first runsc build where a verdict changes."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import click
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TransferSpeedColumn,
)

from harness.bisect.origin import regression_in
from harness.bisect.report import bisection_exit_code, render_text, to_json
from harness.bisect.session import BisectSession, choose, find_target
from harness.bisect.steps import BisectReport, StepRecord
from harness.cache import RUNSC_BUILDS, cache_dir
from harness.cli.app import err_console, json_or_human, with_index
from harness.cli.signals import run_until_signal
from harness.errors import UsageError
from harness.exitcodes import for_signal
from harness.matrix import load_matrix
from harness.probe import build_probe
from harness.releases.index import DEFAULT_INDEX, open_index
from harness.releases.versions import FORMS, Version, check_pair, parse_version
from harness.results import default_folder
from harness.text import rich_text, visible


class StepLines:
    """One line per step on stderr: a log of the search, terminal or not."""

    def step_started(self, number: int, version: Version) -> None:
        err_console.print(
            rich_text(f"step {number}: {version} ..."), highlight=False, soft_wrap=True
        )

    def step_finished(self, step: StepRecord) -> None:
        how = ""
        if step.candidate is not None:
            how = " [downloaded]" if step.candidate.downloaded else " [cached]"
        why = f": {step.reason}" if step.reason else ""
        err_console.print(
            rich_text(
                f"step {step.number}: {step.version} {step.outcome}{why}{how} ({step.elapsed:.1f}s)"
            ),
            highlight=False,
            soft_wrap=True,
        )


async def _bisect(session: BisectSession) -> BisectReport:
    async with session.index:
        await session.run()
    return session.report


@click.command("bisect")
@click.argument("matrix", type=click.Path(path_type=Path, dir_okay=False), required=False)
@click.option(
    "--runtime",
    metavar="NAME",
    help="The runsc (or oci) runtime entry; each step replaces its binary.",
)
@click.option(
    "--from",
    "from_run",
    type=click.Path(path_type=Path, file_okay=False),
    metavar="RESULTS",
    help="Take the runtime, the property (or fact), the host and the matrix from the"
    " regression in this results folder.",
)
@click.option(
    "--script",
    metavar="CMD",
    help="Judge each step with CMD (sh -c), as git bisect run does: exit 0 good, 125"
    " skip, 1-127 bad. It runs in the step's results folder after the step's run, with"
    " HARNESS_VERSION, HARNESS_RUNSC (on the host), HARNESS_RUNSC_LOCAL, HARNESS_HOST"
    " and HARNESS_RESULTS set.",
)
@click.option("--good", required=True, metavar="VERSION", help=f"A good build: {FORMS}.")
@click.option("--bad", required=True, metavar="VERSION", help="A bad build, newer than --good.")
@click.option(
    "--property", "prop", metavar="P", help="Judge this property (e.g. egress_confinement)."
)
@click.option("--fact", metavar="F", help="Or judge this fact (it needs an expectation).")
@click.option(
    "--host", "host_name", metavar="H", help="The host to run on (default: the only one)."
)
@click.option(
    "--index",
    "index_at",
    metavar="URL|DIR",
    help="Where builds are listed: a bucket URL or a local folder laid out like it"
    " (releases/<channel>/<version>/<arch>/). Overrides `index` in [settings];"
    f" default: {DEFAULT_INDEX}.",
)
@click.option(
    "--cache",
    type=click.Path(path_type=Path, file_okay=False),
    metavar="DIR",
    help="Where verified builds are kept (default: ~/.cache/harness/runsc).",
)
@click.option(
    "--repeat",
    type=click.IntRange(1, 100),
    metavar="N",
    default=1,
    show_default=True,
    help="Run each step N times; disagreeing runs make the step flaky.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    metavar="DIR",
    help="Results folder (default: results/<UTC time>-bisect-<runtime>).",
)
@json_or_human("print the answer as one JSON object on stdout.", old=("text",))
def bisect(
    matrix: Path | None,
    runtime: str | None,
    from_run: Path | None,
    script: str | None,
    good: str,
    bad: str,
    prop: str | None,
    fact: str | None,
    host_name: str | None,
    index_at: str | None,
    cache: Path | None,
    repeat: int,
    out: Path | None,
    fmt: str,
) -> None:
    """Find the first runsc build between --good and --bad where the verdict of
    one property (or fact) changes, by binary search over gVisor's builds.

    Each step downloads a build (once, sha512-verified, cached), installs it on
    the host by sha256, and runs the selected scenario in one cell. A step that
    cannot be judged is skipped and the search goes around it.

    Exit 0 a boundary was found, 3 skips or flakes leave it ambiguous (the
    candidate range is printed), 2 bad input.
    """
    good_version = parse_version(good, flag="--good")
    bad_version = parse_version(bad, flag="--bad")
    check_pair(good_version, bad_version)
    if from_run is not None:
        picked = regression_in(from_run, runtime=runtime, prop=prop, fact=fact, host=host_name)
        matrix = matrix or picked.matrix
        runtime, host_name = picked.runtime, picked.host
        prop, fact = (picked.subject, None) if picked.is_property else (None, picked.subject)
        err_console.print(
            f"bisect: {picked.subject} on {picked.host}/{picked.runtime}"
            f" ({picked.verdict} in {from_run})",
            markup=False,
            highlight=False,
        )
    if matrix is None or runtime is None:
        raise UsageError("give MATRIX and --runtime NAME, or --from RESULTS")
    target = find_target(prop=prop, fact=fact)
    loaded = load_matrix(matrix)
    if index_at is not None:
        loaded = with_index(loaded, index_at)
    host, _ = choose(loaded, runtime=runtime, host=host_name, target=target)
    index = open_index(loaded.settings.index)
    probe = build_probe()
    folder = out or default_folder(f"bisect-{runtime}")
    progress = (
        Progress(
            TextColumn("{task.description:<32}"),
            BarColumn(bar_width=30),
            DownloadColumn(),
            TransferSpeedColumn(),
            console=err_console,
            transient=True,
        )
        if err_console.is_terminal
        else None
    )
    session = BisectSession(
        matrix=loaded,
        host=host,
        runtime=runtime,
        target=target,
        good=good_version,
        bad=bad_version,
        index=index,
        cache=cache or cache_dir(RUNSC_BUILDS),
        folder=folder,
        probe=probe,
        repeat=repeat,
        progress=progress,
        observer=StepLines(),
        script=script,
    )
    if progress is not None:
        with progress:
            _, signum = run_until_signal(lambda: _bisect(session))
    else:
        _, signum = run_until_signal(lambda: _bisect(session))
    report = session.report  # what was learned, even when interrupted
    if signum is not None:
        name = signal.Signals(signum).name
        err_console.print(
            rich_text(f"harness: interrupted by {name}; steps so far kept in {folder}")
        )
        raise SystemExit(for_signal(signum))
    if fmt == "json":
        click.echo(json.dumps(to_json(report), indent=2, default=str))
    else:
        click.echo(visible(render_text(report), lines=True))  # host reasons, versions
    raise SystemExit(bisection_exit_code(report))
