"""The probe builds warning-free with both compilers, and runs as a static binary."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.probe.build import CFLAGS, MUSL_EXTRA, build_probe, source_digest, sources
from tests.lab import require_tool

COMPILERS = ("musl-gcc", "gcc")


@pytest.fixture(scope="module")
def warning_free_builds(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, subprocess.Popen[str]]]:
    """Each installed compiler's -Werror build, all started at once (each is one
    single-threaded compiler process of seconds; the machine has more than one core)."""
    folder = tmp_path_factory.mktemp("werror")
    units = [str(p) for p in sources() if p.suffix == ".c"]
    builds: dict[str, subprocess.Popen[str]] = {}
    for compiler in filter(shutil.which, COMPILERS):
        extra = list(MUSL_EXTRA) if compiler == "musl-gcc" else []
        out = str(folder / f"probe-{compiler}")
        argv = [compiler, *CFLAGS, "-Werror", *extra, "-o", out, *units]
        builds[compiler] = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    yield builds
    for build in builds.values():
        if build.poll() is None:
            build.kill()
        build.communicate()


@pytest.mark.parametrize("compiler", COMPILERS)
def test_probe_compiles_without_warnings(
    compiler: str, warning_free_builds: dict[str, subprocess.Popen[str]]
) -> None:
    """-Wall -Wextra -Werror passes with musl and with glibc's static gcc."""
    require_tool(compiler)
    _, stderr = warning_free_builds[compiler].communicate()
    assert warning_free_builds[compiler].returncode == 0, stderr


def test_every_source_file_is_in_the_cache_key(tmp_path: Path) -> None:
    """The header, the check table and each .c file feed the key: a probe built
    before an edit to any of them must not be reused after it."""
    names = {p.name for p in sources()}
    assert {"probe.h", "checks.def", "main.c", "canary.c", "init.c"} <= names
    assert all(p.suffix in {".c", ".h", ".def"} for p in sources())
    for p in sources():
        shutil.copy(p, tmp_path / p.name)
    before = source_digest(sources(tmp_path))
    assert before == source_digest(sources())
    for name in ("probe.h", "checks.def", "attribution.c"):
        with (tmp_path / name).open("a") as f:
            f.write("\n")
        after = source_digest(sources(tmp_path))
        assert after != before, name
        before = after
    (tmp_path / "attribution.c").rename(tmp_path / "attribution2.c")  # same bytes, new name
    assert source_digest(sources(tmp_path)) != before


def test_no_c_file_is_over_650_lines() -> None:
    """The probe stays a project of small files, one concern each (docs/architecture.md)."""
    long = {p.name: n for p in sources() if (n := len(p.read_text().splitlines())) > 650}
    assert long == {}


def test_cached_build_is_static_and_speaks_the_protocol(tmp_path: Path) -> None:
    """The cached binary needs no dynamic loader and answers `version`."""
    probe = build_probe(cache=tmp_path)
    assert build_probe(cache=tmp_path).path == probe.path  # cached by source hash
    out = subprocess.run(["file", "-L", str(probe.path)], capture_output=True, text=True).stdout
    assert "statically linked" in out or "static-pie" in out or not out
    version = json.loads(subprocess.run([str(probe.path), "version"], capture_output=True).stdout)
    assert version == {"type": "version", "probe": "harness-probe", "protocol": 1}


def test_bad_scenario_is_a_fatal_line_and_exit_2() -> None:
    """An unknown scenario name: one JSON fatal line, exit 2."""
    probe = build_probe()  # the session's build: a build of its own costs seconds
    done = subprocess.run([str(probe.path), "run", "nope"], capture_output=True, text=True)
    assert done.returncode == 2
    assert json.loads(done.stdout)["type"] == "fatal"
