"""Secrets never reach results, logs or reports: a key passphrase and a bearer
token are used for real, then every file the run wrote and everything it
printed is scanned for them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import Lab
from tests.supervisor import Supervisor

PASSPHRASE = "correct-horse-battery-staple-7f3a"
TOKEN = "tok_live_9b1c55e0d2a64f0c8e7d"


def test_passphrase_and_token_never_written(lab: Lab, tmp_path: Path) -> None:
    """An encrypted identity and a token-protected decision source work, and
    neither secret appears in any file of the run or in its output."""
    key = tmp_path / "enc_key"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", PASSPHRASE, "-f", str(key)], check=True
    )
    authorized = lab.folder / "authorized_keys"
    original = authorized.read_text()
    authorized.write_text(original + Path(f"{key}.pub").read_text())
    supervisor = Supervisor(mode="attribute", token=TOKEN)
    supervisor.start()
    try:
        (tmp_path / "inv.toml").write_text(
            f'[hosts.trusted]\naddress = "{lab.trusted.address}"\nport = {lab.trusted.port}\n'
            f'user = "root"\nidentity_file = "{key}"\npassphrase_env = "KEY_PASSPHRASE"\n'
            f'known_hosts = "{lab.known_hosts}"\nworkdir = "{tmp_path}/work"\n'
        )
        (tmp_path / "m.toml").write_text(
            'name = "s"\ninventory = "inv.toml"\nscenarios = ["attribution", "mechanisms"]\n'
            '[runtimes.supervised]\nkind = "command"\nargv = ["{probe}", "{args}"]\n'
            f'attribution = {{ source = "http", url = "{supervisor.url}", '
            f'token_env = "DECISIONS_TOKEN", allowed = "{supervisor.allowed}" }}\n'
            'expect = { attribution = "enforced" }\n'
        )
        env = {**os.environ, "KEY_PASSPHRASE": PASSPHRASE, "DECISIONS_TOKEN": TOKEN}
        done = subprocess.run(
            [sys.executable, "-m", "harness", "-v", "run", str(tmp_path / "m.toml"),
             "--out", str(tmp_path / "out"), "--report", "junit", "--report", "markdown",
             "--report", "html"],
            capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
    finally:
        supervisor.stop()
        authorized.write_text(original)
    assert done.returncode in (0, 1, 3), done.stdout + done.stderr
    cells = (tmp_path / "out" / "cells.jsonl").read_text()
    assert '"status":"complete"' in cells  # the encrypted key really logged in
    assert supervisor.requests, "the token-protected source was really queried"
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert len(written) >= 3
    for path in written:
        data = path.read_bytes()
        assert PASSPHRASE.encode() not in data, path
        assert TOKEN.encode() not in data, path
    for stream in (done.stdout, done.stderr):
        assert PASSPHRASE not in stream and TOKEN not in stream
