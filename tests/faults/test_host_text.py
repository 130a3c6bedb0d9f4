"""What a host prints (its kernel string, a runtime's version) is data: `harness
hosts` shows it visibly, never as terminal control, and a flood is shortened
before it is kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, CliResult, Lab, harness_cli

# A title change, a screen clear, a colour, a right-to-left override.
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[31m\u202e"
FAKE_RUNSC = f"""#!/bin/sh
printf '%s\\n' '{HOSTILE}runsc-version-1'
"""


def _with_env(env: dict[str, str], *args: str | Path) -> CliResult:
    done = subprocess.run(
        [sys.executable, "-m", "harness", *map(str, args)],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
    )  # fmt: skip
    return CliResult(done.returncode, done.stdout, done.stderr)


def _assert_inert(out: str) -> None:
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out, repr(out[:300])


def test_hosts_shows_a_runtime_version_visibly(lab: Lab, tmp_path: Path) -> None:
    """Over real sshd, a runtime whose `--version` prints escape sequences: the line
    shows them as `\\x1b...`, the terminal gets no control characters."""
    fake = tmp_path / "runsc"
    fake.write_text(FAKE_RUNSC)
    fake.chmod(0o755)
    lab.inventory(tmp_path / "inventory.toml")
    (tmp_path / "m.toml").write_text(
        f'name = "h"\ninventory = "inventory.toml"\n[runtimes.fake]\nkind = "runsc"\n'
        f'binary = "{fake}"\n'
    )
    done = harness_cli("hosts", tmp_path / "m.toml", "--host", "trusted")
    _assert_inert(done.stdout + done.stderr)
    assert "\\x1b]0;pwned" in done.stdout and "\\u202e" in done.stdout, done.stdout


def test_a_megabyte_kernel_string_is_shortened_and_inert(tmp_path: Path) -> None:
    """A host whose `uname` answers 1 MB of text with escapes in it: `hosts` prints
    a short, visible line, and its JSON keeps a bounded string."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    kernel = HOSTILE.replace(" ", "") + "k" * 1_000_000
    (tmp_path / "release").write_text(kernel)
    uname = bin_dir / "uname"
    uname.write_text(
        f'#!/bin/sh\nprintf \'%s %s\\n\' "$(cat {tmp_path}/release)" "$(/bin/uname -m)"\n'
    )
    uname.chmod(0o755)
    (tmp_path / "inv.toml").write_text(
        f'[hosts.local]\ntransport = "local"\nworkdir = "{tmp_path}/w"\n'
    )
    (tmp_path / "m.toml").write_text(
        'name = "h"\ninventory = "inv.toml"\n[runtimes.host]\nkind = "host"\n'
    )
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = _with_env(env, "hosts", tmp_path / "m.toml")
    _assert_inert(done.stdout + done.stderr)
    assert done.code == 0, done.stderr
    assert len(done.stdout) < 2000, len(done.stdout)
    done = _with_env(env, "hosts", tmp_path / "m.toml", "--format", "json")
    (entry,) = json.loads(done.stdout)
    assert len(entry["kernel"]) <= 200 and entry["kernel"].startswith("\x1b]0;pwned")
