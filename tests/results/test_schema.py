"""The results folder's JSON Schemas (docs/schemas/): generated from the record types,
committed as generated, and true of what the writer writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from harness.results.records import CellStatus, CheckResult, HostEvidence, Verdict, VerdictRecord
from harness.results.schema import SCHEMAS, render, write
from harness.results.store.write import ResultsStore
from tests.results.cells import record
from tests.results.schemas import FOLDER, folder_problems, problems
from tests.results.test_store import WRITTEN


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_committed_schema_is_the_generated_one(name: str) -> None:
    """docs/schemas/ holds what `python -m harness.results.schema` makes from the types
    today: a record type changed without regenerating fails here."""
    committed = (FOLDER / name).read_text(encoding="utf-8")
    assert committed == render(SCHEMAS[name]()), "regenerate: python -m harness.results.schema"


def test_the_generator_writes_every_schema(tmp_path: Path) -> None:
    """The generator writes each schema to the folder it is given, each a valid 2020-12
    schema with an `$id` of its own (the evidence tests load every file there)."""
    written = write(tmp_path)
    assert sorted(p.name for p in written) == sorted(SCHEMAS)
    ids = set()
    for path in written:
        schema = json.loads(path.read_text())
        Draft202012Validator.check_schema(schema)
        ids.add(schema["$id"])
    assert len(ids) == len(SCHEMAS)


def _folder(tmp_path: Path) -> Path:
    """A results folder written by the store: a cell with host evidence, its verdicts."""
    folder = tmp_path / "run"
    store = ResultsStore(folder)
    store.open()
    try:
        store.write_manifest(WRITTEN)
        cell = record(
            ["egress-confinement"],
            [{"id": "tcp-raw-ip", "outcome": "blocked", "errno": "ENETUNREACH"}],
            {"canary_events": [], "canary_has": ["ipv4"], "settled": 3.0},
        )
        store.add_cell(cell)
        store.add_cell(record(["mechanisms"], status=CellStatus.ERROR, runtime="s"))
        check = CheckResult(id="tcp-raw-ip", outcome="blocked", control="escaped")
        store.add_verdicts(
            [
                VerdictRecord(
                    host="h",
                    runtime="r",
                    expected="enforced",
                    observed="enforced",
                    verdict=Verdict.PASS,
                    property="egress_confinement",
                    checks=[check],
                ),
                VerdictRecord(
                    host="h", runtime="r", expected=7, observed=7, verdict=Verdict.PASS, fact="x"
                ),
            ]
        )
    finally:
        store.close()
    return folder


def test_what_the_store_writes_matches_the_schemas(tmp_path: Path) -> None:
    """The manifest, cells and verdicts the store writes validate, host entries included."""
    assert folder_problems(_folder(tmp_path)) == []


def _line(folder: Path, name: str, number: int = 1) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / name).read_text().splitlines()[number - 1])
    return data


def test_the_schemas_refuse_what_harness_never_writes(tmp_path: Path) -> None:
    """A key the writer always writes is required, a verdict is about one fact or one
    property, and the host entries are typed."""
    folder = _folder(tmp_path)
    cell = _line(folder, "cells.jsonl")
    del cell["stdout"]
    assert problems("cell.schema.json", cell) == ["(record): 'stdout' is a required property"]
    cell = _line(folder, "cells.jsonl")
    cell["status"] = "fine"
    assert problems("cell.schema.json", cell)
    cell = _line(folder, "cells.jsonl")
    del cell["checks"][0]["errno"]  # written for every check, null or not
    assert problems("cell.schema.json", cell)
    verdict = _line(folder, "verdicts.jsonl")
    assert problems("verdict.schema.json", {**verdict, "fact": "x"})
    del verdict["property"]
    assert problems("verdict.schema.json", verdict)
    assert problems("verdict.schema.json", {**_line(folder, "verdicts.jsonl"), "cell_verdicts": 0})
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["hosts"]["h"]["runtimes"]["runsc"]["available"] = "maybe"
    assert problems("manifest.schema.json", manifest)


def test_host_evidence_fields_are_optional() -> None:
    """Unset host-side fields are left out and that is valid: a gap, not a bad record."""
    cell = record(["mechanisms"]).to_json()
    assert cell["host_side"] == HostEvidence(tag=cell["host_side"]["tag"]).to_json()
    assert problems("cell.schema.json", {**cell, "host_side": {}}) == []
