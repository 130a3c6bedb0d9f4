"""The `harness` group, the exit-code contract, and the mapping of errors to codes.

Verbs live in the modules of this package and are registered, by module path, in
`VERBS` below, which imports each one only when it is used; verbs never import one
another, and only this package imports the CLI library.

Exit codes: 0 every verdict passed or was skipped; 1 a regression or unexpected
verdict; 2 bad input (matrix, names, flags); 3 no mismatch but something was
inconclusive (the lab is broken, not the sandbox); 130/143 interrupted by
SIGINT/SIGTERM (what finished is kept); 70 an internal error (a bug).
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console

from harness._version import __version__
from harness.errors import HarnessError, ResultsError, SpecError, UsageError
from harness.exitcodes import ExitCode
from harness.text import redact_urls, rich_text, visible

if TYPE_CHECKING:
    from harness.matrix import Matrix

# Raised when a group is invoked bare; its message is the help text.
NoArgsIsHelp: type[click.UsageError] = getattr(
    click.exceptions, "NoArgsIsHelpError", click.exceptions.UsageError
)

F = TypeVar("F", bound=Callable[..., Any])

err_console = Console(stderr=True, highlight=False)


HUMAN = "table"  # the human view's name in every verb's --format
PIPE_WIDTH = 160  # a log or a pipe, with no COLUMNS: wide, so a table need not wrap at 80


def out_console() -> Console:
    """stdout for a verb's table: the terminal's width, or $COLUMNS when set (rich
    reads it), or `PIPE_WIDTH` for a log or a pipe that says nothing."""
    console = Console(highlight=False)
    if not console.is_terminal and not os.environ.get("COLUMNS", "").isdigit():
        console.width = max(console.width, PIPE_WIDTH)
    return console


class _Choice(click.Choice[str]):
    """A choice that also takes older spellings, unlisted in help and errors, and
    hands the verb the current name."""

    def __init__(self, choices: Sequence[str], *, old: Sequence[str]) -> None:
        super().__init__(choices)
        self.old = tuple(old)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if value in self.old:
            return HUMAN
        return super().convert(value, param, ctx)


def json_or_human(json_help: str, *, old: Sequence[str] = ()) -> Callable[[F], F]:
    """The `--format table|json` option every verb with a human view shares: table
    (the default) is for people, json is for scripts on stdout. `old` names earlier
    spellings of `table` that scripts may still pass (bisect's `text`)."""
    return click.option(
        "--format",
        "fmt",
        type=_Choice([HUMAN, "json"], old=old),
        default=HUMAN,
        show_default=True,
        help=f"json: {json_help}",
    )


class LazyGroup(click.Group):
    """A group whose verbs are imported when used: `harness run` need not import
    the bisect verb, and `harness report` never imports the runner."""

    def __init__(self, *args: Any, lazy: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy  # verb -> "module:attribute"

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module, _, attribute = self.lazy[cmd_name].partition(":")
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return super().get_command(ctx, cmd_name)


VERBS = {
    "run": "harness.cli.run:run",
    "validate": "harness.cli.run:validate",
    "scenarios": "harness.cli.run:list_scenarios",
    "evidence": "harness.cli.evidence:evidence",
    "report": "harness.cli.report:report",
    "diff": "harness.cli.report:diff",
    "bisect": "harness.cli.bisect:bisect",
    "merge": "harness.cli.merge:merge",
    "probe": "harness.cli.probe:probe",
    "hosts": "harness.cli.hosts:hosts",
    "clean": "harness.cli.clean:clean",
}


class _VisibleFormatter(logging.Formatter):
    """Log lines carry host names, remote errors and URLs (httpx logs each request):
    control characters shown, a URL's credentials and secret query values redacted."""

    def format(self, record: logging.LogRecord) -> str:
        return redact_urls(visible(super().format(record), lines=True))


@click.group(
    cls=LazyGroup,
    lazy=VERBS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="harness")
@click.option("-v", "--verbose", is_flag=True, help="Log what harness does (to stderr).")
def cli(verbose: bool) -> None:
    """Prove, by attempting violations, which security properties each sandbox
    runtime really enforces.

    A matrix (TOML) names hosts and runtimes; `harness run` starts each sandbox
    once per (host, runtime) cell, runs the static probe inside it, and judges
    what it saw against the expectations in the matrix.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_VisibleFormatter("harness: %(message)s"))
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, handlers=[handler])


def _fail(code: int, message: str) -> None:
    err_console.print(rich_text(f"harness: error: {message}"), soft_wrap=True)
    raise SystemExit(code)


def _tune_gc() -> None:
    """A run makes many small objects that live to its end (records, verdicts) and
    few reference cycles. Freeze what start-up made, so the collector never scans it
    again, and collect less often: about 10% less controller CPU against 1000 hosts
    (bench/scale.py), for about 10 MB more memory."""
    gc.freeze()
    gc.set_threshold(20000, 20, 20)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: map every expected failure to one line and an exit code."""
    if argv is None:  # the program itself, not a caller embedding it
        _tune_gc()
    try:
        cli.main(args=list(argv) if argv is not None else None, standalone_mode=False)
    except NoArgsIsHelp as exc:
        click.echo(exc.format_message(), err=True)
        raise SystemExit(ExitCode.INPUT) from None
    except click.UsageError as exc:
        hint = (
            f" (see 'harness {exc.ctx.command.name} --help')"
            if exc.ctx and exc.ctx.command.name != "cli"
            else ""
        )
        _fail(ExitCode.INPUT, f"{exc.format_message()}{hint}")
    except click.Abort:
        _fail(ExitCode.SIGINT, "interrupted")
    except (SpecError, UsageError) as exc:
        _fail(ExitCode.INPUT, str(exc))
    except ResultsError as exc:
        _fail(ExitCode.INPUT, str(exc))
    except HarnessError as exc:
        _fail(ExitCode.INCONCLUSIVE, str(exc))
    except click.exceptions.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except Exception:  # a bug: keep the traceback, but never pass as a verdict code
        traceback.print_exc()
        _fail(ExitCode.INTERNAL, "internal error (a bug in harness; the traceback is above)")


def with_index(matrix: Matrix, index: str) -> Matrix:
    """`--index` in place of the matrix's own: a URL, or a folder that exists. Every
    verb that reaches an index (run, bisect) resolves it here, so they agree."""
    if not index.startswith(("http://", "https://")):
        folder = Path(index.removeprefix("file://")).expanduser()
        if not folder.is_dir():
            raise UsageError(f"--index: {index!r} is neither an http(s) URL nor a folder")
        index = str(folder.resolve())
    settings = matrix.settings.model_copy(update={"index": index})
    return matrix.model_copy(update={"settings": settings})
