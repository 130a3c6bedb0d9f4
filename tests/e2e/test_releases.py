"""Whole runs of `harness run` with runsc runtimes that name a release: resolved in a
mirror folder given with --index, verified by sha512, cached by content, installed
on the host by sha256, named in the manifest, and shown by `harness diff`.

The one fake is at the outermost boundary: the mirror folder stands in for gVisor's
bucket, and its "releases" are copies of this machine's real Debian runsc binary,
published with their real sha512. Everything inside (resolution, download,
verification, staging, the sandbox run) is the real code and the real runsc.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from harness.cache import PROBES
from tests.conftest import harness_cli
from tests.e2e.helpers import verdicts_of
from tests.lab import require_tool
from tests.probe.copies import seed_probe_cache

ARCH = "x86_64"
SCENARIOS = '["filesystem-confinement", "privilege-floor", "mechanisms"]'
ENFORCED = '{ filesystem_confinement = "enforced", privilege_floor = "enforced" }'


def publish(mirror: Path, channel: str, version: str, runsc: Path, *, sha512: str = "") -> str:
    """Put a build into the bucket layout; returns the sha512 its checksum file states."""
    folder = mirror / "releases" / channel / version / ARCH
    folder.mkdir(parents=True)
    shutil.copyfile(runsc, folder / "runsc")
    digest = sha512 or hashlib.sha512((folder / "runsc").read_bytes()).hexdigest()
    (folder / "runsc.sha512").write_text(f"{digest}  runsc\n")
    return digest


def matrix(tmp: Path, runtime: str) -> Path:
    (tmp / "inv.toml").write_text('[hosts.localhost]\ntransport = "local"\n')
    path = tmp / "m.toml"
    path.write_text(
        f'name = "releases"\ninventory = "inv.toml"\nscenarios = {SCENARIOS}\n'
        "[settings]\ntimeout = 60\n"
        '[runtimes.host]\nkind = "host"\n'
        f"{runtime}\n"
        f'flags = ["--network=none"]\nexpect = {ENFORCED}\n'
    )
    return path


@pytest.fixture
def runsc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real runsc, and a private cache (probe and builds) for this test: its
    builds start empty, its probe is the session's build, copied in (a compile of its
    own costs seconds)."""
    path = Path(require_tool("runsc")).resolve()
    seed_probe_cache(tmp_path / "cache" / "harness" / PROBES)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return path


def test_latest_release_runs_from_a_mirror_and_the_manifest_names_it(
    runsc: Path, tmp_path: Path
) -> None:
    """release = "latest" resolves to the newest version in the --index mirror; the run
    judges it, and the manifest records its version, sha512 and source; a newer
    release shows in `harness diff`, and one build is downloaded once per content."""
    mirror = tmp_path / "mirror"
    publish(mirror, "release", "20251201.0", runsc)
    digest = publish(mirror, "release", "20260101.0", runsc)
    publish(mirror, "nightly", "2026-01-02", runsc)  # another channel: never "latest"
    (mirror / "releases" / "release" / "latest").mkdir()  # not a version
    m = matrix(tmp_path, '[runtimes.runsc-latest]\nkind = "runsc"\nrelease = "latest"')

    first = harness_cli("run", m, "--index", mirror, "--out", tmp_path / "a", "--no-progress")
    assert first.code == 0, first.stdout + first.stderr
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    build = manifest["hosts"]["localhost"]["runtimes"]["runsc-latest"]["build"]
    assert (build["version"], build["channel"], build["sha512"]) == (
        "20260101.0",
        "release",
        digest,
    )
    assert build["source"] == str(mirror / "releases/release/20260101.0/x86_64/runsc")
    runsc_sha256 = hashlib.sha256(runsc.read_bytes()).hexdigest()
    assert build["path"].endswith(f"/runsc-bin/{runsc_sha256}/runsc")
    resolved = manifest["releases"]["resolved"]["release/latest"]
    assert resolved["version"] == "20260101.0" and resolved["builds"][ARCH]["downloaded"]
    verdicts = verdicts_of(tmp_path / "a")
    assert verdicts[("localhost", "runsc-latest", "filesystem_confinement")]["verdict"] == "pass"
    assert verdicts[("localhost", "runsc-latest", "landlock_abi")]["observed"] == "unavailable"

    publish(mirror, "release", "20260201.0", runsc)  # a new release, same bytes
    second = harness_cli("run", m, "--index", mirror, "--out", tmp_path / "b", "--no-progress")
    assert second.code == 0, second.stdout + second.stderr
    again = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert again["releases"]["resolved"]["release/latest"]["version"] == "20260201.0"
    # A new version's own artifact is read and verified once, even when its bytes are
    # a cached build's (issue 30: a cache hit is valid only for the version's own
    # verified digest); it is stored once, under that digest.
    assert again["releases"]["resolved"]["release/latest"]["builds"][ARCH]["downloaded"]
    assert [p.name for p in (tmp_path / "cache" / "harness" / "runsc" / "sha512").iterdir()] == [
        digest
    ]

    diff = harness_cli("diff", tmp_path / "a", tmp_path / "b", "--format", "json")
    builds = [c for c in json.loads(diff.stdout)["changes"] if c["kind"] == "build"]
    assert builds == [
        {
            "kind": "build",
            "host": "localhost",
            "runtime": "runsc-latest",
            "subject": None,
            "check": None,
            "before": f"release/20260101.0 (sha512 {digest[:16]})",
            "after": f"release/20260201.0 (sha512 {digest[:16]})",
            "side": "config",  # a build changed: the configuration's, not the sandbox's
            "verdicts": 0,
        }
    ]


def test_a_build_whose_checksum_does_not_match_is_never_run(runsc: Path, tmp_path: Path) -> None:
    """A pinned release whose sha512 is wrong: the runtime is unavailable, its verdicts
    inconclusive (exit 3), and nothing of it is cached or staged."""
    mirror = tmp_path / "mirror"
    publish(mirror, "release", "20260101.0", runsc, sha512="0" * 128)
    m = matrix(tmp_path, '[runtimes.runsc-pinned]\nkind = "runsc"\nrelease = "20260101.0"')
    (m.parent / "m.toml").write_text(
        m.read_text().replace("[settings]\n", f'[settings]\nindex = "{mirror}"\n')
    )
    done = harness_cli("run", m, "--out", tmp_path / "out", "--no-progress")
    assert done.code == 3, done.stdout + done.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    status = manifest["hosts"]["localhost"]["runtimes"]["runsc-pinned"]
    assert not status["available"] and "checksum mismatch" in status["reason"]
    verdicts = verdicts_of(tmp_path / "out")
    assert verdicts[("localhost", "runsc-pinned", "filesystem_confinement")]["verdict"] == (
        "inconclusive"
    )
    cached = tmp_path / "cache" / "harness" / "runsc" / "sha512"
    assert not cached.exists() or not any((p / "runsc").exists() for p in cached.iterdir())


def test_a_bad_index_is_bad_input(tmp_path: Path) -> None:
    """--index that is neither a URL nor a folder: exit 2 with one line naming it."""
    m = matrix(tmp_path, '[runtimes.runsc-latest]\nkind = "runsc"\nrelease = "latest"')
    done = harness_cli("run", m, "--index", tmp_path / "nowhere", "--out", tmp_path / "o")
    assert done.code == 2
    assert "--index" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_resumed_run_keeps_the_build_its_first_part_resolved(runsc: Path, tmp_path: Path) -> None:
    """`--resume` after a new release appeared: the rest of the run still gets the
    version "latest" meant when the run started, so one run never mixes builds."""
    mirror = tmp_path / "mirror"
    publish(mirror, "release", "20260101.0", runsc)
    m = matrix(tmp_path, '[runtimes.runsc-latest]\nkind = "runsc"\nrelease = "latest"')
    out = tmp_path / "out"
    first = harness_cli("run", m, "--index", mirror, "--out", out, "--no-progress")
    assert first.code == 0, first.stdout + first.stderr
    for name in ("cells.jsonl", "verdicts.jsonl"):  # as if interrupted before that cell
        rows = (out / name).read_text().splitlines()
        kept = [r for r in rows if json.loads(r)["runtime"] != "runsc-latest"]
        assert len(kept) < len(rows)
        (out / name).write_text("".join(f"{r}\n" for r in kept))
    publish(mirror, "release", "20260201.0", runsc)
    resumed = harness_cli("run", "--resume", out, "--no-progress")
    assert resumed.code == 0, resumed.stdout + resumed.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["releases"]["resolved"]["release/latest"]["version"] == "20260101.0"
    build = manifest["hosts"]["localhost"]["runtimes"]["runsc-latest"]["build"]
    assert build["version"] == "20260101.0"
    assert ("localhost", "runsc-latest", "filesystem_confinement") in verdicts_of(out)
