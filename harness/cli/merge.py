"""`harness merge`: shard folders -> one results folder."""

from __future__ import annotations

from pathlib import Path

import click

from harness.results.merge import merge_runs, missing_shard_reason
from harness.results.store.read import read_cells


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

    Exits 0 once merged (2 on bad input), even with a shard missing: a warning
    says which, and the merged manifest's exit code (at least 3 then) records it.
    The verdict is carried by each shard's `harness run` exit code.
    """
    merged = merge_runs(list(folders), out)
    click.echo(
        f"merged {len(folders)} folders into {out} (verdicts exit code {merged['exit_code']})"
    )
    cells = [cell for _line, cell in read_cells(out)]
    for shard in merged.get("missing_shards") or []:
        why = missing_shard_reason(shard)
        lost = sum(1 for c in cells if (c.reason or "").startswith(why))
        click.echo(
            f"warning: shard {shard} is missing: its {lost} cell(s) are recorded cancelled"
            f" and their verdicts inconclusive (merged exit code {merged['exit_code']})"
        )
