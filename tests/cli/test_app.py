"""The options verbs share: one name for the human view in every verb's --format."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from harness.cli.app import HUMAN, VERBS, cli, json_or_human


@click.command()
@json_or_human("for scripts.", old=("text",))
def _verb(fmt: str) -> None:
    click.echo(fmt)


@pytest.mark.parametrize(("given", "seen"), [([], "table"), (["--format", "text"], "table")])
def test_an_old_spelling_is_the_human_view(given: list[str], seen: str) -> None:
    """`--format text` (bisect's old name) still works and reaches the verb as table."""
    result = CliRunner().invoke(_verb, given)
    assert (result.exit_code, result.output) == (0, f"{seen}\n")


def test_the_old_spelling_is_not_offered() -> None:
    """Help and errors list only table and json: `text` is a hidden alias."""
    assert "[table|json]" in CliRunner().invoke(_verb, ["--help"]).output
    result = CliRunner().invoke(_verb, ["--format", "bogus"])
    assert result.exit_code == 2 and "'table', 'json'" in result.output
    assert "text" not in result.output


def test_every_verb_with_a_human_view_calls_it_table() -> None:
    """run, hosts, diff and bisect default to table; no verb offers `text`."""
    ctx = click.Context(cli)
    formats = {}
    for verb in VERBS:
        command = cli.get_command(ctx, verb)
        assert command is not None
        for param in command.params:
            if param.name == "fmt" and isinstance(param.type, click.Choice):
                assert "text" not in param.type.choices, verb
                formats[verb] = param.default
    assert {v: formats[v] for v in ("run", "hosts", "diff", "bisect")} == dict.fromkeys(
        ("run", "hosts", "diff", "bisect"), HUMAN
    )
