"""What `harness scenarios` and validation tell a user about names."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from harness.cli import cli
from harness.matrix import load_matrix


def test_scenarios_lists_only_what_a_matrix_should_name() -> None:
    """The internal self-test scenario is not offered; every property scenario is."""
    result = CliRunner().invoke(cli, ["scenarios"])
    assert result.exit_code == 0, result.output
    names = [line.split(":")[0] for line in result.output.splitlines() if not line.startswith(" ")]
    assert "selftest" not in names
    assert {"egress-confinement", "filesystem-confinement", "privilege-floor"} <= set(names)


def test_exact_word_facts_stay_valid(tmp_path: Path) -> None:
    """A word expected of a word-valued fact (kernel_machine) is an exact value, not a typo."""
    (tmp_path / "inv.toml").write_text('[hosts.h]\ntransport = "local"\n')
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        'name = "m"\ninventory = "inv.toml"\n[runtimes.r]\nkind = "runsc"\n'
        'facts = { kernel_machine = "x86_64", landlock_abi = ">= 3" }\n'
    )
    loaded = load_matrix(matrix)
    assert loaded.runtimes["r"].facts == {"kernel_machine": "x86_64", "landlock_abi": ">= 3"}
