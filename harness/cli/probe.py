"""`harness probe build`: the static probe, for running it by hand."""

from __future__ import annotations

import click

from harness.probe.build import ARCHES, build_probe, native_arch


@click.group()
def probe() -> None:
    """The static probe that harness runs inside each sandbox."""


@probe.command()
@click.option(
    "--arch",
    type=click.Choice([*ARCHES, "amd64", "arm64"]),
    help=f"Build for this architecture (default: this machine's, {native_arch()}).",
)
def build(arch: str | None) -> None:
    """Build (or find in the cache) the static probe and print its path.

    The binary needs nothing else on the target: copy it anywhere and run
    `probe run mechanisms`, for example, to see its JSON lines.
    """
    built = build_probe(arch=arch)
    click.echo(str(built.path))
