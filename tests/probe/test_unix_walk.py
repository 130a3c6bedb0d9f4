"""unix-proxy finds a proxy's socket wherever the sandbox's view holds it, for real:
the probe in a bubblewrap sandbox of the test's own (no network, a granted folder)
with a stand-in proxy bound where a bounded walk missed it (a path longer than
sun_path, twelve folders down), and a view with more sockets than are tried, which
is no proof either way (an error, never blocked)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.lab import require_tool
from tests.probe.egress_args import egress_argv, stand_in_proxy


def _sandboxed(allowed: Path, timeout_ms: int = 2000) -> dict[str, dict[str, object]]:
    """The egress scenario in bwrap, the granted folder at /allowed; its lines by id."""
    bwrap = require_tool("bwrap")
    probe, *args = egress_argv("127.0.0.1", 9)
    args[args.index("--check-timeout-ms") + 1] = str(timeout_ms)
    argv = [
        bwrap, "--unshare-net", "--unshare-pid", "--die-with-parent",
        "--ro-bind", probe, "/probe", "--bind", str(allowed), "/allowed",
        "--proc", "/proc", "--dev", "/dev", "--", "/probe", *args,
    ]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    got = {x["id"]: x for x in lines if x.get("type") == "check"}
    assert "unix-proxy" in got, done.stdout[-2000:] + done.stderr[-2000:]
    return got


def _bound(folder: Path, name: str = "proxy.sock") -> socket.socket:
    """A unix socket bound by its bare name from its folder (any path length)."""
    folder.mkdir(parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    here = os.open(".", os.O_RDONLY)
    try:
        os.chdir(folder)
        sock.bind(name)
    finally:
        os.fchdir(here)
        os.close(here)
    return sock


@pytest.mark.parametrize(
    "below",
    [
        pytest.param("p" * 120, id="longer-than-sun_path"),
        pytest.param("/".join("abcdefghijkl"), id="twelve-folders-down"),
    ],
)
def test_a_proxy_wherever_the_view_holds_it_is_found(tmp_path: Path, below: str) -> None:
    """Before, the walk stopped 8 levels down and dropped paths of 107 bytes or more:
    both proxies were "no unix socket is visible" (blocked), a false enforced."""
    allowed = tmp_path / "allowed"
    sock = _bound(allowed / below)
    try:
        stand_in_proxy(sock)
        line = _sandboxed(allowed)["unix-proxy"]
    finally:
        sock.close()
    assert line["outcome"] == "escaped", json.dumps(line)
    assert f"/allowed/{below}/proxy.sock"[:90] in str(line["detail"]), line


def test_more_sockets_than_are_tried_is_an_error_not_blocked(tmp_path: Path) -> None:
    """49 live sockets and more are not all tried: what was not tried is no proof.
    (Files nothing listens on, stale, are not counted: a connect is refused.)"""
    allowed = tmp_path / "allowed"
    socks = [_bound(allowed, f"s{i}.sock") for i in range(60)]
    for s in socks:
        s.listen(1)  # live, never answering a proxy request
    try:
        line = _sandboxed(allowed)["unix-proxy"]
    finally:
        for s in socks:
            s.close()
    assert line["outcome"] == "error", json.dumps(line)
    assert "more unix sockets in view than are tried" in str(line["detail"]), line


def test_stale_socket_files_are_not_counted(tmp_path: Path) -> None:
    """Files nothing listens on (a crashed daemon's, a test's) are refused at once: not
    counted against the sockets tried, so a view full of them is no error."""
    allowed = tmp_path / "allowed"
    socks = [_bound(allowed, f"s{i}.sock") for i in range(60)]  # bound, nobody listens
    for s in socks:
        s.close()
    line = _sandboxed(allowed)["unix-proxy"]
    assert line["outcome"] == "blocked", json.dumps(line)


@pytest.fixture(scope="module")
def stale_4100(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A granted folder of 4100 socket files nothing listens on (no proxy line counts
    them: a connect is refused), removed after: pytest keeps its last folders, and a
    later run of a reference that sees the host's /tmp would walk them."""
    allowed = tmp_path_factory.mktemp("stale") / "allowed"
    for i in range(4100):
        _bound(allowed, f"s{i}.sock").close()
    try:
        yield allowed
    finally:
        shutil.rmtree(allowed, ignore_errors=True)


def test_a_walk_cut_short_leaves_unix_host_no_proof(stale_4100: Path) -> None:
    """The walk stopped by its time (2 s for the check, most of it kept for the sweep's
    other lines): before, unix-host tried the sockets found so far (1023) and said
    blocked, those beyond never tried; now it is an error that names the cut, as
    unix-proxy's line is."""
    got = _sandboxed(stale_4100)
    line = got["unix-host"]
    assert line["outcome"] == "error", json.dumps(line)
    assert "the walk of the sandbox's view left sockets unfound" in str(line["detail"]), line
