"""Evidence export: real runs on host, runsc and bwrap, in OpenShell's old and new shapes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from tests.conftest import ROOT, harness_cli
from tests.lab import require_tool

SCHEMAS = {p.name: json.loads(p.read_text()) for p in (ROOT / "docs" / "schemas").glob("*.json")}
REGISTRY = Registry().with_resources(
    (s["$id"], Resource.from_contents(s)) for s in SCHEMAS.values()
)
FORMAT_SCHEMA = {
    "openshell": "openshell.schema.json",
    "openshell-legacy": "openshell-legacy.schema.json",
    "json": "evidence.schema.json",
}


def _validator(fmt: str) -> Draft202012Validator:
    return Draft202012Validator(SCHEMAS[FORMAT_SCHEMA[fmt]], registry=REGISTRY)


def _export(folder: Path, fmt: str) -> dict[str, dict[str, Any]]:
    result = harness_cli("evidence", folder, "--format", fmt, "--stdout")
    assert result.code == 0, result.stderr
    return {d["runtime"]: d for d in json.loads(result.stdout)}


def _first_table(stdout: str) -> list[str]:
    """--compare's lines before the outer fence's table (test_fence.py reads that one)."""
    lines = stdout.splitlines()
    end = next((i for i, ln in enumerate(lines) if ln.startswith("outer fence (")), len(lines))
    return lines[:end]


@pytest.fixture
def run_folder(local_matrix_run: tuple[int, str, Path]) -> Path:
    """The session's one real run of the default matrix (tests/conftest.py): every
    scenario on host, runsc, bwrap and the rest."""
    code, output, out = local_matrix_run
    assert code == 0, output
    return out


@pytest.mark.parametrize("fmt", sorted(FORMAT_SCHEMA))
def test_every_document_validates_against_its_published_schema(run_folder: Path, fmt: str) -> None:
    """Each exported document matches the JSON Schema published in docs/schemas."""
    docs = _export(run_folder, fmt)
    assert set(docs) == {
        "host", "runsc", "bwrap", "runc", "bwrap-supervised", "runsc-supervised",
        "bwrap-colocated", "landlock-colocated", "jail", "microvm",
    }  # fmt: skip
    for doc in docs.values():
        errors = sorted(_validator(fmt).iter_errors(doc), key=str)
        assert not errors, errors[0].message


def test_runsc_enforces_what_the_contract_asks(run_folder: Path) -> None:
    """runsc: filesystem and privilege enforced (measured); host: nothing enforced."""
    docs = _export(run_folder, "openshell")
    runsc = docs["runsc"]["properties"]
    assert runsc["filesystem_confinement"]["enforced"] is True
    assert runsc["privilege_floor"]["enforced"] is True
    # No decision-record source in the local matrix: nothing attributes requests.
    assert runsc["request_attribution"]["enforced"] is False
    assert runsc["egress_interception"]["enforced"] is False
    audit = docs["runsc"]["backend_audit"]
    assert "attribution skipped" in audit["properties"]["egress_interception"]["why_not_enforced"]
    assert audit["mechanism_facts"]["landlock_abi"]["errno"] == "ENOSYS"
    assert audit["fingerprint"]["sandbox_kernel"] == "4.4.0"
    host = docs["host"]["properties"]
    assert not any(p["enforced"] for p in host.values())


def test_gvisor_behind_a_supervisor_meets_the_contract_and_fails_the_old_one(
    run_folder: Path,
) -> None:
    """runsc behind the reference supervisor: all four contract properties enforced,
    attribution endpoint-only, and the legacy validate() still fails it on mechanisms."""
    new = _export(run_folder, "openshell")["runsc-supervised"]
    assert {k: p["enforced"] for k, p in new["properties"].items()} == {
        "filesystem_confinement": True,
        "egress_interception": True,
        "request_attribution": True,
        "privilege_floor": True,
    }
    assert new["properties"]["request_attribution"]["mechanism"] == "endpoint-only"
    old = _export(run_folder, "openshell-legacy")["runsc-supervised"]
    assert old["validate"]["passed"] is False
    assert "seccomp.new_listener" in old["validate"]["failing"]


def test_legacy_contract_fails_gvisor_on_mechanisms(run_folder: Path) -> None:
    """The old validate() fails runsc for missing Landlock and seccomp listener."""
    docs = _export(run_folder, "openshell-legacy")
    runsc = docs["runsc"]
    assert runsc["validate"]["passed"] is False
    assert "seccomp.new_listener" in runsc["validate"]["failing"]
    assert "landlock_abi >= 3 (got 0)" in runsc["validate"]["failing"]
    assert runsc["evidence"]["landlock_abi"] == 0
    host = docs["host"]
    # Every mechanism is there, yet upstream's full check fails the bare host: root,
    # every capability, no no_new_privs, no supervisor (and what harness cannot see).
    assert host["evidence"]["landlock_abi"] >= 3 and all(host["evidence"]["seccomp"].values())
    failing = host["validate"]["failing"]
    assert not any(f.startswith(("seccomp.", "landlock")) for f in failing), failing
    for why in ("identity (uid or gid 0)", "no_new_privileges", "authenticated_supervisor"):
        assert why in failing, failing
    assert "driver_fence (not measured)" in failing and host["evidence"]["driver_fence"] is None
    assert host["evidence"]["capabilities"]["effective"] > 0
    assert set(host["evidence"]) >= {"udp_dns_round_trip", "tcp_dns_round_trip"}


def test_compare_puts_old_and_new_side_by_side(run_folder: Path) -> None:
    """--compare shows, per runtime, the legacy verdict next to the property verdicts."""
    result = harness_cli("evidence", run_folder, "--compare")
    assert result.code == 0, result.stderr
    rows = {
        line.split("│")[1].strip(): line
        for line in _first_table(result.stdout)
        if line.startswith("│ localhost/")
    }
    assert "fails" in rows["localhost/runsc"]
    # Without a supervisor, runsc cannot show interception or attribution.
    assert [c.strip() for c in rows["localhost/runsc"].split("│")[3:7]] == [
        "true", "false", "false", "true",
    ]  # fmt: skip
    # The seed's argument in one row: gVisor behind a supervisor meets all four.
    gvisor = [c.strip() for c in rows["localhost/runsc-supervised"].split("│")[2:7]]
    assert gvisor[0].startswith("fails") and gvisor[1:] == ["true"] * 4, gvisor
    assert [c.strip() for c in rows["localhost/host"].split("│")[3:7]] == ["false"] * 4
    # The co-located shape (issue 25): judged against its policy, filesystem and
    # privilege hold though it shows the host's own /usr and /etc.
    colocated = [c.strip() for c in rows["localhost/bwrap-colocated"].split("│")[3:7]]
    assert colocated[0] == "true" and colocated[3] == "true", colocated
    # OpenShell's own backend, Landlock on the host's view behind a supervisor: every
    # contract property measured true; upstream's older check fails it on its root
    # workload (and what harness cannot see), never on a mechanism.
    landlock = [c.strip() for c in rows["localhost/landlock-colocated"].split("│")[2:7]]
    assert landlock[0].startswith("fails") and landlock[1:] == ["true"] * 4, landlock
    said = next(
        ln for ln in result.stdout.splitlines() if ln.startswith("localhost/landlock-colocated:")
    )
    assert "identity (uid or gid 0)" in said and "seccomp." not in said, said
    why = next(ln for ln in result.stdout.splitlines() if ln.startswith("localhost/runsc: legacy"))
    assert "seccomp.new_listener" in why and "landlock_abi >= 3 (got 0)" in why
    # The outer fence, measured: every supervised runtime establishes all four; an
    # isolated one has no path to lose; the host establishes none.
    fence = {
        line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
        for line in result.stdout.splitlines()[len(_first_table(result.stdout)) :]
        if line.startswith("│ localhost/")
    }
    for supervised in ("bwrap-supervised", "runsc-supervised", "landlock-colocated"):
        assert fence[f"localhost/{supervised}"] == ["established"] * 4, fence
    assert fence["localhost/bwrap"] == ["established"] * 2 + ["not measured"] * 2
    assert "established" not in fence["localhost/host"]  # no guarantee


def test_digest_traces_to_the_records(run_folder: Path, tmp_path: Path) -> None:
    """evidence_digest is the sha256 of the records; changing a record changes it."""
    before = _export(run_folder, "openshell")["runsc"]["evidence_digest"]
    copy = tmp_path / "copy"
    shutil.copytree(run_folder, copy)
    assert _export(copy, "openshell")["runsc"]["evidence_digest"] == before
    text = (copy / "verdicts.jsonl").read_text().replace('"display":"7"', '"display":"07"', 1)
    (copy / "verdicts.jsonl").write_text(text)
    assert (
        _export(copy, "openshell")["host"]["evidence_digest"]
        != _export(run_folder, "openshell")["host"]["evidence_digest"]
    )


def test_inconclusive_record_never_exports_enforced(run_folder: Path, tmp_path: Path) -> None:
    """A doctored record set (test-only edit: runsc's filesystem made inconclusive)
    can never export enforced: true."""
    copy = tmp_path / "doctored"
    shutil.copytree(run_folder, copy)
    rows = [json.loads(line) for line in (copy / "verdicts.jsonl").read_text().splitlines()]
    for row in rows:
        if row["runtime"] == "runsc" and row.get("property") == "filesystem_confinement":
            row["observed"], row["verdict"] = "inconclusive", "inconclusive"
            row["reason"] = "doctored for this test"
    (copy / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    doc = _export(copy, "openshell")["runsc"]
    assert doc["properties"]["filesystem_confinement"]["enforced"] is False
    why = doc["backend_audit"]["properties"]["filesystem_confinement"]["why_not_enforced"]
    assert why == "filesystem_confinement inconclusive: doctored for this test"


def test_declared_mechanism_cannot_change_enforced(tmp_path: Path) -> None:
    """A runtime that declares strong mechanisms but confines nothing exports false."""
    require_tool("runsc")
    (tmp_path / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{tmp_path}/work"\n'
    )
    (tmp_path / "m.toml").write_text(
        'name = "m"\ninventory = "inv.toml"\nscenarios = ["filesystem-confinement"]\n'
        '[runtimes.host]\nkind = "host"\n'
        'mechanisms = { filesystem_confinement = "landlock-v4",'
        ' privilege_floor = "seccomp-notify" }\n'
        '[runtimes.runsc]\nkind = "runsc"\nflags = ["--network=none"]\n'
        'mechanisms = { filesystem_confinement = "gvisor-vfs" }\n'
    )
    assert harness_cli("run", tmp_path / "m.toml", "--out", tmp_path / "out").code == 0
    docs = _export(tmp_path / "out", "openshell")
    host = docs["host"]["properties"]["filesystem_confinement"]
    assert host == {"enforced": False, "mechanism": "landlock-v4"}
    runsc = docs["runsc"]["properties"]["filesystem_confinement"]
    assert runsc == {"enforced": True, "mechanism": "gvisor-vfs"}
    assert docs["runsc"]["properties"]["privilege_floor"]["enforced"] is False  # not measured


def test_not_a_results_folder_is_bad_input(tmp_path: Path) -> None:
    """Pointing evidence at any other folder: exit 2 and one line."""
    result = harness_cli("evidence", tmp_path)
    assert result.code == 2
    assert result.stderr.strip().endswith("not a results folder (no manifest.json)")


def test_writes_one_file_per_host_runtime(run_folder: Path, tmp_path: Path) -> None:
    """Without --stdout, one document per (host, runtime) lands in a folder."""
    result = harness_cli("evidence", run_folder, "--out", tmp_path / "ev")
    assert result.code == 0, result.stderr
    names = sorted(p.name for p in (tmp_path / "ev").iterdir())
    runtimes = (
        "bwrap", "bwrap-colocated", "bwrap-supervised", "host", "jail", "landlock-colocated",
        "microvm", "runc", "runsc", "runsc-supervised",
    )  # fmt: skip
    assert names == sorted(f"localhost--{r}.json" for r in runtimes)


def test_the_policy_judged_against_is_in_the_evidence(run_folder: Path) -> None:
    """A runtime that declares a policy carries its source and digest into the export;
    one that declares none says so (null)."""
    docs = _export(run_folder, "openshell")
    policy = docs["bwrap-colocated"]["backend_audit"]["policy"]
    assert policy["source"].endswith("policies/bwrap-colocated.yaml")
    assert len(policy["sha256"]) == 64
    assert docs["runsc"]["backend_audit"]["policy"] is None


def test_compare_shows_harness_own_verdicts_next_to_the_projection(tmp_path: Path) -> None:
    """Two unsupervised runsc builds both project `egress_interception false`; the
    regressed one must not look like the good one: each row carries harness's own
    verdict per property next to the contract's columns."""
    from harness.results import CellStatus, ResultsStore, Verdict, VerdictRecord
    from tests.results.cells import record

    store = ResultsStore(tmp_path / "run")
    store.open()
    try:
        for runtime, verdict, observed in (
            ("good", Verdict.PASS, "enforced"),
            ("bad", Verdict.REGRESSION, "violated"),
        ):
            store.add_cell(record(["egress-confinement"], host="node", runtime=runtime,
                                  status=CellStatus.COMPLETE))  # fmt: skip
            store.add_verdicts([VerdictRecord(
                host="node", runtime=runtime, property="egress_confinement",
                expected="enforced", observed=observed, verdict=verdict,
            )])  # fmt: skip
        store.write_manifest({"matrix": {"sha256": "m"}, "runtimes": {"good": {}, "bad": {}}})
    finally:
        store.close()
    result = harness_cli("evidence", tmp_path / "run", "--compare")
    assert result.code == 0, result.stderr
    lines = _first_table(result.stdout)
    header = next(line for line in lines if "host/runtime" in line)
    names = [c.strip() for c in header.split("┃")[1:-1]]
    assert names[6:] == ["egress_confinement (harness)"], names
    rows = {
        line.split("│")[1].strip(): [c.strip() for c in line.split("│")[1:-1]]
        for line in lines
        if line.startswith("│ node/")
    }
    assert rows["node/good"][3] == rows["node/bad"][3] == "false"  # the projection alike
    assert rows["node/good"][6] == "pass" and rows["node/bad"][6] == "regression"


def test_the_confirmation_of_every_runtime_has_upstreams_shape(run_folder: Path) -> None:
    """local.toml's runtimes, supervised ones included, exported as upstream's
    BoundaryConfirmation: each has its fields and types (test_confirmation.py's
    UPSTREAM) and validates against the published schema. The runtime's exit is
    measured: the host control leaves the probe's lingerer behind, a sandbox with a
    PID namespace of its own (or a kernel of its own) does not. None passes upstream's
    check: every one runs its workload as root, or lacks a supervisor (exit 1)."""
    from tests.evidence.test_confirmation import SESSION, UPSTREAM, _shape

    result = harness_cli(
        "evidence", run_folder, "--format", "openshell-confirmation", "--stdout",
        "--generation", "g1", "--session-id", SESSION,
    )  # fmt: skip
    assert result.code == 1, result.stderr
    docs = json.loads(result.stdout)
    validator = Draft202012Validator(
        SCHEMAS["openshell-confirmation.schema.json"], registry=REGISTRY
    )
    for doc in docs:
        _shape(doc, UPSTREAM, doc["backend_audit"]["harness"]["runtime"])
        assert not sorted(validator.iter_errors(doc), key=str)
    by = {d["backend_audit"]["harness"]["runtime"]: d for d in docs}
    for supervised in ("bwrap-supervised", "runsc-supervised"):
        assert by[supervised]["authenticated_supervisor"] is True
        assert len(by[supervised]["outer_fence"]["established"]) == 4
    assert by["host"]["properties"]["privilege_floor"]["enforced"] is False
    assert by["host"]["runtime_exit_terminates_workload"] is False
    outlived = by["host"]["backend_audit"]["harness"]["runtime_exit_terminates_workload"]
    assert outlived.startswith("the workload outlived the runtime: "), outlived
    for ends in ("runsc", "bwrap", "jail", "microvm", "landlock-colocated"):
        assert by[ends]["runtime_exit_terminates_workload"] is True, by[ends]["backend_audit"]
    assert "host/host: runtime exit does not (or is not shown to) terminate" in result.stderr
