"""Cells in phases, on the host side: the envelope's watcher acts at each barrier the
probe reaches, then releases it, and reports what it did; its report section is
read strictly (fuzzed like the rest of the probe protocol)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.hostside.envelope import Envelope, Report, _phases
from harness.results.records import Phase
from harness.scenarios.base import NO_ACTION
from harness.transport import Completed


def _completed(stdout: str, status: int) -> Completed:
    return Completed(
        argv=(), exit_status=status, signal=None, stdout=stdout, stderr="", elapsed=0.0
    )


def _run(envelope: Envelope, script: str) -> tuple[str, Report | None]:
    argv = envelope.wrap(["sh", "-c", script])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    opened, report = envelope.open(_completed(done.stdout, done.returncode))
    return opened.stdout, report


def _waits(folder: Path, name: str) -> str:
    """What the probe does at a barrier, in shell."""
    return (
        f": > {folder}/.harness-phase-{name}; i=0;"
        f" while [ ! -e {folder}/.harness-go-{name} ] && [ $i -lt 300 ]; do sleep 0.01;"
        f" i=$((i+1)); done; [ -e {folder}/.harness-go-{name} ] && echo released-{name}"
    )


def test_the_host_acts_at_each_barrier_before_releasing_it(tmp_path: Path) -> None:
    acted = tmp_path / "acted"
    envelope = Envelope(
        "t1",
        marker="MK",
        barrier_dir=str(tmp_path),
        phases=(("one", f"echo first > {acted}; echo did one"), ("two", "echo did two; exit 3")),
    )
    # The sandbox checks that the host's action happened before it was let go.
    script = f"{_waits(tmp_path, 'one')}; cat {acted}; {_waits(tmp_path, 'two')}"
    out, report = _run(envelope, script)
    assert out.split() == ["released-one", "first", "released-two"]
    assert report is not None and report.phases is not None
    phases = report.phases
    assert phases["one"].status == 0 and phases["one"].said == "did one"
    assert phases["two"].status == 3 and phases["two"].said == "did two"


@pytest.mark.parametrize(
    "hook",
    [
        # A hung hook (an external `revoke` command that never returns).
        "echo started; sleep 30",
        # One that ignores SIGTERM is killed a second later (`timeout -k`, status 137):
        # that is its time limit too, said so, not an action that failed on its own.
        "trap '' TERM; echo started; sleep 30",
    ],
)
def test_a_hook_past_its_limit_is_cut_timed_out_and_the_barrier_released(
    tmp_path: Path, hook: str
) -> None:
    """A timed-out action with what it printed, and the probe goes on: never "the
    host never acted"."""
    envelope = Envelope(
        "t1", marker="MK", barrier_dir=str(tmp_path), phases=(("one", hook),), hook_limit=0.3
    )
    out, report = _run(envelope, _waits(tmp_path, "one"))
    assert out.split() == ["released-one"]
    assert report is not None and report.phases is not None
    assert report.phases["one"].status == 124
    assert report.phases["one"].said == "timed out after 0.3 s: started"


def test_a_phase_nobody_acts_at_is_released_idle_at_once(tmp_path: Path) -> None:
    """No hook (no supervisor, no revoke command): the go file says `idle`, so the
    probe waits for no effect, and the report says there was nothing to act on."""
    envelope = Envelope("t1", marker="MK", barrier_dir=str(tmp_path), phases=(("one", ""),))
    out, report = _run(envelope, f"{_waits(tmp_path, 'one')}; cat {tmp_path}/.harness-go-one")
    assert out.split() == ["released-one", "idle"]
    assert report is not None and report.phases == {"one": Phase(0, 0, NO_ACTION)}
    assert not list(tmp_path.glob(".harness-wait-*"))


def test_a_barrier_never_reached_is_never_acted_at(tmp_path: Path) -> None:
    acted = tmp_path / "acted"
    envelope = Envelope(
        "t1", marker="MK", barrier_dir=str(tmp_path), phases=(("one", f": > {acted}"),)
    )
    out, report = _run(envelope, "echo no barrier")
    assert out.strip() == "no barrier" and not acted.exists()
    assert report is not None and report.phases == {}


def test_without_phases_the_report_has_none(tmp_path: Path) -> None:
    _, report = _run(Envelope("t1", marker="MK"), "echo hi")
    assert report is not None and report.phases is None


def test_phase_lines_are_read_strictly() -> None:
    assert _phases("loss\t0\t12\tkilled it\n") == {"loss": Phase(0, 12, "killed it")}
    assert _phases("") == {}
    for bad in ("loss\t0\t12", "loss\tx\t1\t", "\t0\t1\t", "a\t0\t1\t\na\t0\t1\t"):
        assert _phases(bad) is None


@given(st.text(max_size=200))
def test_any_phases_text_is_read_or_refused_never_raises(text: str) -> None:
    found = _phases(text)
    if found is not None:
        assert all(p.status >= 0 and p.ms >= 0 and len(p.said) <= 300 for p in found.values())


@given(st.binary(max_size=120))
def test_any_report_with_a_phases_section_is_read_or_refused(body: bytes) -> None:
    envelope = Envelope("t1", marker="MK")
    section = b"phases %d\n" % len(body) + body + b"\n"
    stdout = b"out\n\nMK evidence\n" + section + b"MK 0 %d\n" % len(section)
    text = stdout.decode("utf-8", "replace")
    _, report = envelope.open(_completed(text, 0))
    assert report is None or report.phases is not None
