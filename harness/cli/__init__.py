"""The `harness` command line. Only this package imports the CLI library; each verb's
module is imported when that verb is used (`app.VERBS`)."""

from harness.cli.app import cli, main

__all__ = ["cli", "main"]
