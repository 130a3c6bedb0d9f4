"""Output replayed from another cell is never certified: a runtime that prints a
sandbox's recorded "all blocked" output instead of running the probe is judged
inconclusive, because the output lacks this cell's nonce and digest."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import harness_cli
from tests.e2e.helpers import cells_of, verdicts_of
from tests.lab import require_tool

BWRAP = """
[runtimes.bwrap]
kind = "command"
argv = [
  "bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup",
  "--die-with-parent", "--new-session",
  "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
  "--ro-bind", "{probe}", "/probe", "--ro-bind", "{helpers}", "/helpers",
  "--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
  "--", "/probe", "{args}",
]
helpers_inside = "/helpers"
expect = { egress_confinement = "enforced", privilege_floor = "enforced" }
"""


def _matrix(tmp: Path, runtimes: str) -> Path:
    (tmp / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{tmp}/work"\n'
    )
    path = tmp / "m.toml"
    path.write_text(
        'name = "replay"\ninventory = "inv.toml"\n'
        'scenarios = ["egress-confinement", "privilege-floor"]\n'
        '[settings]\ntimeout = 60\n[canary]\nmode = "netns"\n'
        f'[runtimes.host]\nkind = "host"\n{runtimes}'
    )
    return path


def test_replayed_all_blocked_output_is_inconclusive(tmp_path: Path) -> None:
    """A canned copy of a real sandbox's output, played back by a runtime that never
    runs the probe, yields inconclusive, never enforced (exit 3)."""
    require_tool("bwrap")
    require_tool("ip")
    first = tmp_path / "first"
    first.mkdir()
    result = harness_cli("run", _matrix(first, BWRAP), "--out", first / "out")
    assert result.code == 0, result.stdout + result.stderr
    recorded = tmp_path / "recorded.txt"
    recorded.write_text(cells_of(first / "out")[("localhost", "bwrap")]["stdout"])

    second = tmp_path / "second"
    second.mkdir()
    play = json.dumps(str(recorded))
    replay = (
        '[runtimes.replay]\nkind = "command"\n'
        f'argv = ["sh", "-c", "cat \\"$0\\"", {play}, "{{probe}}", "{{args}}"]\n'
        'expect = { egress_confinement = "enforced", privilege_floor = "enforced" }\n'
    )
    result = harness_cli("run", _matrix(second, replay), "--out", second / "out")
    assert result.code == 3, result.stdout + result.stderr
    v = verdicts_of(second / "out")
    for prop in ("egress_confinement", "privilege_floor"):
        assert v[("localhost", "replay", prop)]["verdict"] == "inconclusive", v
    cell = cells_of(second / "out")[("localhost", "replay")]
    assert cell["status"] == "error"
    assert "nonce" in cell["reason"]
