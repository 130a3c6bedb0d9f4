"""Holding a results folder to the committed JSON Schemas (docs/schemas/), no pytest here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from harness.results.store.layout import CELLS, MANIFEST, VERDICTS
from tests.conftest import ROOT

FOLDER = ROOT / "docs" / "schemas"


def validator(name: str) -> Draft202012Validator:
    """The committed schema `name` (e.g. "cell.schema.json"), as a validator."""
    schema = json.loads((FOLDER / name).read_text(encoding="utf-8"))
    return Draft202012Validator(schema)


def problems(name: str, instance: Any) -> list[str]:
    """Every way `instance` fails the schema, as `path: message` lines."""
    found = validator(name).iter_errors(instance)
    return [f"{'.'.join(map(str, e.absolute_path)) or '(record)'}: {e.message}" for e in found]


def folder_problems(folder: Path) -> list[str]:
    """What in a results folder's three files does not match its schema, by file and line."""
    found = [f"{MANIFEST}: {p}" for p in problems("manifest.schema.json", _json(folder / MANIFEST))]
    for file, schema in ((CELLS, "cell.schema.json"), (VERDICTS, "verdict.schema.json")):
        lines = (folder / file).read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            found += [f"{file} line {number}: {p}" for p in problems(schema, json.loads(line))]
    return found


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
