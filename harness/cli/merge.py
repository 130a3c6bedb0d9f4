"""`harness merge`: shard folders -> one results folder."""

from __future__ import annotations

from pathlib import Path

import click

from harness.results.merge import merge_runs


@click.command()
@click.argument(
    "folders",
    nargs=-1,
    required=True,
    type=click.Path(path_type=Path),
)
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="The merged results folder (must not hold a run).",
)
def merge(folders: tuple[Path, ...], out: Path) -> None:
    """Combine the results FOLDERS of `harness run --shard I/N` into one run.

    Exits 0 once merged (2 on bad input). The verdict is carried by each shard's
    `harness run` exit code; the merged manifest records the combined one.
    """
    merged = merge_runs(list(folders), out)
    click.echo(
        f"merged {len(folders)} folders into {out} (verdicts exit code {merged['exit_code']})"
    )
