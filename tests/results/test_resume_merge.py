"""What a resumed run keeps, and what merging shards gives (folders written by the store)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.errors import ResultsError, UsageError
from harness.judge.verdicts import exit_code
from harness.results import CellStatus, ResultsStore, Verdict, VerdictRecord, read_jsonl
from harness.results.merge import merge_runs
from harness.results.resume import read_resumable
from tests.results.cells import record


def _verdict(host: str, runtime: str, subject: str, verdict: Verdict) -> VerdictRecord:
    return VerdictRecord(
        host=host,
        runtime=runtime,
        property=subject,
        expected="enforced",
        observed="violated",
        verdict=verdict,
        reason=f"{runtime} said so",
    )


def _folder(
    path: Path,
    cells: list[tuple[str, str, CellStatus, bool]],
    verdicts: list[VerdictRecord],
    manifest: dict[str, Any] | None = None,
) -> Path:
    """A results folder as a run leaves it: cells (host, runtime, status, control) and verdicts."""
    store = ResultsStore(path)
    store.open()
    try:
        for host, runtime, status, control in cells:
            store.add_cell(
                record(["mechanisms"], host=host, runtime=runtime, status=status, control=control)
            )
        store.add_verdicts(verdicts)
        store.write_manifest(manifest or {"matrix": {"sha256": "m"}, "interrupted": True})
    finally:
        store.close()
    return path


DONE = CellStatus.COMPLETE


def test_finished_cells_and_their_verdicts_survive_a_resume(tmp_path: Path) -> None:
    """A judged cell is finished and keeps its verdicts, a regression included (exit 1)."""
    folder = _folder(
        tmp_path / "run",
        [
            ("h", "runsc", DONE, False),
            ("h", "bwrap", DONE, False),
            ("h", "slow", CellStatus.CANCELLED, False),
        ],
        [
            _verdict("h", "runsc", "egress_confinement", Verdict.REGRESSION),
            _verdict("h", "runsc", "privilege_floor", Verdict.PASS),
            _verdict("h", "bwrap", "egress_confinement", Verdict.PASS),
        ],
    )
    manifest, done, prior = read_resumable(folder)
    assert manifest.to_json() == {"matrix": {"sha256": "m"}, "interrupted": True}
    assert done == {("h", "runsc"), ("h", "bwrap")}
    assert [(v.runtime, v.subject(), v.verdict) for v in prior] == [
        ("runsc", "egress_confinement", Verdict.REGRESSION),
        ("runsc", "privilege_floor", Verdict.PASS),
        ("bwrap", "egress_confinement", Verdict.PASS),
    ]
    assert prior[0].reason == "runsc said so"
    assert exit_code(prior) == 1


@pytest.mark.parametrize(
    ("cells", "verdicts"),
    [
        # cancelled: run again, and any verdict it has is dropped
        ([("h", "r", CellStatus.CANCELLED, False)], [("h", "r", Verdict.PASS)]),
        # a control-only cell never counts: it is rerun as needed
        ([("h", "host", DONE, True)], [("h", "host", Verdict.PASS)]),
        # recorded but never judged (verdicts held for reruns, or a failed write)
        ([("h", "r", DONE, False)], []),
        # judged but its cell record is missing
        ([], [("h", "r", Verdict.REGRESSION)]),
        # same runtime name on another host
        ([("h", "r", DONE, False)], [("g", "r", Verdict.PASS)]),
        ([("h", "r", DONE, False)], [("h", "s", Verdict.PASS)]),
    ],
)
def test_unfinished_cells_run_again(
    tmp_path: Path,
    cells: list[tuple[str, str, CellStatus, bool]],
    verdicts: list[tuple[str, str, Verdict]],
) -> None:
    """Only a cell that is both recorded (not cancelled, not a control) and judged is finished."""
    folder = _folder(tmp_path / "run", cells, [_verdict(h, r, "p", v) for h, r, v in verdicts])
    _, done, prior = read_resumable(folder)
    assert done == set() and prior == []


def test_failed_cells_are_finished(tmp_path: Path) -> None:
    """A cell that ended in error or timeout was judged (inconclusive): it is not rerun."""
    folder = _folder(
        tmp_path / "run",
        [("h", "a", CellStatus.ERROR, False), ("h", "b", CellStatus.TIMEOUT, False)],
        [
            _verdict("h", "a", "p", Verdict.INCONCLUSIVE),
            _verdict("h", "b", "p", Verdict.INCONCLUSIVE),
        ],
    )
    _, done, prior = read_resumable(folder)
    assert done == {("h", "a"), ("h", "b")}
    assert exit_code(prior) == 3


def test_a_torn_last_line_is_not_a_verdict(tmp_path: Path) -> None:
    """An interrupted write leaves half a line: it is ignored, the rest kept."""
    folder = _folder(
        tmp_path / "run", [("h", "r", DONE, False)], [_verdict("h", "r", "p", Verdict.PASS)]
    )
    with open(folder / "verdicts.jsonl", "a") as fh:
        fh.write('{"host":"h","runtime":"r","verd')
    _, done, prior = read_resumable(folder)
    assert done == {("h", "r")} and len(prior) == 1


def test_a_folder_without_verdicts_resumes_everything(tmp_path: Path) -> None:
    """No verdicts.jsonl: nothing is finished."""
    folder = _folder(tmp_path / "run", [("h", "r", DONE, False)], [])
    (folder / "verdicts.jsonl").unlink()
    assert read_resumable(folder)[1:] == (set(), [])


@pytest.mark.parametrize("broken", ["no manifest", "bad manifest", "no cells"])
def test_what_cannot_be_resumed(tmp_path: Path, broken: str) -> None:
    """A folder without a readable manifest or cells.jsonl is bad input (exit 2)."""
    folder = _folder(tmp_path / "run", [("h", "r", DONE, False)], [])
    if broken == "no manifest":
        (folder / "manifest.json").unlink()
    elif broken == "bad manifest":
        (folder / "manifest.json").write_text("{")
    else:
        (folder / "cells.jsonl").unlink()
    with pytest.raises(ResultsError, match=f"^{folder}: not a results folder"):
        read_resumable(folder)


def _shard(
    path: Path,
    shard: str,
    cells: list[tuple[str, str, CellStatus, bool]],
    verdicts: list[VerdictRecord],
    **manifest: Any,
) -> Path:
    base = {
        "matrix": {"sha256": "m"},
        "selection": {"shard": shard},
        "run_id": f"run-{shard[0]}",
        "started": f"2026-01-0{shard[0]}T00:00:00Z",
        "ended": f"2026-01-0{shard[0]}T01:00:00Z",
        "interrupted": False,
        "hosts": {f"host{shard[0]}": {}},
        "runtimes": {f"rt{shard[0]}": {}},
    }
    return _folder(path, cells, verdicts, {**base, **manifest})


def test_merged_shards_are_one_run(tmp_path: Path) -> None:
    """Cells once each (a shard's own cell over a control copy), verdicts once per subject,
    the manifest's exit code from the merged verdicts, times and hosts combined."""
    fact = VerdictRecord(
        host="h",
        runtime="runsc",
        fact="landlock_abi",
        expected="unavailable",
        observed=7,
        verdict=Verdict.UNEXPECTED,
    )
    other = replace(fact, fact="seccomp_filter", verdict=Verdict.PASS)
    a = _shard(
        tmp_path / "a",
        "1/2",
        [("h", "host", DONE, True), ("h", "runsc", DONE, False)],
        [
            _verdict("h", "runsc", "egress_confinement", Verdict.REGRESSION),
            _verdict("h", "runsc", "privilege_floor", Verdict.PASS),
            fact,
            other,
        ],
    )
    b = _shard(
        tmp_path / "b",
        "2/2",
        [("h", "host", DONE, False), ("h", "bwrap", DONE, False)],
        [
            _verdict("h", "host", "egress_confinement", Verdict.PASS),
            _verdict("h", "bwrap", "egress_confinement", Verdict.PASS),
        ],
    )
    out = tmp_path / "m"
    merged = merge_runs([a, b], out)
    cells = read_jsonl(out / "cells.jsonl")
    assert sorted((c["runtime"], c["control"]) for c in cells) == [
        ("bwrap", False),
        ("host", False),
        ("runsc", False),
    ]
    verdicts = read_jsonl(out / "verdicts.jsonl")
    assert sorted(
        (v["runtime"], v.get("property") or v["fact"], v["verdict"]) for v in verdicts
    ) == [
        ("bwrap", "egress_confinement", "pass"),
        ("host", "egress_confinement", "pass"),
        ("runsc", "egress_confinement", "regression"),
        ("runsc", "landlock_abi", "unexpected"),
        ("runsc", "privilege_floor", "pass"),
        ("runsc", "seccomp_filter", "pass"),
    ]
    on_disk = json.loads((out / "manifest.json").read_text())
    assert on_disk == merged
    assert merged["exit_code"] == 1
    assert merged["interrupted"] is False
    assert (merged["run_id"], merged["selection"]) == ("run-1", {"shard": "1/2"})  # the first's
    assert (merged["started"], merged["ended"]) == ("2026-01-01T00:00:00Z", "2026-01-02T01:00:00Z")
    assert merged["hosts"] == {"host1": {}, "host2": {}}
    assert merged["runtimes"] == {"rt1": {}, "rt2": {}}
    assert merged["merged_from"] == [
        {"folder": str(a), "run_id": "run-1", "shard": "1/2"},
        {"folder": str(b), "run_id": "run-2", "shard": "2/2"},
    ]


def test_the_control_copy_never_replaces_a_shards_own_cell(tmp_path: Path) -> None:
    """Whichever order the folders come in, the host runtime's own cell is kept."""
    a = _shard(tmp_path / "a", "1/2", [("h", "host", DONE, False)], [])
    b = _shard(tmp_path / "b", "2/2", [("h", "host", CellStatus.ERROR, True)], [])
    merge_runs([a, b], tmp_path / "m")
    [cell] = read_jsonl(tmp_path / "m" / "cells.jsonl")
    assert (cell["status"], cell["control"]) == ("complete", False)


@pytest.mark.parametrize(
    ("statuses", "kept"),
    [
        ([CellStatus.CANCELLED, DONE], "complete"),  # interrupted, then resumed
        ([DONE, CellStatus.CANCELLED], "complete"),  # never the cancelled one
        ([CellStatus.ERROR, DONE], "complete"),  # a later attempt is the final one
        ([DONE, CellStatus.TIMEOUT], "timeout"),
    ],
)
def test_merge_keeps_a_resumed_cells_final_record(
    tmp_path: Path, statuses: list[CellStatus], kept: str
) -> None:
    """Of one cell's records in a shard (cancelled by an interruption, then the
    resumed one), merge keeps the final record, never the cancelled one."""
    a = _shard(tmp_path / "a", "1/2", [("h", "r", s, False) for s in statuses], [])
    b = _shard(tmp_path / "b", "2/2", [("h", "r", CellStatus.ERROR, True)], [])
    merge_runs([a, b], tmp_path / "m")
    [cell] = read_jsonl(tmp_path / "m" / "cells.jsonl")
    assert (cell["status"], cell["control"]) == (kept, False)


@pytest.mark.parametrize(
    ("verdicts", "interrupted", "code"),
    [
        ([Verdict.PASS, Verdict.SKIPPED], (False, False), 0),
        ([Verdict.PASS, Verdict.INCONCLUSIVE], (False, True), 3),
        ([Verdict.INCONCLUSIVE, Verdict.UNEXPECTED], (True, False), 1),
        ([Verdict.FLAKY, Verdict.PASS], (False, False), 1),
    ],
)
def test_merged_exit_code_and_interruption(
    tmp_path: Path, verdicts: list[Verdict], interrupted: tuple[bool, bool], code: int
) -> None:
    """The merged exit code follows the contract; one interrupted shard marks the merge."""
    a = _shard(
        tmp_path / "a",
        "1/2",
        [("h", "a", DONE, False)],
        [_verdict("h", "a", "p", verdicts[0])],
        interrupted=interrupted[0],
    )
    b = _shard(
        tmp_path / "b",
        "2/2",
        [("h", "b", DONE, False)],
        [_verdict("h", "b", "p", verdicts[1])],
        interrupted=interrupted[1],
    )
    merged = merge_runs([a, b], tmp_path / "m")
    assert merged["exit_code"] == code
    assert merged["interrupted"] is any(interrupted)


@pytest.mark.parametrize(
    ("shards", "message"),
    [
        (["1/2"], "missing 2/2, and its cells cannot be named"),
        (["2/2"], "missing 1/2"),
        (["1/3", "3/3"], "missing 2/3"),
        (["1/2", "1/2"], "repeated 1/2"),
        (["1/2", "3/2"], "out of range"),
        (["1/2", "2/2", "2/2"], "repeated 2/2"),
        (["1/2", "2/3"], "different splits"),
        (["1/2", ""], "every folder must come from"),
    ],
)
def test_a_missing_or_repeated_shard_is_refused(
    tmp_path: Path, shards: list[str], message: str
) -> None:
    """A merge that would look complete without being so is bad input."""
    folders = [
        _shard(tmp_path / str(i), s or "1/1", [], [], selection={"shard": s} if s else {})
        for i, s in enumerate(shards)
    ]
    with pytest.raises(UsageError, match=message):
        merge_runs(folders, tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_folders_of_different_matrices_are_refused(tmp_path: Path) -> None:
    """Shards of two matrices never merge."""
    a = _shard(tmp_path / "a", "1/2", [], [])
    b = _shard(tmp_path / "b", "2/2", [], [], matrix={"sha256": "other"})
    with pytest.raises(UsageError, match="different matrices"):
        merge_runs([a, b], tmp_path / "m")


@pytest.mark.parametrize("manifest", [None, "[]", "{"])
def test_a_folder_that_is_not_a_run_is_refused(tmp_path: Path, manifest: str | None) -> None:
    """No manifest, or one that is not an object: bad input."""
    a = _shard(tmp_path / "a", "1/1", [], [])
    if manifest is None:
        (a / "manifest.json").unlink()
    else:
        (a / "manifest.json").write_text(manifest)
    with pytest.raises(ResultsError, match=r"not a results folder .*manifest"):
        merge_runs([a], tmp_path / "m")


def test_a_shard_without_verdicts_still_merges(tmp_path: Path) -> None:
    """A shard that judged nothing yet (no verdicts.jsonl) merges; its cells are kept."""
    a = _shard(tmp_path / "a", "1/2", [("h", "r", DONE, False)], [])
    b = _shard(tmp_path / "b", "2/2", [("h", "s", CellStatus.CANCELLED, False)], [])
    (b / "verdicts.jsonl").unlink()
    merge_runs([a, b], tmp_path / "m")
    assert len(read_jsonl(tmp_path / "m" / "cells.jsonl")) == 2


# -- a missing shard: its cells are named from the matrix, cancelled, inconclusive --

SPLIT_MATRIX = """name = "split"
inventory = "inv.toml"
scenarios = ["egress-confinement", "mechanisms"]
[runtimes.host]
kind = "host"
[runtimes.a]
kind = "runsc"
[runtimes.b]
kind = "runsc"
[runtimes.c]
kind = "runsc"
"""


def _split(tmp_path: Path, *, selection: dict[str, Any] | None = None) -> tuple[Path, str]:
    """A real matrix file (never run): two hosts, three sandboxed runtimes and the host."""
    import hashlib

    (tmp_path / "inv.toml").write_text(
        '[hosts.h1]\ntransport = "local"\n[hosts.h2]\ntransport = "local"\n'
    )
    path = tmp_path / "split.toml"
    path.write_text(SPLIT_MATRIX)
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def _shard_of(tmp_path: Path, matrix: Path, sha: str, shard: str, **extra: Any) -> Path:
    return _shard(
        tmp_path / shard.replace("/", "-"),
        shard,
        [],
        [],
        matrix={"path": str(matrix), "sha256": sha},
        run_id="run-x",
        **extra,
    )


def test_a_missing_shards_cells_are_cancelled_and_inconclusive(tmp_path: Path) -> None:
    """Merging 1/3 and 3/3 of a split: shard 2's cells are present, cancelled with the
    reason, every property inconclusive, and the exit code at least 3."""
    matrix, sha = _split(tmp_path)
    folders = [_shard_of(tmp_path, matrix, sha, s, ended="2026-01-01T02:00:00Z")
               for s in ("1/3", "3/3")]  # fmt: skip
    merged = merge_runs(folders, tmp_path / "m")
    assert merged["missing_shards"] == ["2/3"]
    assert merged["exit_code"] == 3
    cells = {(c["host"], c["runtime"]): c for c in read_jsonl(tmp_path / "m" / "cells.jsonl")}
    # 8 worker cells, (host, runtime) ordered; shard 2 of 3 holds the 2nd and 5th and 8th.
    assert set(cells) == {("h1", "b"), ("h2", "a"), ("h2", "host")}
    for cell in cells.values():
        assert cell["status"] == "cancelled"
        assert cell["reason"] == "shard 2/3 is missing from the merge: this cell never ran"
        assert cell["run_id"] == "run-x" and cell["started"] == "2026-01-01T02:00:00Z"
        assert cell["scenarios"] == ["egress-confinement", "mechanisms"]
    rows = read_jsonl(tmp_path / "m" / "verdicts.jsonl")
    props = [r for r in rows if r.get("property")]
    assert {(r["host"], r["runtime"]) for r in props} == set(cells)
    assert all(r["verdict"] == "inconclusive" for r in props)
    assert all(r["property"] == "egress_confinement" for r in props)
    assert any(r.get("fact") == "landlock_abi" for r in rows)


def test_a_missing_shard_follows_the_recorded_selection(tmp_path: Path) -> None:
    """The missing cells come from the shards' own selection (hosts, runtimes, scenarios)."""
    matrix, sha = _split(tmp_path)
    chosen = {"hosts": ["h2"], "runtimes": ["a", "c"], "scenarios": ["mechanisms"]}
    folders = [_shard_of(tmp_path, matrix, sha, "1/2", selection={**chosen, "shard": "1/2"})]
    merged = merge_runs(folders, tmp_path / "m")
    assert merged["missing_shards"] == ["2/2"]
    cells = read_jsonl(tmp_path / "m" / "cells.jsonl")
    assert [(c["host"], c["runtime"], c["scenarios"]) for c in cells] == [
        ("h2", "c", ["mechanisms"])
    ]
    assert all(r.get("property") is None for r in read_jsonl(tmp_path / "m" / "verdicts.jsonl"))


def test_a_missing_shard_of_a_changed_or_lost_matrix_is_refused(tmp_path: Path) -> None:
    """Without the very matrix the shards ran, the missing cells cannot be named: exit 2."""
    matrix, sha = _split(tmp_path)
    changed = [_shard_of(tmp_path, matrix, "0" * 64, "1/2")]
    with pytest.raises(UsageError, match=r"missing 2/2, and .*split.toml changed since"):
        merge_runs(changed, tmp_path / "m1")
    lost = [_shard(tmp_path / "lost", "1/2", [], [], matrix={"sha256": sha})]
    with pytest.raises(UsageError, match="missing 2/2, and its cells cannot be named"):
        merge_runs(lost, tmp_path / "m2")
    assert not (tmp_path / "m1").exists() and not (tmp_path / "m2").exists()


def test_present_shards_keep_their_cells_next_to_the_missing_ones(tmp_path: Path) -> None:
    """A shard's own records are never replaced by a missing shard's placeholders."""
    matrix, sha = _split(tmp_path)
    mine = _shard(
        tmp_path / "one", "1/2", [("h1", "a", DONE, False)],
        [_verdict("h1", "a", "egress_confinement", Verdict.REGRESSION)],
        matrix={"path": str(matrix), "sha256": sha}, run_id="run-x",
    )  # fmt: skip
    merged = merge_runs([mine], tmp_path / "m")
    assert merged["exit_code"] == 1  # the regression stands; the missing cells add inconclusive
    cells = {(c["host"], c["runtime"]): c for c in read_jsonl(tmp_path / "m" / "cells.jsonl")}
    assert cells[("h1", "a")]["status"] == "complete"
    rows = {(r["host"], r["runtime"], r.get("property")): r
            for r in read_jsonl(tmp_path / "m" / "verdicts.jsonl")}  # fmt: skip
    assert rows[("h1", "a", "egress_confinement")]["verdict"] == "regression"
    assert rows[("h1", "b", "egress_confinement")]["verdict"] == "inconclusive"


def test_a_missing_shards_cells_take_the_start_time_when_no_end_was_recorded(
    tmp_path: Path,
) -> None:
    """An interrupted shard has no end time: the placeholders carry its start time."""
    matrix, sha = _split(tmp_path)
    folders = [_shard_of(tmp_path, matrix, sha, "1/2", ended=None)]
    merge_runs(folders, tmp_path / "m")
    cells = read_jsonl(tmp_path / "m" / "cells.jsonl")
    assert cells and all(c["started"] == "2026-01-01T00:00:00Z" for c in cells)


def test_merging_an_incomplete_set_warns_on_stdout(tmp_path: Path) -> None:
    """`harness merge` without shard 2/3 still merges (exit 0), and says on stdout which
    shard is missing and what that does to the merged run, not only "merged 2 folders"."""
    from tests.conftest import harness_cli

    matrix, sha = _split(tmp_path)
    folders = [_shard_of(tmp_path, matrix, sha, s) for s in ("1/3", "3/3")]
    done = harness_cli("merge", *folders, "--out", tmp_path / "m")
    assert done.code == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"merged 2 folders into {tmp_path / 'm'}")
    assert lines[1] == (
        "warning: shard 2/3 is missing: its 3 cell(s) are recorded cancelled and their"
        " verdicts inconclusive (merged exit code 3)"
    )
