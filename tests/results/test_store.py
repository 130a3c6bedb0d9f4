"""The results folder's one owner: the typed manifest round-trips, older folders
still read, and every verb says the same thing about a folder it cannot read."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness.errors import ResultsError
from harness.results.store.layout import holds_run
from harness.results.store.manifest import HostEntry, Manifest, merged_manifest
from harness.results.store.read import load_run, read_manifest
from harness.results.store.write import ResultsStore
from harness.staging import HostState, RuntimeStatus
from tests.conftest import harness_cli
from tests.results.test_readers_fuzz import CELL, MANIFEST, VERDICT


def _host_entry() -> dict[str, Any]:
    """A host entry as `Runner._run_host` builds it, key for key: how the host was
    reached, what each fixture recorded, then `HostState.manifest()` (values shortened)."""
    state = HostState(
        workdir="/root/.cache/harness",
        kernel_release="6.1.0",
        machine="x86_64",
        probe_path="/root/.cache/harness/probe/" + "1" * 64,
        probe_uploaded=False,
        probe_sha256="1" * 64,
        arch="x86_64",
        runtimes={
            "host": RuntimeStatus(available=True),
            "runsc": RuntimeStatus(
                available=True,
                version="runsc version release-20260824.0",
                build={
                    "release": "latest",
                    "channel": "release",
                    "version": "20260824.0",
                    "arch": "x86_64",
                    "sha512": "2" * 128,
                    "source": "https://storage.googleapis.com/gvisor/runsc",
                    "runsc_sha256": "3" * 64,
                    "path": "/root/.cache/harness/runsc-bin/" + "3" * 64 + "/runsc",
                },
            ),
            "microvm": RuntimeStatus(
                available=True, version="QEMU 7.2", fingerprint={"vmm": "qemu", "accel": "tcg"}
            ),
            "ghost": RuntimeStatus(available=False, reason="runsc: not found on the host"),
        },
    )
    return {
        "transport": "ssh",
        "address": "ci-1.lab.example",
        "port": 22,
        "user": "root",
        "ssh": {"server_version": "SSH-2.0-OpenSSH_9.2", "host_key": "ssh-ed25519"},
        "cleaned_runs": ["deadbeef"],
        "canary": {
            "mode": "netns",
            "address": "10.251.0.2",
            "address6": "fd5e:7a1c:9b3d::2",
            "high_port": 41234,
            "netns": "harness-abcd1234-0",
            "subnet": {
                "subnet": "0",
                "addr4": "10.251.0.2",
                "addr6": "fd5e:7a1c:9b3d:0::2",
                "host4": "10.251.0.1",
                "host6": "fd5e:7a1c:9b3d:0::1",
            },
            "error": None,
        },
        "helpers": {"folder": "/var/tmp/harness-helpers-0/h-1", "setuid": True, "fcap": True},
        "supervisors": {
            "bwrap-supervised": {
                "kind": "reference",
                "sha256": "4" * 64,
                "netns": "harness-sup-abcd1234-0",
                "records": "/root/.cache/harness/supervisor/records.jsonl",
                "fault": None,
                "error": None,
            }
        },
        **state.manifest(),
    }


# What `Runner.manifest()` writes, key for key (values shortened).
WRITTEN: dict[str, Any] = {
    "harness_version": "0.1.0",
    "run_id": "abcd1234",
    "matrix": {"name": "m", "path": "/m.toml", "sha256": "0" * 64},
    "started": "2026-01-01T00:00:00.000Z",
    "ended": None,
    "interrupted": False,
    "settings": {"concurrency": 4},
    "canary": {"tcp_port": 1},
    "probe": {"sha256": "1" * 64, "compiler": "musl-gcc"},
    "probes": {"x86_64": {"sha256": "1" * 64}},
    "runtimes": {"runsc": {"kind": "runsc", "flags": ["--network=none"]}},
    "scenarios": ["egress-confinement"],
    "cells_planned": 2,
    "hosts": {
        "h": {"kernel_release": "6.1", "runtimes": {"runsc": {"version": "1"}}},
        "ci-1": _host_entry(),
        "local": {"transport": "local", "address": "localhost", "port": None, "user": None},
        "dead": {
            "transport": "ssh",
            "address": "10.0.0.9",
            "port": 22,
            "user": "root",
            "error": "connection refused",
        },
    },
    "selection": {"hosts": [], "runtimes": [], "scenarios": [], "shard": None, "index": None},
    "exit_code": None,
}


def _write(folder: Path, manifest: dict[str, Any]) -> Path:
    store = ResultsStore(folder)
    store.open()
    try:
        store.write_manifest(manifest)
    finally:
        store.close()
    return folder


def test_the_manifest_round_trips(tmp_path: Path) -> None:
    """What is written is read back typed, and written again unchanged, key order included."""
    folder = _write(tmp_path / "run", WRITTEN)
    on_disk = (folder / "manifest.json").read_text()
    assert json.loads(on_disk) == WRITTEN
    assert list(json.loads(on_disk)) == list(WRITTEN)
    manifest = read_manifest(folder)
    assert manifest.matrix is not None and manifest.matrix.sha256 == "0" * 64
    assert manifest.selection is not None and manifest.selection.hosts == []
    assert manifest.host("h").kernel_release == "6.1" and manifest.host("x").to_json() == {}
    assert manifest.to_json() == WRITTEN
    again = _write(tmp_path / "again", manifest.to_json())
    assert (again / "manifest.json").read_text() == on_disk


def test_an_older_folder_still_reads(tmp_path: Path) -> None:
    """A manifest without the keys a newer harness writes (harness_version, probes,
    selection, exit_code...) reads; what it lacks is None, never invented on rewrite."""
    older = {k: v for k, v in WRITTEN.items() if k in ("run_id", "matrix", "started", "hosts")}
    folder = _write(tmp_path / "run", older)
    (folder / "verdicts.jsonl").write_text(json.dumps(VERDICT) + "\n")
    manifest = read_manifest(folder)
    assert manifest.harness_version is None and manifest.selection is None
    assert manifest.exit_code is None and manifest.shard == ""
    assert manifest.to_json() == older
    run = load_run(folder)
    assert (run.run_id, run.matrix_name, run.ended, run.exit_code) == ("abcd1234", "m", None, None)
    assert run.kernel("h") == "6.1" and run.runtime_version("h", "runsc") == "1"


def test_host_entries_are_typed_and_written_as_the_runner_wrote_them(tmp_path: Path) -> None:
    """Each host entry reads typed (runtimes, their builds, the fixtures' parts); keys
    written null stay null, keys never written stay absent, in the runner's order."""
    folder = _write(tmp_path / "run", WRITTEN)
    written = json.loads((folder / "manifest.json").read_text())["hosts"]
    for name, entry in WRITTEN["hosts"].items():
        assert list(written[name]) == list(entry)
        for key, value in entry.items():
            if isinstance(value, dict):
                assert list(written[name][key]) == list(value)
    host = read_manifest(folder).host("ci-1")
    assert isinstance(host, HostEntry)
    assert host.ssh is not None and host.ssh.host_key == "ssh-ed25519"
    assert host.canary is not None and host.canary.high_port == 41234
    assert host.canary.error is None and "error" in host.canary.to_json()
    assert host.helpers is not None and host.helpers.setuid is True
    assert host.supervisors is not None and host.supervisors["bwrap-supervised"].fault is None
    runtimes = host.runtimes or {}
    build = runtimes["runsc"].build
    assert build is not None and build.sha512 == "2" * 128
    assert "build" not in runtimes["host"].to_json()
    assert runtimes["microvm"].fingerprint == {"vmm": "qemu", "accel": "tcg"}
    assert runtimes["ghost"].available is False and runtimes["ghost"].version is None
    run = load_run(_with_verdicts(folder))
    assert run.runtime_build("ci-1", "runsc") == f"release/20260824.0 (sha512 {'2' * 16})"
    assert run.runtime_build("ci-1", "microvm") is None
    assert run.kernel("ci-1") == "6.1.0" and run.kernel("dead") is None


def test_a_host_entry_that_is_not_one_is_refused(tmp_path: Path) -> None:
    """A host entry of the wrong shape is the folder's one-line error, naming the key."""
    bad = {**WRITTEN, "hosts": {"h": {"runtimes": {"runsc": {"available": "maybe"}}}}}
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text(json.dumps(bad))
    with pytest.raises(ResultsError, match=r"hosts\.h\.runtimes\.runsc\.available"):
        read_manifest(tmp_path / "run")


def _with_verdicts(folder: Path) -> Path:
    (folder / "verdicts.jsonl").write_text(json.dumps(VERDICT) + "\n")
    return folder


def test_a_newer_folder_keeps_its_unknown_keys(tmp_path: Path) -> None:
    """Keys this harness does not know are kept as read, on the manifest and its parts."""
    newer = {
        **WRITTEN,
        "future": {"a": 1},
        "matrix": {**WRITTEN["matrix"], "extra": True},
        "hosts": {"h": {"kernel_release": "6.1", "gpu": "none", "canary": {"port": 1}}},
    }
    manifest = read_manifest(_write(tmp_path / "run", newer))
    assert manifest.to_json()["future"] == {"a": 1}
    assert manifest.to_json() == newer


def test_a_resumed_and_a_merged_manifest_are_built_from_the_parts(tmp_path: Path) -> None:
    """Merging keeps the first shard's identity and spans every shard's times and hosts."""
    a = Manifest.model_validate({**WRITTEN, "selection": {"shard": "1/2"}, "ended": "2026-01-02"})
    b = Manifest.model_validate(
        {
            **WRITTEN,
            "run_id": "b",
            "started": "2025-12-31",
            "ended": "2026-01-03",
            "hosts": {"g": {}},
            "selection": {"shard": "2/2"},
        }
    )
    merged = merged_manifest(
        [(tmp_path / "a", a), (tmp_path / "b", b)], exit_code=1, missing_shards=[]
    )
    assert (merged.run_id, merged.started, merged.ended) == ("abcd1234", "2025-12-31", "2026-01-03")
    assert list(merged.hosts or {}) == [*WRITTEN["hosts"], "g"] and merged.exit_code == 1
    assert merged.merged_from == [
        {"folder": str(tmp_path / "a"), "run_id": "abcd1234", "shard": "1/2"},
        {"folder": str(tmp_path / "b"), "run_id": "b", "shard": "2/2"},
    ]


def _broken(folder: Path, how: str) -> str:
    """Make `folder` a results folder broken one way; returns what the error must say."""
    if how == "missing":
        return "no such directory"
    folder.mkdir()
    manifest, cells, verdicts = json.dumps(MANIFEST), json.dumps(CELL), json.dumps(VERDICT)
    why = {
        "no manifest": "no manifest.json",
        "manifest not JSON": "manifest.json: not JSON: Expecting value",
        "manifest a list": "manifest.json: not a JSON object",
        "manifest key": "manifest.json: started: Input should be a valid string (got 5)",
        "cells line": "cells.jsonl line 1: not JSON: Expecting property name",
        "cells key": "cells.jsonl line 1: host: Input should be a valid string)",
        "verdicts line": "verdicts.jsonl line 1: not a JSON object",
    }[how]
    if how == "manifest not JSON":
        manifest = "nope"
    elif how == "manifest a list":
        manifest = "[]"
    elif how == "manifest key":
        manifest = json.dumps({**MANIFEST, "started": 5})
    elif how == "cells line":
        cells = "{torn\n" + cells
    elif how == "cells key":
        cells = json.dumps({**CELL, "host": ["x"]})
    elif how == "verdicts line":
        verdicts = "[1]\n" + verdicts
    if how != "no manifest":
        (folder / "manifest.json").write_text(manifest)
    (folder / "cells.jsonl").write_text(cells + "\n")
    (folder / "verdicts.jsonl").write_text(verdicts + "\n")
    return why


BROKEN = [
    "missing",
    "no manifest",
    "manifest not JSON",
    "manifest a list",
    "manifest key",
    "cells line",
    "cells key",
    "verdicts line",
]
VERBS = {
    "report": lambda d, out: ["report", d, "--format", "json"],
    "diff": lambda d, out: ["diff", d, d],
    "merge": lambda d, out: ["merge", d, "--out", out],
    "evidence": lambda d, out: ["evidence", d, "--stdout"],
    "resume": lambda d, out: ["run", "--resume", d],
}


@pytest.mark.parametrize("how", BROKEN)
def test_every_verb_says_the_same_about_a_broken_folder(tmp_path: Path, how: str) -> None:
    """report, diff, merge, evidence and run --resume read through one owner: on the
    same broken folder each exits 2 with the same one line, naming the folder, the
    file, the line and the key."""
    folder = tmp_path / "run"
    why = _broken(folder, how)
    expected = f"harness: error: {folder}: not a results folder ({why}"
    said = {}
    for verb, argv in VERBS.items():
        result = harness_cli(*argv(folder, tmp_path / "merged"))
        assert result.code == 2, (verb, result.stderr)
        said[verb] = result.stderr.strip()
    assert len(set(said.values())) == 1, said
    line = said["report"]
    assert "\n" not in line, line
    assert line.startswith(expected), line
    assert not (tmp_path / "merged").exists()


def test_a_folder_that_is_a_file_is_not_a_results_folder(tmp_path: Path) -> None:
    """A plain file where a folder is expected: the same error type, saying so."""
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(ResultsError, match=r"file: not a results folder \(not a directory\)$"):
        read_manifest(path)
    assert not holds_run(path) and not holds_run(tmp_path)


def test_only_the_results_store_names_the_folders_files() -> None:
    """No harness module outside `harness/results/store/` spells manifest.json,
    cells.jsonl or verdicts.jsonl as a value: only the store opens them."""
    import ast

    import harness
    from harness.results.store import layout

    root = Path(harness.__file__).parent
    names = {layout.MANIFEST, layout.CELLS, layout.VERDICTS}
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.parent == root / "results" / "store":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {node.value}")
    assert found == []


@pytest.mark.parametrize("name", [".lock", "cells.jsonl", "verdicts.jsonl"])
@pytest.mark.parametrize("resume", [False, True])
def test_a_planted_symlink_in_the_folder_is_never_followed(
    tmp_path: Path, name: str, resume: bool
) -> None:
    """A dangling symlink planted in an output folder (or one to a file elsewhere) is
    refused, its target neither made nor written: harness runs as root."""
    out = tmp_path / "out"
    out.mkdir()
    if resume:
        for other in ("cells.jsonl", "verdicts.jsonl"):
            (out / other).write_text("")
        (out / name).unlink(missing_ok=True)
    target = tmp_path / "elsewhere"
    (out / name).symlink_to(target)
    with pytest.raises(ResultsError) as caught:
        ResultsStore(out).open(resume=resume)
    assert not target.exists()
    if name == ".lock":
        assert "a symlink; harness writes no file through one" in str(caught.value)
    kept = tmp_path / "kept"
    kept.write_text("host secret\n")
    (out / name).unlink()
    (out / name).symlink_to(kept)
    with pytest.raises(ResultsError):
        ResultsStore(out).open(resume=resume)
    assert kept.read_text() == "host secret\n"


def test_a_fifo_planted_as_the_lock_is_refused_at_once(tmp_path: Path) -> None:
    """A named pipe where the lock goes would hold the open forever: refused."""
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / ".lock")
    with pytest.raises(ResultsError, match="not a regular file"):
        ResultsStore(out).open()
