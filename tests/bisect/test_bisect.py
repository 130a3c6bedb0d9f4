"""`harness bisect` end to end, through the CLI, with real runsc and a loopback bucket.

The "releases" are stand-ins, not real gVisor builds: each is a shell script that
execs this machine's runsc. From nightly index 9 on they behave like a regressed
build (host networking), so egress reaches the canary in its outside namespace.
Index 5 cannot start, index 6 has a wrong sha512, index 11 is flaky. Nothing
here contacts the real bucket.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, Lab, harness_cli
from tests.lab import require_tool
from tests.releases.bucket import ARCH, Bucket, Releases, stand_ins

MATRIX = """name = "bisect-test"
inventory = "{inventory}"
scenarios = ["egress-confinement"]

[settings]
timeout = 60

# Every step is one run: a stand-in's egress is seen at once (the nonce comes back),
# so a short settle window costs no verdict and spares each step 2.5 s.
[canary]
settle = 0.5

[runtimes.host]
kind = "host"

[runtimes.runsc]
kind = "runsc"
binary = "runsc"
flags = ["--network=none"]
facts = {{ landlock_abi = "unavailable" }}

[runtimes.bwrap]
kind = "command"
argv = ["bwrap", "--", "{{probe}}", "{{args}}"]
"""


@dataclass
class World:
    folder: Path
    releases: Releases
    bucket: Bucket
    matrix: Path
    cache: Path

    def version(self, i: int) -> str:
        return self.releases.versions[i]

    def bisect(self, *args: str | Path, out: str, matrix: Path | None = None) -> CliResult:
        return harness_cli(
            "bisect",
            matrix or self.matrix,
            "--runtime",
            "runsc",
            "--index",
            self.bucket.url,
            "--cache",
            self.cache,
            "--out",
            self.folder / out,
            *args,
        )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """Stand-in nightlies served on 127.0.0.1, a local-host matrix, one shared cache."""
    for tool in ("runsc", "ip"):
        require_tool(tool)
    folder = tmp_path_factory.mktemp("bisect")
    releases = stand_ins(folder / "mirror")
    (folder / "inventory.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{folder}/work"\n'
    )
    matrix = folder / "matrix.toml"
    matrix.write_text(MATRIX.format(inventory="inventory.toml"))
    bucket = Bucket(releases.root).start()
    try:
        yield World(folder, releases, bucket, matrix, folder / "cache")
    finally:
        bucket.stop()


@pytest.fixture(scope="module")
def main_run(world: World) -> tuple[CliResult, dict[str, Any]]:
    """The whole range, first to last nightly, judged on egress_confinement."""
    result = world.bisect(
        "--good",
        world.version(0),
        "--bad",
        f"nightly/{world.version(12)}",
        "--property",
        "egress_confinement",
        "--format",
        "json",
        out="main",
    )
    assert result.code == 0, result.stdout + result.stderr
    return result, json.loads(result.stdout)


def test_finds_the_first_bad_build_within_budget(
    world: World, main_run: tuple[CliResult, dict[str, Any]]
) -> None:
    """k is found, its predecessor is the last good, in at most ceil(log2 N) + 3 steps,
    both ends among them."""
    _, answer = main_run
    k = world.releases.first_bad
    assert (answer["status"], answer["first_bad"], answer["last_good"]) == (
        "found",
        world.version(k),
        world.version(k - 1),
    )
    assert len(answer["steps"]) <= math.ceil(math.log2(13)) + 3
    assert [s["version"] for s in answer["steps"][:2]] == [world.version(0), world.version(12)]
    verdicts = {s["version"]: s["verdict"] for s in answer["steps"]}
    assert verdicts[world.version(k)] == "bad" and verdicts[world.version(k - 1)] == "good"
    assert answer["change"][0] == "egress_confinement: enforced -> violated"
    raw_ip = next(line for line in answer["change"] if line.startswith("tcp-raw-ip: "))
    assert raw_ip.startswith("tcp-raw-ip: blocked (") and raw_ip.endswith(") -> escaped")
    assert answer["compare_url"].startswith("https://github.com/google/gvisor/compare/master@")


def test_broken_and_corrupt_builds_are_skipped(
    world: World, main_run: tuple[CliResult, dict[str, Any]]
) -> None:
    """The build that cannot start and the one with a wrong sha512 are skipped with
    their reasons; the corrupt one is never cached, installed or run."""
    _, answer = main_run
    skipped = {s["version"]: s["reason"] for s in answer["skipped"]}
    corrupt, broken = world.version(world.releases.corrupt), world.version(world.releases.broken)
    assert set(skipped) == {corrupt, broken}
    assert skipped[corrupt].startswith("checksum mismatch")
    assert skipped[broken].startswith("install failed: runsc --version exited 1")
    step = next(s for s in answer["steps"] if s["version"] == corrupt)
    folder = world.folder / "main" / step["folder"]
    assert sorted(p.name for p in folder.iterdir()) == ["step.json"]
    assert json.loads((folder / "step.json").read_text())["remote_path"] is None
    assert not (world.cache / "nightly" / corrupt / ARCH / "runsc").exists()


def test_every_step_is_recorded_as_a_run(
    world: World, main_run: tuple[CliResult, dict[str, Any]]
) -> None:
    """Each judged step is an ordinary results folder whose runsc cell ran the
    candidate, uploaded by sha256; bisect.json holds the same answer as stdout."""
    result, answer = main_run
    out = world.folder / "main"
    saved = json.loads((out / "bisect.json").read_text())
    assert (saved["first_bad"], saved["steps"]) == (answer["first_bad"], answer["steps"])
    for step in answer["steps"]:
        if step["verdict"] not in ("good", "bad"):
            continue
        folder = out / step["folder"]
        meta = json.loads((folder / "step.json").read_text())
        sha = meta["candidate"]["runsc_sha256"]
        assert meta["remote_path"] == f"{world.folder}/work/runsc-bin/{sha}/runsc"
        cells = [json.loads(line) for line in (folder / "cells.jsonl").read_text().splitlines()]
        assert {(c["runtime"], c["control"]) for c in cells} == {("host", True), ("runsc", False)}
        rows = [json.loads(line) for line in (folder / "verdicts.jsonl").read_text().splitlines()]
        assert [(r["runtime"], r["property"]) for r in rows] == [("runsc", "egress_confinement")]
        expected = "pass" if step["verdict"] == "good" else "regression"
        assert rows[0]["verdict"] == expected == step["verdicts"][0]
    assert f"step 1: nightly/{answer['steps'][0]['version']}" in result.stderr


def test_second_run_reuses_the_cache_over_ssh(
    world: World, main_run: tuple[CliResult, dict[str, Any]], lab: Lab
) -> None:
    """Bisecting again around the boundary, on an SSH host, downloads nothing: both
    builds come from the cache and are uploaded to the host by sha256."""
    _, answer = main_run
    lab.inventory(world.folder / "lab.toml")
    matrix = world.folder / "ssh-matrix.toml"
    matrix.write_text(
        MATRIX.format(inventory="lab.toml").replace(
            "inventory =", 'hosts = ["trusted", "stranger"]\ninventory ='
        )
    )
    before = world.bucket.downloads()
    result = world.bisect(
        "--good",
        answer["last_good"],
        "--bad",
        answer["first_bad"],
        "--property",
        "egress_confinement",
        "--host",
        "trusted",
        "--format",
        "json",
        out="again",
        matrix=matrix,
    )
    assert result.code == 0, result.stdout + result.stderr
    again = json.loads(result.stdout)
    assert (again["first_bad"], again["last_good"]) == (answer["first_bad"], answer["last_good"])
    assert [s["verdict"] for s in again["steps"]] == ["good", "bad"]
    assert all(s["downloaded"] is False and s["uploaded"] is True for s in again["steps"])
    # Only the small .sha512 files are read again (the cache is keyed by content).
    after = world.bucket.downloads()
    artifacts = {k: v for k, v in after.items() if not k.endswith(".sha512")}
    assert artifacts == {k: v for k, v in before.items() if not k.endswith(".sha512")}
    assert again["host"] == "trusted"


def test_an_end_that_cannot_be_judged_stops_with_exit_3(world: World) -> None:
    """--bad names the build with a wrong sha512: after trying both ends the bisection
    stops, exit 3, instead of searching between ends never shown to differ. (Asked
    with `--format text`, the human view's old name, which scripts may still pass.)"""
    broken, corrupt = world.releases.broken, world.releases.corrupt
    result = world.bisect(
        "--good",
        f"nightly/{world.version(broken - 1)}",
        "--bad",
        world.version(corrupt),
        "--property",
        "egress_confinement",
        "--format",
        "text",
        out="ambiguous",
    )
    assert result.code == 3, result.stdout + result.stderr
    assert "ambiguous:" in result.stdout
    assert "the --bad version could not be judged" in result.stdout
    saved = json.loads((world.folder / "ambiguous" / "bisect.json").read_text())
    assert saved["status"] == "ambiguous" and saved["first_bad"] is None
    assert [s["version"] for s in saved["steps"]] == [
        world.version(broken - 1),
        world.version(corrupt),
    ]
    assert world.version(broken) not in [s["version"] for s in saved["steps"]]


def test_disagreeing_repeats_are_flaky(world: World, tmp_path: Path) -> None:
    """With --repeat 2 a build that behaves differently each run is reported flaky.

    Its own mirror folder (the index as a local folder): the flaky build sits between
    a good and a bad one, so both ends hold and only the middle disagrees."""
    releases = stand_ins(tmp_path / "mirror", first_bad=10, flaky=9, broken=3, corrupt=4)
    result = harness_cli(
        "bisect", world.matrix, "--runtime", "runsc", "--index", releases.root,
        "--cache", tmp_path / "cache", "--out", tmp_path / "flaky",
        "--good", releases.versions[8], "--bad", releases.versions[10],
        "--property", "egress_confinement", "--repeat", "2", "--format", "json",
    )  # fmt: skip
    assert result.code == 3, result.stdout + result.stderr
    answer = json.loads(result.stdout)
    assert answer["flaky"] == [releases.versions[9]], answer["steps"]
    assert [s["verdict"] for s in answer["steps"]] == ["good", "bad", "flaky"]
    step = answer["steps"][2]
    assert (step["verdict"], sorted(step["verdicts"])) == ("flaky", ["pass", "regression"])
    assert step["reason"].startswith("runs disagree: ")
    folder = tmp_path / "flaky" / step["folder"]
    assert (folder / "run-1" / "verdicts.jsonl").is_file()
    assert (folder / "run-2" / "verdicts.jsonl").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--good", "2026-09-01", "--bad", "2026-09-05"], "give exactly one of --property"),
        (
            ["--good", "yesterday", "--bad", "2026-09-05", "--property", "egress_confinement"],
            "--good: 'yesterday' is not a gVisor version",
        ),
        (
            ["--good", "2026-09-05", "--bad", "2026-09-01", "--property", "egress_confinement"],
            "must be older",
        ),
        (
            ["--good", "2026-08-01", "--bad", "2026-09-05", "--property", "egress_confinement"],
            "--good: nightly/2026-08-01 is not in the index at http://127.0.0.1:",
        ),
        (
            ["--good", "2026-09-01", "--bad", "2026-09-05", "--fact", "seccomp_addfd"],
            "has no expectation for it",
        ),
        (
            ["--good", "2026-09-01", "--bad", "2026-09-05", "--property", "egress", "--host", "x"],
            "unknown property 'egress'",
        ),
    ],
)
def test_bad_input_exits_2(world: World, args: list[str], message: str) -> None:
    """Bad versions, ranges, targets or names are one-line errors with exit 2."""
    result = world.bisect(*args, out="never")
    assert result.code == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert result.stderr.count("\n") == 1
    assert not (world.folder / "never").exists()


def test_runtime_without_a_binary_is_refused(world: World) -> None:
    """Only runsc and oci runtimes have a binary to replace."""
    result = harness_cli(
        "bisect", world.matrix, "--runtime", "bwrap", "--good", "2026-09-01", "--bad",
        "2026-09-02", "--property", "egress_confinement",
    )  # fmt: skip
    assert result.code == 2
    assert "kind 'command' has no binary to replace" in result.stderr


def test_script_judges_each_step_like_git_bisect_run(world: World, tmp_path: Path) -> None:
    """--script decides each step: 0 good, 125 skip, other codes bad; its output is kept."""
    good, skip, bad = world.version(0), world.version(1), world.version(2)
    script = (
        f'echo "judging $HARNESS_VERSION on $HARNESS_HOST"; test -x "$HARNESS_RUNSC_LOCAL"'
        f' || exit 2; case "$HARNESS_VERSION" in {good}) exit 0;; {skip}) exit 125;; esac;'
        " exit 1"
    )
    result = world.bisect(
        "--good", good, "--bad", world.version(4), "--property", "egress_confinement",
        "--script", script, "--format", "json", out="script",
    )  # fmt: skip
    # The real runs all pass (these builds are good); the script alone makes 2 and 4
    # bad and skips 1, so the first bad is 1 or 2: ambiguous, exit 3.
    assert result.code == 3, result.stdout + result.stderr
    answer = json.loads(result.stdout)
    verdicts = {s["version"]: s["verdict"] for s in answer["steps"]}
    assert verdicts[good] == "good" and verdicts[skip] == "skipped" and verdicts[bad] == "bad"
    assert answer["candidates"] == [skip, bad]
    step = next(s for s in answer["steps"] if s["version"] == skip)
    assert step["reason"] == "--script exited 125 (skip)"
    log = (world.folder / "script" / step["folder"] / "script.log").read_text()
    assert f"judging {skip} on localhost" in log


def test_from_takes_the_regression_of_a_results_folder(
    world: World, main_run: tuple[CliResult, dict[str, Any]]
) -> None:
    """--from RESULTS: runtime, property, host and matrix come from the run's regression."""
    _, answer = main_run
    bad_step = next(s for s in answer["steps"] if s["verdict"] == "bad")
    k = world.releases.first_bad
    result = harness_cli(
        "bisect", "--from", world.folder / "main" / bad_step["folder"],
        "--index", world.bucket.url, "--cache", world.cache, "--out", world.folder / "from",
        "--good", world.version(k - 1), "--bad", world.version(k), "--format", "json",
    )  # fmt: skip
    assert result.code == 0, result.stdout + result.stderr
    assert "bisect: egress_confinement on localhost/runsc (regression in" in result.stderr
    found = json.loads(result.stdout)
    assert (found["status"], found["first_bad"]) == ("found", world.version(k))


def test_from_a_clean_run_is_bad_input(
    world: World, main_run: tuple[CliResult, dict[str, Any]]
) -> None:
    """--from a folder without a regression refuses with one line, exit 2."""
    _, answer = main_run
    good_step = next(s for s in answer["steps"] if s["verdict"] == "good")
    result = harness_cli(
        "bisect", "--from", world.folder / "main" / good_step["folder"],
        "--good", world.version(0), "--bad", world.version(1),
    )  # fmt: skip
    assert result.code == 2
    assert "no regression to bisect" in result.stderr
    assert result.stderr.strip().count("\n") == 0


def test_the_matrix_index_is_used_and_nothing_else_is_reached(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --index, bisect lists builds where `run` would: the matrix's
    [settings] index (a mirror folder here). Any other index would have to go through
    the proxy, which is a closed loopback port, so no query can leave this machine."""
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    matrix = world.folder / "mirrored.toml"
    matrix.write_text(
        MATRIX.format(inventory="inventory.toml").replace(
            "[settings]\n", f'[settings]\nindex = "{world.releases.root}"\n'
        )
    )
    result = harness_cli(
        "bisect", matrix, "--runtime", "runsc", "--cache", world.cache,
        "--out", world.folder / "mirrored", "--good", "2026-08-01", "--bad", "2026-09-05",
        "--property", "egress_confinement",
    )  # fmt: skip
    assert result.code == 2, result.stdout + result.stderr
    # The error names the index it read: the mirror, not the bucket.
    said = f"--good: nightly/2026-08-01 is not in the index at {world.releases.root} (nearest:"
    assert said in result.stderr
