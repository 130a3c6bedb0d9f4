"""Fuzzing every reader of a results folder (report in each format, diff, merge,
evidence, resume): a broken folder gives a result or one one-line error (ResultsError,
or UsageError for shards that do not fit together: exit 2), never a traceback. Folders
are built from valid records with parts broken: wrong types, non-objects, deep
nesting, binary bytes, missing files."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.errors import ResultsError, UsageError
from harness.evidence import FORMATS, document, load_evidence
from harness.report.diff import diff_runs
from harness.report.render import FORMATS as REPORTS
from harness.report.render import render
from harness.results.merge import merge_runs
from harness.results.resume import read_resumable
from harness.results.store.read import load_run

MANIFEST: dict[str, Any] = {
    "run_id": "abcd1234",
    "matrix": {"name": "m", "path": "/nonexistent/m.toml", "sha256": "0" * 64},
    "started": "2026-01-01T00:00:00.000Z",
    "ended": "2026-01-01T00:01:00.000Z",
    "interrupted": False,
    "exit_code": 1,
    "hosts": {"h": {"kernel_release": "6.1", "runtimes": {"r": {"version": "1"}}}},
    "runtimes": {"r": {"kind": "command"}},
    "selection": {"shard": "1/1"},
    "segments": [],
}
CHECK = {"id": "c", "scenario": "egress-confinement", "kind": "attempt", "outcome": "blocked",
         "errno": "EPERM", "detail": "d", "elapsed_ms": 1.0, "evidence": {"dst": "x"}}  # fmt: skip
CELL: dict[str, Any] = {
    "run_id": "abcd1234", "host": "h", "runtime": "r", "kind": "command",
    "scenarios": ["egress-confinement"], "status": "complete", "reason": None,
    "started": "s", "ended": "e", "elapsed": 1.0, "exit_status": 0, "stdout": "{}",
    "facts": [{"id": "landlock_abi", "scenario": "mechanisms", "status": "ok", "value": 7}],
    "checks": [CHECK], "info": {}, "host_side": {}, "control": False,
}  # fmt: skip
VERDICT: dict[str, Any] = {
    "host": "h", "runtime": "r", "expected": "enforced", "observed": "violated",
    "verdict": "regression", "reason": "why", "property": "egress_confinement",
    "checks": [{"id": "c", "outcome": "escaped", "control": "escaped"}], "cell_verdicts": 1,
}  # fmt: skip

junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def broken(draw: st.DrawFn, template: dict[str, Any]) -> bytes:
    """One line: the template, maybe with a key set to junk or removed, or not a
    record at all."""
    kind = draw(st.sampled_from(["valid", "field", "drop", "junk", "nested", "binary"]))
    data = json.loads(json.dumps(template))
    if kind == "field":
        key = draw(st.sampled_from(sorted(data)))
        data[key] = draw(junk)
        nested = (
            isinstance(template[key], list) and template[key] and isinstance(template[key][0], dict)
        )
        if nested and draw(st.booleans()):
            item = dict(template[key][0])
            item[draw(st.sampled_from(sorted(item)))] = draw(junk)
            data[key] = [item]
    elif kind == "drop":
        data.pop(draw(st.sampled_from(sorted(data))))
    elif kind == "junk":
        return json.dumps(draw(junk)).encode()
    elif kind == "nested":
        depth = draw(st.sampled_from([70, 5000]))
        return b"[" * depth + b"]" * depth
    elif kind == "binary":
        return draw(st.binary(min_size=1, max_size=20)).replace(b"\n", b"")
    return json.dumps(data).encode()


@st.composite
def folders(draw: st.DrawFn) -> dict[str, bytes | None]:
    files: dict[str, bytes | None] = {}
    files["manifest.json"] = (
        draw(st.none()) if draw(st.integers(0, 9)) == 0 else draw(broken(MANIFEST))
    )
    for name, template in (("cells.jsonl", CELL), ("verdicts.jsonl", VERDICT)):
        if draw(st.integers(0, 9)) == 0:
            files[name] = None
        else:
            lines = draw(st.lists(broken(template), min_size=0, max_size=3))
            files[name] = b"".join(line + b"\n" for line in lines)
    return files


def _readers(folder: Path, scratch: Path) -> None:
    run = load_run(folder)
    for fmt in REPORTS:
        render(fmt, [run])
    diff_runs(run, run)
    manifest, cells = load_evidence(folder)
    for ev in cells:
        for fmt in FORMATS:
            document(ev, manifest, fmt)


def _each_reader(folder: Path, scratch: Path) -> list[BaseException | None]:
    outcomes: list[BaseException | None] = []
    for step in (
        lambda: _readers(folder, scratch),
        lambda: read_resumable(folder),
        lambda: merge_runs([folder], scratch / "merged"),
        lambda: load_evidence(folder),
    ):
        try:
            step()
            outcomes.append(None)
        except (ResultsError, UsageError) as exc:
            outcomes.append(exc)
    return outcomes


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(folders())
def test_every_reader_gives_a_result_or_one_line_error(files: dict[str, bytes | None]) -> None:
    """No broken folder makes a reader raise anything but a one-line ResultsError/UsageError."""
    with tempfile.TemporaryDirectory() as tmp:
        folder, scratch = Path(tmp) / "run", Path(tmp) / "scratch"
        folder.mkdir()
        scratch.mkdir()
        for name, blob in files.items():
            if blob is not None:
                (folder / name).write_bytes(blob)
        for outcome in _each_reader(folder, scratch):
            if outcome is not None:
                assert "\n" not in str(outcome), str(outcome)
                assert len(str(outcome)) < 600


def test_valid_folder_reads_everywhere(tmp_path: Path) -> None:
    """The templates themselves are a folder every reader accepts (the fuzzing
    would prove little if every generated folder failed at once)."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(MANIFEST))
    (folder / "cells.jsonl").write_text(json.dumps(CELL) + "\n")
    (folder / "verdicts.jsonl").write_text(json.dumps(VERDICT) + "\n")
    assert _each_reader(folder, tmp_path) == [None, None, None, None]


def test_each_verb_says_one_line_and_exits_2(tmp_path: Path) -> None:
    """Through the real CLI: a folder with a wrong field type in a middle line gives
    exit 2 and one line naming the file, the line and the key, for every verb."""
    from tests.conftest import harness_cli

    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(MANIFEST))
    (folder / "cells.jsonl").write_text(json.dumps({**CELL, "host": ["x"]}) + "\n\n")
    (folder / "verdicts.jsonl").write_text(json.dumps({**VERDICT, "checks": 5}) + "\n")
    for argv in (
        ["report", folder, "--format", "json"],
        ["diff", folder, folder],
        ["merge", folder, "--out", tmp_path / "m"],
        ["evidence", folder, "--stdout"],
        ["run", "--resume", folder],
    ):
        result = harness_cli(*argv)
        assert result.code == 2, (argv, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "line 1" in lines[0], (argv, result.stderr)
        assert ("checks" in lines[0]) or ("host" in lines[0])
