"""Whole runs over SSH against real sshd instances on loopback (see tests/lab.py).

One lab run covers three hosts at once: `trusted` (works), `stranger` (its host
key is not in known_hosts) and `dead` (nothing listens). The run must finish the
trusted host correctly and record the other two as inconclusive with reasons.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Lab, harness_cli
from tests.e2e.helpers import cells_of, leftovers, runsc_containers, verdicts_of
from tests.lab import require_tool

MATRIX = """
name = "ssh-lab"
inventory = "inventory.toml"
scenarios = ["mechanisms"]
[settings]
timeout = 60
[runtimes.host]
kind = "host"
facts = { landlock_abi = ">= 1", seccomp_new_listener = true }
[runtimes.runsc]
kind = "runsc"
flags = ["--network=none"]
facts = { landlock_abi = "unavailable", seccomp_new_listener = "unavailable" }
"""


@pytest.fixture(scope="module")
def lab_run(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, Path, Path]:
    """One run of the lab matrix over SSH, shared by the tests below."""
    require_tool("runsc")
    folder = tmp_path_factory.mktemp("ssh")
    lab.inventory(folder / "inventory.toml")
    (folder / "m.toml").write_text(MATRIX)
    result = harness_cli("run", folder / "m.toml", "--out", folder / "out")
    return result.code, result.stdout + result.stderr, folder / "out", folder


def test_fact_table_over_ssh(lab_run: tuple[int, str, Path, Path]) -> None:
    """Over SSH, host shows Landlock and a listener; runsc shows ENOSYS and EINVAL."""
    _, output, out, _ = lab_run
    v = verdicts_of(out)
    assert v[("trusted", "host", "landlock_abi")]["verdict"] == "pass"
    assert v[("trusted", "host", "seccomp_new_listener")]["verdict"] == "pass"
    abi = v[("trusted", "runsc", "landlock_abi")]
    assert (abi["verdict"], abi["observed"], abi["errno"]) == ("pass", "unavailable", "ENOSYS")
    listener = v[("trusted", "runsc", "seccomp_new_listener")]
    assert (listener["verdict"], listener["errno"]) == ("pass", "EINVAL")
    assert v[("trusted", "runsc", "kernel_release")]["verdict"] == "pass"
    assert "host: trusted" in output


def test_unreachable_and_untrusted_hosts_are_inconclusive(
    lab_run: tuple[int, str, Path, Path],
) -> None:
    """Dead and untrusted hosts are recorded as inconclusive; the run exits 3."""
    code, output, out, _ = lab_run
    assert code == 3, output
    v = verdicts_of(out)
    for host in ("stranger", "dead"):
        rows = [r for k, r in v.items() if k[0] == host]
        assert rows and all(r["verdict"] == "inconclusive" for r in rows)
    cells = cells_of(out)
    assert cells[("dead", "host")]["status"] == "unreachable"
    assert "connection refused" in cells[("dead", "host")]["reason"]
    # Retries are announced in harness's words, never as stamina's bare event name.
    assert "stamina.retry_scheduled" not in output
    assert "retry 1 in" in output


def test_unknown_host_key_is_refused_and_nothing_runs(lab_run: tuple[int, str, Path, Path]) -> None:
    """A host whose key is not in known_hosts is refused, with the reason recorded."""
    _, _, out, folder = lab_run
    cell = cells_of(out)[("stranger", "runsc")]
    assert cell["status"] == "unreachable"
    assert "host key not verifiable" in cell["reason"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert "host key not verifiable" in manifest["hosts"]["stranger"]["error"]
    assert not (folder / "work-stranger").exists()


def test_probe_staged_by_hash_and_versions_recorded(lab_run: tuple[int, str, Path, Path]) -> None:
    """The probe lands under its sha256; kernel and runsc version go in the manifest."""
    _, _, out, folder = lab_run
    manifest = json.loads((out / "manifest.json").read_text())
    trusted = manifest["hosts"]["trusted"]
    sha = manifest["probe"]["sha256"]
    assert trusted["probe_path"] == f"{folder}/work-trusted/probe/{sha}"
    assert Path(trusted["probe_path"]).is_file()
    assert trusted["probe_uploaded"] is True
    assert trusted["kernel_release"]
    assert trusted["runtimes"]["runsc"]["version"].startswith("runsc version")


def test_second_run_reuses_the_staged_probe(lab: Lab, lab_run: tuple[int, str, Path, Path]) -> None:
    """A probe already on the host with the right hash is not uploaded again."""
    _, _, _, folder = lab_run
    result = harness_cli(
        "run",
        folder / "m.toml",
        "--host",
        "trusted",
        "--runtime",
        "host",
        "--out",
        folder / "again",
    )
    assert result.code == 0, result.stdout + result.stderr
    manifest = json.loads((folder / "again" / "manifest.json").read_text())
    assert manifest["hosts"]["trusted"]["probe_uploaded"] is False


def test_hung_cell_over_ssh_is_killed(lab: Lab, tmp_path: Path) -> None:
    """Over SSH too, a hung sandbox is killed at the timeout and nothing is left."""
    require_tool("runsc")
    lab.inventory(tmp_path / "inventory.toml")
    (tmp_path / "m.toml").write_text(
        'name = "hang"\ninventory = "inventory.toml"\nhosts = ["trusted"]\n'
        'scenarios = ["selftest"]\n[settings]\ntimeout = 3\ncheck_timeout = 600\n'
        '[runtimes.host]\nkind = "host"\n'
        '[runtimes.runsc]\nkind = "runsc"\nflags = ["--network=none"]\n'
    )
    result = harness_cli("run", tmp_path / "m.toml", "--out", tmp_path / "out", timeout=90)
    assert result.code == 3, result.stdout + result.stderr
    cells = cells_of(tmp_path / "out")
    assert {c["status"] for c in cells.values()} == {"timeout"}
    work = tmp_path / "work-trusted"
    assert leftovers(str(work)) == []
    assert runsc_containers(work / "runsc-root") == []
    assert list((work / "cells").iterdir()) == []
