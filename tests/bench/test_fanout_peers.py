"""bench/fanout.py's peers: one that fails some cells is retried once, then reported
as failed and left out of the comparisons; harness's own targets are still judged
(a single failed Ansible cell once voided every figure of the bench)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.fanout import peer_row, report


class FakeMeter:
    """Stands in for the timing only: each call returns the next of `complete`."""

    def __init__(self, *complete: int) -> None:
        self.complete = list(complete)
        self.labels: list[str] = []

    def __call__(self, label: str, fn: Any) -> dict[str, Any]:
        self.labels.append(label)
        return _row(wall=10.0, complete=self.complete.pop(0))


def _row(*, wall: float, complete: int = 0) -> dict[str, Any]:
    return {
        "label": "x", "wall_s": wall, "client_cpu_s": 1.0, "server_cpu_s": 1.0,
        "total_cpu_s": 2.0, "client_share": 0.5, "machine_busy_s": 2.0, "exit_status": 0,
        "stdout_tail": json.dumps({"complete": complete}), "stderr_tail": "host7: UNREACHABLE",
        "complete": complete,
    }  # fmt: skip


def test_a_peer_whole_at_once_is_not_retried() -> None:
    meter = FakeMeter(6)
    row = peer_row(meter, "ansible", None, 6)  # type: ignore[arg-type]
    assert meter.labels == ["ansible"] and "peer_failed" not in row


def test_a_peer_whole_on_its_retry_is_compared() -> None:
    meter = FakeMeter(5, 6)
    row = peer_row(meter, "ansible", None, 6)  # type: ignore[arg-type]
    assert meter.labels == ["ansible", "ansible (retried)"]
    assert row["retried_after"] == "5 of 6" and "peer_failed" not in row


def test_a_peer_failing_twice_is_reported_and_harness_still_judged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    failed = peer_row(FakeMeter(5, 5), "ansible", None, 6)  # type: ignore[arg-type]
    assert failed["peer_failed"].startswith("5 of 6 cells complete after one retry")
    rows = {
        "ssh true, asyncssh": _row(wall=1.0), "ssh true, OpenSSH": _row(wall=1.2),
        "every cell, local, at once": _row(wall=2.0), "canaries": _row(wall=0.5),
        "harness": _row(wall=4.0), "ansible": failed, "parallel-ssh": _row(wall=5.0),
    }  # fmt: skip
    results: dict[str, Any] = {"rows": rows, "cell_alone_s": {"bwrap": 1.5}, "hosts": 3}
    report(results)
    targets = results["summary"]["targets"]
    assert targets["faster than ansible"].startswith("not compared: ansible failed")
    assert targets["faster than parallel-ssh"].endswith("met")
    assert "wall <= 1.3 x floor" in targets
    out = capsys.readouterr().out
    assert "PEER FAILED: ansible: 5 of 6 cells complete after one retry" in out
    assert "NOT JUDGED" not in out
