"""A run's claim on a host takes its lease and cleans what dead runs left, sparing live
runs, in one command when there is nothing to clean (a large fleet's usual case)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.hostside.lease import claim
from harness.transport.base import Completed
from harness.transport.local import LocalTransport

pytestmark = pytest.mark.anyio


class Counting(LocalTransport):
    """This machine, counting the commands run on it."""

    def __init__(self) -> None:
        super().__init__()
        self.commands: list[str] = []

    async def run(
        self, argv: Sequence[str], *, stdin: bytes | None = None, timeout: float | None = None
    ) -> Completed:
        self.commands.append(argv[3])
        return await super().run(argv, stdin=stdin, timeout=timeout)


def _lease(runs: Path, run_id: str, ends: int) -> None:
    (runs / f"{run_id}.lease").write_text(f"{ends}\nsomewhere 1\n")


async def test_a_claim_on_a_clean_host_is_one_command(tmp_path: Path) -> None:
    transport = Counting()
    run_id = secrets.token_hex(6)
    lease = await claim(transport, str(tmp_path), run_id)
    assert transport.commands == ["harness-claim"]
    assert lease.cleaned == []
    ends, owner = (tmp_path / "runs" / f"{run_id}.lease").read_text().splitlines()
    assert int(ends) > time.time() + 200 and owner


async def test_a_claim_cleans_dead_runs_and_spares_live_ones(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    dead, live, own = (secrets.token_hex(6) for _ in range(3))
    _lease(runs, dead, int(time.time()) - 10)  # its end is past
    _lease(runs, live, int(time.time()) + 600)  # no lock: judged by its end alone
    (tmp_path / "cells" / f"harness-{dead}-0").mkdir(parents=True)
    (tmp_path / "cells" / f"harness-{live}-0").mkdir(parents=True)
    _lease(runs, own, int(time.time()) - 10)  # a stale lease of this very run: never judged
    transport = Counting()
    lease = await claim(transport, str(tmp_path), own)
    assert lease.cleaned == [dead]
    assert transport.commands == ["harness-claim", "harness-clean"]
    assert not (runs / f"{dead}.lease").exists()
    assert not (tmp_path / "cells" / f"harness-{dead}-0").exists()
    assert (runs / f"{live}.lease").exists()
    assert (tmp_path / "cells" / f"harness-{live}-0").exists()
    assert int((runs / f"{own}.lease").read_text().split()[0]) > time.time() + 200


async def test_a_claim_cleans_what_a_finished_run_left_without_a_lease(tmp_path: Path) -> None:
    """A run that gave up its lease but whose teardown missed something (an empty cell
    folder, a fixture, a supervisor's log): no lease names it, so nothing else would."""
    runs = tmp_path / "runs"
    runs.mkdir()
    gone, live, own = (secrets.token_hex(4) for _ in range(3))
    _lease(runs, live, int(time.time()) + 600)
    left = [
        tmp_path / "cells" / f"harness-{gone}-00002",
        tmp_path / "fs" / f"harness-{gone}-00003-d3776cab",
        tmp_path / f"harness-sentinel-harness-{gone}-00004-62d94d31",
        tmp_path / f"supervisor-{gone}-0-1.log",
        tmp_path / f"canary-{gone}-0.log",
    ]
    kept = [tmp_path / "cells" / f"harness-{live}-00002", tmp_path / f"supervisor-{live}-0-0.log"]
    for path in (*left, *kept):
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.mkdir if "cells" in path.parts or "fs" in path.parts else path.touch)()
    lease = await claim(Counting(), str(tmp_path), own)
    assert lease.cleaned == [gone]
    assert [p for p in left if p.exists()] == []
    assert [p for p in kept if not p.exists()] == []
