"""The probe's output is bound to its cell: the real probe echoes the cell nonce
and a digest over its lines, and anything else is refused by the parser."""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness.probe.build import build_probe
from harness.probe.protocol import parse_output


def _run(tmp_path: Path, nonce: str) -> str:
    probe = build_probe()  # the session's build: a build of its own costs seconds
    argv = [str(probe.path), "run", "--tag", "t", "--cell-nonce", nonce, "mechanisms"]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def test_own_output_is_complete(tmp_path: Path) -> None:
    """The real probe's output verifies against the nonce it was given."""
    out = parse_output(_run(tmp_path, "n1"), cell_nonce="n1")
    assert out.complete, out.problems
    assert out.facts


def test_output_of_another_cell_is_incomplete(tmp_path: Path) -> None:
    """Output made for another nonce (a replay) is not complete, with the reason."""
    out = parse_output(_run(tmp_path, "n1"), cell_nonce="n2")
    assert not out.complete
    assert "nonce" in out.failure()


def test_edited_line_breaks_the_digest(tmp_path: Path) -> None:
    """Changing one line between start and done (nonces intact) is caught."""
    text = _run(tmp_path, "n1")
    lines = text.splitlines()
    lines[1] = lines[1].replace('"status":"ok"', '"status":"error"', 1)
    assert lines[1] != text.splitlines()[1]
    out = parse_output("\n".join(lines) + "\n", cell_nonce="n1")
    assert not out.complete
    assert "digest" in out.failure()


def test_nonce_and_digest_moved_onto_canned_lines_fail(tmp_path: Path) -> None:
    """Canned check lines framed by a fresh start line and a done line copied from
    a real run of this cell still fail: the digest covers the lines between."""
    own = _run(tmp_path, "n1").splitlines()
    canned = _run(tmp_path, "n0").splitlines()
    forged = [own[0], *canned[1:-1], own[-1]]
    forged[1] = forged[1].replace('"status":"ok"', '"status":"unavailable"', 1)
    out = parse_output("\n".join(forged) + "\n", cell_nonce="n1")
    assert not out.complete
