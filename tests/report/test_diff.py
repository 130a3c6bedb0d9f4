"""`harness diff`: what changed between two runs, and exit 1 when a verdict did."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness.report.diff import diff_runs
from harness.results.store.read import load_run
from tests.report.conftest import Runs, harness
from tests.report.fleet import nights


def _doctor(source: Path, target: Path) -> Path:
    """A copy of a real run with its runsc version, a check's errno and a fact value changed."""
    shutil.copytree(source, target)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["hosts"]["localhost"]["runtimes"]["runsc"]["version"] = "runsc version 99"
    (target / "manifest.json").write_text(json.dumps(manifest))
    rows = [json.loads(line) for line in (target / "verdicts.jsonl").read_text().splitlines()]
    for row in rows:
        if row["runtime"] == "bare" and row.get("property") == "privilege_floor":
            for check in row["checks"]:
                if check["id"] == "priv-capset":
                    check["errno"] = "EACCES"
                    check["detail"] = "a detail that changes every run is not compared"
        if row["runtime"] == "host" and row.get("fact") == "landlock_abi":
            row["observed"], row["display"] = 6, "6"
    (target / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return target


def test_a_changed_verdict_is_shown_and_exits_1(runs: Runs) -> None:
    """Clean to mixed: runsc's landlock_abi goes pass -> unexpected; exit 1."""
    done = harness("diff", runs.clean, runs.mixed)
    assert done.code == 1, done.stderr
    rows = [line for line in done.stdout.splitlines() if "landlock_abi" in line]
    # The matrix's changed expectation is drift, shown first; then the changed verdict,
    # before the cells only one run has.
    assert "config" in rows[0] and '"unavailable"' in rows[0]
    row = next(r for r in rows if "verdict" in r)
    assert "runsc" in row
    assert "✓ pass" in row and "! unexpected" in row
    assert "1 verdict(s) changed" in done.stdout


def test_json_output(runs: Runs) -> None:
    """--format json: every change as an object; new cells are `added`, not changed verdicts."""
    done = harness("diff", runs.clean, runs.mixed, "--format", "json")
    assert done.code == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["verdicts_changed"] == 1
    changes = data["changes"]
    assert {
        "kind": "verdict",
        "host": "localhost",
        "runtime": "runsc",
        "subject": "landlock_abi",
        "check": None,
        "before": "pass",
        "after": "unexpected",
        "side": "sandbox",
        "verdicts": 0,
    } in changes
    expected = next(c for c in changes if c["kind"] == "expected")
    assert (expected["before"], expected["after"]) == ("unavailable", "7")
    assert any(c["kind"] == "added" and c["runtime"] == "bare" for c in changes)


def test_the_same_verdicts_exit_0(runs: Runs) -> None:
    """Two runs of the same matrix with the same outcome: no verdict changed, exit 0."""
    done = harness("diff", runs.mixed, runs.mixed_again, "--format", "json")
    assert done.code == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["verdicts_changed"] == 0


def test_versions_checks_and_fact_values(runs: Runs, tmp_path: Path) -> None:
    """A runtime version, a check's errno and a fact value each show up; details do not.

    Uses a doctored copy of a real run (see _doctor): those three values edited by hand.
    """
    doctored = _doctor(runs.mixed, tmp_path / "doctored")
    result = diff_runs(load_run(runs.mixed), load_run(doctored))
    kinds = {(c.kind, c.runtime, c.subject, c.check): (c.before, c.after) for c in result.changes}
    version = kinds[("version", "runsc", None, None)]
    assert version[1] == "runsc version 99" and "runsc" in (version[0] or "")
    capset = kinds[("check", "bare", "privilege_floor", "priv-capset")]
    assert capset == ("blocked EPERM (control n/a)", "blocked EACCES (control n/a)")
    assert kinds[("fact", "host", "landlock_abi", None)][1] == "6"
    assert result.verdicts_changed == 0
    assert len(result.changes) == 3
    done = harness("diff", runs.mixed, doctored)
    assert done.code == 0
    assert "runsc version 99" in done.stdout and "priv-capset" in done.stdout


def test_bad_input_exits_2(runs: Runs, tmp_path: Path) -> None:
    """A folder that holds no run is bad input: exit 2 with one line."""
    done = harness("diff", runs.clean, tmp_path)
    assert done.code == 2
    assert "not a results folder" in done.stderr
    assert done.stderr.strip().count("\n") == 0


def _renamed(source: Path, target: Path, old: str, new: str) -> Path:
    """A copy of a real run where runtime `old` is called `new` everywhere."""
    shutil.copytree(source, target)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["runtimes"][new] = manifest["runtimes"].pop(old)
    host = manifest["hosts"]["localhost"]["runtimes"]
    host[new] = host.pop(old)
    (target / "manifest.json").write_text(json.dumps(manifest))
    for name in ("verdicts.jsonl", "cells.jsonl"):
        rows = [json.loads(line) for line in (target / name).read_text().splitlines()]
        for row in rows:
            if row["runtime"] == old:
                row["runtime"] = new
        (target / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return target


def test_a_renamed_runtime_is_one_line(runs: Runs, tmp_path: Path) -> None:
    """Renaming a runtime (same entry) is one `renamed` change, not added/removed rows."""
    renamed = _renamed(runs.mixed, tmp_path / "renamed", "runsc", "gvisor")
    result = diff_runs(load_run(runs.mixed), load_run(renamed))
    kinds = [c.kind for c in result.changes]
    assert kinds == ["renamed"], result.changes
    assert (result.changes[0].before, result.changes[0].after) == ("runsc", "gvisor")


def test_configuration_drift_is_shown(runs: Runs, tmp_path: Path) -> None:
    """A runtime's flags, its release and the matrix's sha256 changing are each a change."""
    drifted = tmp_path / "drifted"
    shutil.copytree(runs.mixed, drifted)
    manifest = json.loads((drifted / "manifest.json").read_text())
    manifest["matrix"]["sha256"] = "0" * 64
    manifest["runtimes"]["runsc"]["flags"] = ["--network=host"]
    manifest["runtimes"]["runsc"]["release"] = "20261101.0"
    (drifted / "manifest.json").write_text(json.dumps(manifest))
    result = diff_runs(load_run(runs.mixed), load_run(drifted))
    drift = {(c.kind, c.runtime, c.subject): c.after for c in result.changes}
    assert drift[("matrix", None, "sha256")] == "0" * 64
    assert drift[("config", "runsc", "flags")] == '["--network=host"]'
    assert drift[("config", "runsc", "release")] == '"20261101.0"'
    assert result.verdicts_changed == 0


def test_a_dead_host_is_one_line_and_the_lab_is_told_from_the_sandbox(tmp_path: Path) -> None:
    """node-2 dead in the second night is one `unreachable` change standing for its
    verdicts, not one per verdict and check; node-3's new address is inventory drift;
    the one regression is the sandbox's, listed after the lab's changes."""
    a, b = nights(tmp_path)
    done = harness("diff", a, b, "--format", "json")
    assert done.code == 1, done.stderr
    data = json.loads(done.stdout)
    node2 = [c for c in data["changes"] if c["host"] == "node-2"]
    assert node2 == [{
        "kind": "unreachable", "host": "node-2", "runtime": None, "subject": None,
        "check": None, "before": "reachable", "after": "unreachable: connection refused",
        "side": "lab", "verdicts": 10,
    }]  # fmt: skip
    inventory = [c for c in data["changes"] if c["kind"] == "inventory"]
    assert [(c["host"], c["subject"], c["before"], c["after"]) for c in inventory] == [
        ("node-3", "address", "10.0.0.3", "10.0.9.3")
    ]
    kinds = [(c["kind"], c["side"]) for c in data["changes"]]
    assert kinds == [("inventory", "lab"), ("unreachable", "lab"), ("verdict", "sandbox"),
                     ("observed", "sandbox")]  # fmt: skip
    assert (data["changes"][2]["host"], data["changes"][2]["after"]) == ("node-1", "regression")
    assert (data["sandbox_verdicts_changed"], data["lab_verdicts_changed"]) == (1, 10)
    text = harness("diff", a, b)
    assert len(text.stdout.splitlines()) < 20, text.stdout
    assert text.stdout.splitlines()[-1] == (
        "11 verdict(s) changed: 1 the sandbox's, 10 the lab's (unreachable hosts, inconclusive"
        " cells); 4 change(s) in all"
    )


def test_json_holds_no_raw_bidi_from_a_host(tmp_path: Path) -> None:
    """A host's kernel string with bidi and mark characters reaches `diff --format
    json` only as \\u escapes; a script parsing it still gets the string as it was."""
    a, b = nights(tmp_path)
    hostile = "6.1\u202egnp.exe\u2066x\u2069\u200f\u061c"
    manifest = json.loads((b / "manifest.json").read_text())
    manifest["hosts"]["node-1"]["kernel_release"] = hostile
    (b / "manifest.json").write_text(json.dumps(manifest))
    done = harness("diff", a, b, "--format", "json")
    assert done.code == 1, done.stderr
    assert not [c for c in done.stdout if not c.isascii()]
    afters = [c["after"] for c in json.loads(done.stdout)["changes"]]
    assert hostile in afters
