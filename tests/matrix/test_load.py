"""Loading matrices and inventories: valid files load, invalid ones fail in one line."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from harness.cli import main
from harness.errors import SpecError
from harness.matrix import load_matrix

ROOT = Path(__file__).resolve().parents[2]
CASES = tomllib.loads((Path(__file__).with_name("invalid_matrices.toml")).read_text())["case"]


def _write_case(tmp: Path, case: dict[str, str]) -> Path:
    (tmp / "hosts").mkdir()
    (tmp / "matrices").mkdir()
    (tmp / "hosts" / "local.toml").write_text('[hosts.localhost]\ntransport = "local"\n')
    if "inventory" in case:
        (tmp / "hosts" / "bad.toml").write_text(case["inventory"])
    path = tmp / "matrices" / "x.toml"
    path.write_text(case["matrix"])
    return path


def _check_message(message: str, case: dict[str, str]) -> None:
    assert "\n" not in message.strip()
    if "error" in case:
        assert message == case["error"]
    else:
        assert message.startswith(case["error_prefix"])


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_invalid_matrix_names_file_and_key(
    case: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each invalid matrix raises one SpecError whose text names the file and the key."""
    path = _write_case(tmp_path, case)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpecError) as info:
        load_matrix(Path("matrices/x.toml"))
    _check_message(str(info.value), case)
    assert path.exists()


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_invalid_matrix_exits_2_with_one_line(
    case: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`harness validate` on an invalid matrix: exit 2, one stderr line, no traceback."""
    _write_case(tmp_path, case)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["validate", "matrices/x.toml"])
    assert info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("harness: error: ")
    _check_message(lines[0].removeprefix("harness: error: "), case)


@pytest.mark.parametrize("name", ["local.toml", "gvisor.toml"])
def test_shipped_matrices_are_valid(name: str) -> None:
    """The matrices in the repository load without error."""
    matrix = load_matrix(ROOT / "matrices" / name)
    assert matrix.runtimes
    assert matrix.hosts


def test_paths_resolve_relative_to_their_file(tmp_path: Path) -> None:
    """Inventory paths resolve against the matrix; key paths against the inventory."""
    (tmp_path / "a" / "hosts").mkdir(parents=True)
    (tmp_path / "a" / "m.toml").write_text(
        'name = "m"\ninventory = "hosts/lab.toml"\nhosts = ["tag:x"]\n'
        '[runtimes.host]\nkind = "host"\n'
    )
    (tmp_path / "a" / "hosts" / "lab.toml").write_text(
        '[defaults]\nidentity_file = "keys/id"\nknown_hosts = "/etc/kh"\nuser = "ci"\n'
        '[hosts.one]\naddress = "one.lab"\ntags = ["x"]\n[hosts.two]\nport = 2222\n'
    )
    matrix = load_matrix(tmp_path / "a" / "m.toml")
    (host,) = matrix.hosts
    assert host.name == "one"
    assert host.identity_file == tmp_path / "a" / "hosts" / "keys" / "id"
    assert host.known_hosts == Path("/etc/kh")
    assert host.user == "ci"
    assert host.port == 22


def test_fact_expectations_keep_their_types(tmp_path: Path) -> None:
    """A boolean expectation stays boolean; a number stays a number."""
    (tmp_path / "h.toml").write_text('[hosts.l]\ntransport = "local"\n')
    (tmp_path / "m.toml").write_text(
        'name = "m"\ninventory = "h.toml"\n[runtimes.host]\nkind = "host"\n'
        'facts = { seccomp_new_listener = true, landlock_abi = 7, kernel_machine = "x86_64" }\n'
    )
    facts = load_matrix(tmp_path / "m.toml").runtimes["host"].facts
    assert facts == {"seccomp_new_listener": True, "landlock_abi": 7, "kernel_machine": "x86_64"}
    assert facts["seccomp_new_listener"] is True


def test_matrix_without_scenarios_runs_every_property_and_mechanisms(tmp_path: Path) -> None:
    """No `scenarios` key: every property scenario, then mechanisms (never mechanisms alone)."""
    from harness.scenarios import SCENARIOS

    (tmp_path / "h.toml").write_text('[hosts.l]\ntransport = "local"\n')
    (tmp_path / "m.toml").write_text(
        'name = "m"\ninventory = "h.toml"\n[runtimes.host]\nkind = "host"\n'
    )
    scenarios = load_matrix(tmp_path / "m.toml").scenarios
    judged = {SCENARIOS[s].property for s in scenarios} - {None}
    assert judged == {
        "egress_confinement",
        "filesystem_confinement",
        "privilege_floor",
        "attribution",
        "controller_loss_fails_closed",
        "revocation_verified",
    }
    assert scenarios[-1] == "mechanisms" and "selftest" not in scenarios


def test_shipped_nightly_matrix_judges_every_property() -> None:
    """matrices/gvisor.toml runs all property scenarios on each fleet host (with fixtures)."""
    matrix = load_matrix(ROOT / "matrices" / "gvisor.toml")
    assert set(matrix.scenarios) >= {
        "egress-confinement", "filesystem-confinement", "privilege-floor", "attribution",
        "mechanisms",
    }  # fmt: skip
    assert {h.name for h in matrix.hosts} == {"ci-1", "ci-2", "arm-1"}
