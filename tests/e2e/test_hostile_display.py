"""Hostile values are shown, never obeyed: host and runtime names full of rich
markup, terminal escape sequences, HTML and control characters go through a real
run in a real terminal (tmux), the reports and the evidence export; the terminal
shows them visibly, each report stays valid and inert, file names stay unique."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import ROOT, harness_cli
from tests.e2e.helpers import verdicts_of
from tests.lab import require_tool

FORGED = "\u001b[1A\u001b[2K\r✓ pass … enforced <img src=x onerror=alert(1)>"
HOSTS = [
    "[/]",
    "[bold red]h[/] \u001b]8;;https://example.invalid\u0007link\u001b]8;;\u0007",
    "h" * 128,  # with a long runtime name, past the 255 bytes a file name can have
]
RUNTIMES = {
    "<script>alert(1)</script>": '["{probe}", "{args}"]',
    "web 1": '["{probe}", "{args}"]',
    "web_1": '["{probe}", "{args}"]',
    "a" * 128: '["{probe}", "{args}"]',
    "[link=https://example.invalid]click[/link]": '["{probe}", "{args}"]',
    # Not installed: its reason names the binary, erase-line escapes and all.
    "forge": json.dumps([FORGED, "{probe}", "{args}"], ensure_ascii=True),
}


def _toml(value: str) -> str:
    return json.dumps(value, ensure_ascii=True)  # a valid TOML basic string


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A matrix of hostile names on this machine (local transport)."""
    tmp = tmp_path_factory.mktemp("hostile")
    hosts = "".join(
        f'[hosts.{_toml(h)}]\ntransport = "local"\nworkdir = "{tmp}/w{i}"\n'
        for i, h in enumerate(HOSTS)
    )
    (tmp / "inv.toml").write_text(hosts)
    runtimes = "".join(
        f'[runtimes.{_toml(name)}]\nkind = "command"\nargv = {argv}\n'
        for name, argv in RUNTIMES.items()
    )
    (tmp / "m.toml").write_text(
        f'name = {_toml("<b>m</b>")}\ninventory = "inv.toml"\nscenarios = ["mechanisms"]\n'
        + runtimes
    )
    return tmp


def _in_tmux(argv: list[str], cwd: Path) -> tuple[str, int]:
    """Run argv in a real terminal (a detached tmux session); the screen and the code."""
    require_tool("tmux")
    name = f"harness-test-{uuid.uuid4().hex[:8]}"
    shell = " ".join(f"'{a}'" for a in argv) + "; echo EXIT=$?; sleep 300"
    subprocess.run(
        [
            "tmux",
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            "400",
            "-y",
            "200",
            "-c",
            str(cwd),
            "env",
            "TERM=xterm-256color",
            "sh",
            "-c",
            shell,
        ],
        check=True,
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            screen = subprocess.run(
                ["tmux", "capture-pane", "-p", "-J", "-t", name, "-S", "-1000"],
                capture_output=True,
                text=True,
            ).stdout
            if "EXIT=" in screen or time.monotonic() > deadline:
                break
            time.sleep(0.5)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False)
    code = int(screen.split("EXIT=")[1].split()[0]) if "EXIT=" in screen else -1
    return screen, code


def test_hostile_names_in_a_real_terminal(hostile: Path) -> None:
    """A host named `[/]` does not crash the report (exit 3, as the manifest says),
    and no escape sequence or markup from a name rewrites what the terminal shows."""
    out = hostile / "out-tty"
    argv = [sys.executable, "-m", "harness", "run", str(hostile / "m.toml"), "--out", str(out)]
    screen, code = _in_tmux(argv, ROOT)
    assert code == 3, screen
    assert "Traceback" not in screen
    assert json.loads((out / "manifest.json").read_text())["exit_code"] == 3
    # Each forged line is shown with its escapes written out, not obeyed.
    lines = [ln for ln in screen.splitlines() if "pass … enforced" in ln]
    assert lines and all("\\x1b[1A\\x1b[2K\\x0d" in ln for ln in lines), screen
    assert "[/]" in screen and "[bold red]h[/]" in screen and "[link=" in screen
    v = verdicts_of(out)
    assert {r for (_h, r, _s) in v} == set(RUNTIMES)


def test_hostile_names_in_every_report(hostile: Path, tmp_path: Path) -> None:
    """Markdown passes no HTML, JUnit stays valid XML without control characters,
    HTML escapes everything, and the evidence files are unique and bounded."""
    out = hostile / "out-reports"
    assert harness_cli("run", hostile / "m.toml", "--out", out).code == 3
    md = harness_cli("report", out, "--format", "markdown")
    assert md.code == 0, md.stderr
    body = md.stdout.replace("<sub>", "").replace("</sub>", "")  # the report's own legend
    assert not re.search(r"(?<!\\)[<\[]", body), body  # every < and [ escaped: no HTML, links
    assert "\u001b" not in body
    junit = harness_cli("report", out, "--format", "junit")
    assert junit.code == 0, junit.stderr
    root = ET.fromstring(junit.stdout.encode())
    assert not any(ch in junit.stdout for ch in "\u001b\u0007\r")
    names = {s.get("hostname") for s in root.iter("testsuite")}
    assert "[/]" in names
    page = harness_cli("report", out, "--format", "html")
    assert page.code == 0, page.stderr
    assert "<script>alert" not in page.stdout and "<img src=x" not in page.stdout
    assert "\u001b" not in page.stdout
    ev = harness_cli("evidence", out, "--out", tmp_path / "ev")
    assert ev.code == 0, ev.stderr
    files = list((tmp_path / "ev").iterdir())
    assert len(files) == len(HOSTS) * len(RUNTIMES)  # `web 1` and `web_1` apart
    assert all(len(f.name.encode()) <= 255 for f in files)


def test_tmux_is_there_under_ci() -> None:
    """The terminal test needs tmux; CI must have it (scripts/setup --dev)."""
    if shutil.which("tmux") is None:
        require_tool("tmux")
