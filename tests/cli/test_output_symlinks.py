"""A symlink planted where harness writes into an output folder is never followed:
root would make or overwrite its target. Refused in one line (exit 2), or, for a
file replaced whole, replaced itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.report.render import write_reports
from tests.conftest import CliResult, harness_cli
from tests.report.fleet import night


def _one_line(done: CliResult, path: Path) -> None:
    assert done.code == 2, done.stderr
    assert done.stderr.strip() == (
        f"harness: error: {path}: a symlink; harness writes no file through one"
    )


def test_a_dangling_lock_in_the_out_folder_is_refused(tmp_path: Path) -> None:
    """`merge --out DIR` with a dangling `.lock` planted in DIR: one line naming it,
    exit 2, and its target is not made."""
    shard = night(tmp_path / "shard", second=False)
    manifest = json.loads((shard / "manifest.json").read_text())
    manifest["selection"] = {"shard": "1/1"}
    (shard / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "out"
    out.mkdir()
    (out / ".lock").symlink_to(tmp_path / "made-by-root")
    _one_line(harness_cli("merge", shard, "--out", out), out / ".lock")
    assert not (tmp_path / "made-by-root").exists()


@pytest.mark.parametrize("planted", ["evidence", "evidence/openshell"])
@pytest.mark.parametrize("dangling", [False, True])
def test_evidence_never_follows_a_planted_folder(
    tmp_path: Path, planted: str, dangling: bool
) -> None:
    """A symlink planted at the folders `evidence` makes in a results folder (to a
    folder elsewhere, or dangling) is refused: nothing is written where it points."""
    run = night(tmp_path / "run", second=False)
    elsewhere = tmp_path / "elsewhere"
    if not dangling:
        elsewhere.mkdir()
    (run / planted).parent.mkdir(parents=True, exist_ok=True)
    (run / planted).symlink_to(elsewhere)
    _one_line(harness_cli("evidence", run), run / planted)
    assert not dangling or not elsewhere.exists()
    assert dangling or list(elsewhere.iterdir()) == []


def test_evidence_still_writes_into_its_own_folders(tmp_path: Path) -> None:
    """Without a planted symlink the documents land in FOLDER/evidence/FORMAT, and a
    second export replaces them."""
    run = night(tmp_path / "run", second=False)
    for _ in range(2):
        done = harness_cli("evidence", run)
        assert done.code == 0, done.stderr
    names = sorted(p.name for p in (run / "evidence" / "openshell").iterdir())
    assert names == sorted(f"node-{i}--{r}.json" for i in (1, 2, 3) for r in ("host", "runsc"))


def test_a_report_over_a_planted_symlink_replaces_the_link(tmp_path: Path) -> None:
    """`report.<ext>` written over a symlink planted in the results folder (or `-o` at
    one) replaces the link; the file it points at is never made nor written."""
    run = night(tmp_path / "run", second=False)
    kept = tmp_path / "kept"
    kept.write_text("host secret\n")
    formats = ["json", "junit", "markdown", "html"]
    for ext in ("json", "xml", "md", "html"):
        (run / f"report.{ext}").symlink_to(kept if ext == "json" else tmp_path / f"made.{ext}")
    written = write_reports(run, formats)
    output = run / "out.json"
    output.symlink_to(kept)
    assert harness_cli("report", run, "--format", "json", "-o", output).code == 0
    for path in [*written, output]:
        assert path.is_file() and not path.is_symlink(), path
    assert kept.read_text() == "host secret\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("made")] == []
