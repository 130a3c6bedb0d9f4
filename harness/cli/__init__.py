"""The `harness` command line. Only this package imports the CLI library."""

from harness.cli.app import cli, main
from harness.cli.bisect import bisect
from harness.cli.evidence import evidence
from harness.cli.merge import merge
from harness.cli.report import diff, report
from harness.cli.run import list_scenarios, run, validate

for command in (run, validate, list_scenarios, evidence, report, diff, bisect, merge):
    cli.add_command(command)

__all__ = ["cli", "main"]
