"""The controller's cache folder: one place decides it, and the probe's build and
bisect's release builds each keep to their own subfolder of it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.cache import PROBES, RUNSC_BUILDS, cache_dir
from harness.probe import build as probe_build
from harness.probe import build_probe
from harness.releases.builds import ReleaseBuilds


def test_xdg_cache_home_is_honoured_and_home_is_the_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """XDG_CACHE_HOME holds the cache; unset or empty, it is ~/.cache/harness."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir(PROBES) == tmp_path / "xdg" / "harness" / "probe"
    assert cache_dir(RUNSC_BUILDS) == tmp_path / "xdg" / "harness" / "runsc"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for unset in (True, False):
        if unset:
            monkeypatch.delenv("XDG_CACHE_HOME")
        else:
            monkeypatch.setenv("XDG_CACHE_HOME", "")
        assert cache_dir(RUNSC_BUILDS) == tmp_path / "home" / ".cache" / "harness" / "runsc"


def test_the_probe_and_release_builds_default_to_their_own_subfolders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --cache, a built probe lands under harness/probe and release builds
    are kept under harness/runsc, as before the cache folder was named once.

    The compiler's work is the session's build, copied to where build_probe puts its
    output (a compile costs seconds; test_build's tests compile): where that is, is
    build_probe's choice alone."""
    session = build_probe()
    made: list[Path] = []

    def compile_by_copy(argv: list[str], units: list[Path], target: Path, *, arch: str) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(session.path, target)
        made.append(target)

    monkeypatch.setattr(probe_build, "_compile", compile_by_copy)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = build_probe()
    assert made == [built.path]  # built, not found
    assert built.path.is_relative_to(tmp_path / "harness" / "probe" / built.arch)
    assert ReleaseBuilds(None).cache == tmp_path / "harness" / "runsc"
