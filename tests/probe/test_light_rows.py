"""Light rows (checks.def's `KIND_LIGHT`) share one child, one after another: each
still prints its own line with its own time and time limit, a row that hangs or
crashes ends only itself, and nothing a row leaves behind shows in the next one's
line (issue 26's budget: a fork per check is most of a runsc cell's check time)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.probe import table
from harness.probe.build import build_probe


@pytest.fixture(scope="module")
def probe() -> Path:
    return build_probe().path


def _lines(probe: Path, *args: str) -> dict[str, dict[str, object]]:
    done = subprocess.run([str(probe), "run", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert rows[-1]["type"] == "done", rows[-1]
    return {str(r["id"]): r for r in rows if "id" in r}


def test_a_hang_or_a_crash_ends_only_its_own_row(probe: Path) -> None:
    """The rows after a hung or crashed light row run in a fresh child and report;
    rows with nothing between them share one (the same pid)."""
    got = _lines(probe, "--check-timeout-ms", "300", "selftest")
    assert got["selftest_hang"]["status"] == "timeout"
    assert got["selftest_light_hang"]["status"] == "timeout", got["selftest_light_hang"]
    assert 290 <= float(got["selftest_light_hang"]["elapsed_ms"]) < 2000  # type: ignore[arg-type]
    assert got["selftest_light_crash"] == {
        **got["selftest_light_crash"], "status": "error", "detail": "child killed by signal 11"
    }  # fmt: skip
    first, after_hang, after_crash = (
        got[i]["value"]
        for i in ("selftest_light_pid", "selftest_light_after_hang", "selftest_light_after_crash")
    )
    assert len({first, after_hang, after_crash}) == 3, "a fresh child after each hang and crash"
    assert got["selftest_light_evidence"]["detail"] == f"pid {after_crash}", "one shared child"
    assert "evidence" not in got["selftest_light_evidence"], "the row before's evidence is gone"
    for row in got.values():
        assert float(row["elapsed_ms"]) >= 0  # type: ignore[arg-type]


def test_a_write_kind_row_starts_with_nothing_tried(probe: Path, tmp_path: Path) -> None:
    """fs-chmod-outside's change went through; the rows after it in the same child,
    whose files do not exist, are blocked, not `succeeded` on chmod's calls."""
    (tmp_path / "chmod-me").write_text("x")
    got = _lines(
        probe, "--tag", "t", "--token", "0" * 32, "--outside-dir", str(tmp_path),
        "filesystem-confinement",
    )  # fmt: skip
    assert got["fs-chmod-outside"]["outcome"] == "succeeded", got["fs-chmod-outside"]
    for after in ("fs-chown-outside", "fs-utime-outside", "fs-xattr-outside"):
        assert got[after]["outcome"] == "blocked", got[after]
        assert got[after]["errno"] == "ENOENT", got[after]


def test_only_facts_attempts_and_controls_can_be_light() -> None:
    rows = table.rows()
    assert {r.kind for r in rows if r.light} <= {"fact", "attempt", "control"}
    light = 'CHECK("filesystem-confinement", "fs-list-outside", chk_fs_list_outside, ATTEMPT_LIGHT)'
    assert table.rows(light) == [
        table.Row("filesystem-confinement", "fs-list-outside", "chk_fs_list_outside", "attempt",
                  light=True)
    ]  # fmt: skip
    with pytest.raises(ValueError, match="cannot be light"):
        table.rows('CHECK("egress-confinement", "sweep", chk_egress_sweep, SWEEP_LIGHT)\n')


def test_rows_that_keep_state_in_the_process_have_their_own_child() -> None:
    """Credentials, namespaces, seccomp, cwd, descriptors, mappings or children kept:
    such a row would change the rows after it in a shared child."""
    light = {r.id for r in table.rows() if r.light}
    assert not {r.id for r in table.rows() if r.scenario == "privilege-floor"} & light
    for own in ("fs-routes", "fs-socket-outside", "fs-inherited-fds", "fs-proc-fds",
                "fs-io-uring", "fs-exec-outside"):  # fmt: skip
        assert own not in light, own
