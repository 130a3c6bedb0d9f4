"""A URL's password and its secret-looking query values never reach a record or a
log line: the attribution source's URL is used for real (a live HTTP server that
refuses it, so its error is recorded), then every file and the `-v` log are read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from harness.text import REDACTED, redact_url, redact_urls
from tests.conftest import ROOT
from tests.supervisor import Supervisor

PASSWORD = "hunter2-pw-5d1e"
KEY = "k3y-8c2f0a"


def test_decisions_error_and_the_log_keep_no_url_secret(tmp_path: Path) -> None:
    """`decisions_error` names the URL without `user:password@` and with `key=`
    redacted; so do the manifest, every report and the `-v` log."""
    supervisor = Supervisor(mode="attribute", token="wanted")  # answers 401 to us
    supervisor.start()
    try:
        url = supervisor.url.replace("http://", f"http://ops:{PASSWORD}@") + f"?key={KEY}&n=1"
        (tmp_path / "inv.toml").write_text(
            f'[hosts.local]\ntransport = "local"\nworkdir = "{tmp_path}/w"\n'
        )
        (tmp_path / "m.toml").write_text(
            'name = "s"\ninventory = "inv.toml"\nscenarios = ["attribution", "mechanisms"]\n'
            '[runtimes.cmd]\nkind = "command"\nargv = ["{probe}", "{args}"]\n'
            f'attribution = {{ source = "http", url = "{url}", '
            f'allowed = "{supervisor.allowed}" }}\n'
        )
        done = subprocess.run(
            [sys.executable, "-m", "harness", "-v", "run", str(tmp_path / "m.toml"),
             "--out", str(tmp_path / "out"), "--report", "junit", "--report", "markdown",
             "--report", "html", "--report", "json"],
            capture_output=True, text=True, cwd=ROOT, timeout=180,
        )  # fmt: skip
    finally:
        supervisor.stop()
    assert done.returncode in (0, 1, 3), done.stdout + done.stderr
    cells = (tmp_path / "out" / "cells.jsonl").read_text()
    assert "decisions_error" in cells and "HTTP 401" in cells, cells[:2000]
    assert f"key={REDACTED}" in cells
    assert "HTTP Request: GET" in done.stderr  # the -v log did name the URL
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert PASSWORD.encode() not in data and KEY.encode() not in data, path
    for stream in (done.stdout, done.stderr):
        assert PASSWORD not in stream and KEY not in stream, stream[-2000:]


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=12)


@given(user=_WORD, password=_WORD, secret=_WORD, name=st.sampled_from(["key", "api_key",
       "token", "access_token", "sig", "X-Amz-Signature", "password"]), rest=_WORD)  # fmt: skip
def test_redacted_urls_keep_no_secret(
    user: str, password: str, secret: str, name: str, rest: str
) -> None:
    """Whatever the credentials and wherever the URL sits in a line, none survive;
    the host, the path and the plain query values do."""
    url = f"https://{user}:{password}@example.test:8443/p/{rest}?{name}={secret}&plain={rest}"
    for shown in (redact_url(url), redact_urls(f"GET {url}: HTTP 401")):
        assert f":{password}@" not in shown and f"={secret}&" not in shown, shown
        assert f"example.test:8443/p/{rest}?" in shown and f"plain={rest}" in shown
        assert f"{name}={REDACTED}" in shown
