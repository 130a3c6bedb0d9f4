"""tcp-proxy asks every relay on TCP the workload can reach without leaving its
network namespace, for real: a stand-in proxy listening on the loopback of a network
namespace of the test's own (a sidecar: found among the namespace's listeners), and one
the environment names, with credentials, where the probe stands in the test's own
namespace (whose listeners are asked only as the host allows: never without its word,
never one it skips); a proxy that wants the login the environment gives (HTTP Basic,
SOCKS5 username/password), and a plain forward HTTP proxy that refuses CONNECT but
sends an absolute-URI GET on to the canary. Loopback only."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from harness.probe.build import build_probe
from tests.lab import free_port, require_tool
from tests.probe.egress_args import (
    TAG,
    egress_argv,
    far_listener,
    forward_proxy,
    login_proxy,
    run_across,
    run_beside,
    stand_in_proxy,
)

SIDECAR = """import socket, sys, time
sys.path.insert(0, {root!r})
from tests.probe.egress_args import stand_in_proxy
s = socket.socket()
s.bind(("127.0.0.1", 3128))
stand_in_proxy(s)
print("up", flush=True)
time.sleep(120)
"""


LOGIN_SIDECAR = """import socket, sys, time
sys.path.insert(0, {root!r})
from tests.probe.egress_args import login_proxy
s = socket.socket()
s.bind(("127.0.0.1", 3128))
login_proxy(s, "build", "s3cret")
print("up", flush=True)
time.sleep(120)
"""


# A relay speaking SOCKS4 alone (an older one's dialect): any other first byte closed at
# once, a CONNECT granted (90) where `grant`, else rejected (91); it answers the HARNESS
# line as the canary would, the nonce n1, and says on stderr what user id it was sent.
SOCKS4_SIDECAR = """import socket, sys, threading, time
grant = {grant}
s = socket.socket()
s.bind(("127.0.0.1", 1080))
s.listen(8)
def one(c):
    with c:
        c.settimeout(3)
        try:
            head = c.recv(8)
            if len(head) < 8 or head[0] != 4 or head[1] != 1:
                return
            user = b""
            while not user.endswith(b"\\0"):
                user += c.recv(1)
            print("socks4 user id", user[:-1], file=sys.stderr, flush=True)
            c.sendall(bytes([0, 90 if grant else 91]) + bytes(6))
            if grant and c.recv(512).startswith(b"HARNESS "):
                c.sendall(b"NONCE n1\\n")
        except OSError:
            pass
def serve():
    while True:
        threading.Thread(target=one, args=(s.accept()[0],), daemon=True).start()
threading.Thread(target=serve, daemon=True).start()
print("up", flush=True)
time.sleep(120)
"""


def _lines(stdout: str) -> dict[str, dict[str, object]]:
    lines = [json.loads(x) for x in stdout.splitlines() if x.startswith("{")]
    return {x["id"]: x for x in lines if x.get("type") == "check"}


def _through(env: dict[str, str], canary_port: int = 9) -> subprocess.CompletedProcess[str]:
    """The probe's egress run in the test's own network namespace (as harness tells
    it: --host-ns), with `env` added to its environment."""
    return subprocess.run(
        egress_argv("127.0.0.1", canary_port), capture_output=True, text=True, timeout=120,
        check=False, env={**os.environ, **env},
    )  # fmt: skip


def test_a_sidecar_proxy_on_the_sandboxs_own_loopback_is_found() -> None:
    """Before, nothing tried a TCP listener of the sandbox's own namespace: a sidecar
    relaying to anywhere was certified enforced."""
    require_tool("unshare")
    done = run_beside(SIDECAR.format(root=os.getcwd()), "sidecar")
    line = _lines(done.stdout).get("tcp-proxy")
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    assert line["outcome"] == "escaped", json.dumps(line)
    assert "through TCP proxy 127.0.0.1:3128: the nonce came back" in str(line["detail"])


@pytest.mark.parametrize("grant", [True, False])
def test_a_relay_speaking_socks4_alone_is_asked_so(grant: bool) -> None:
    """Before, a relay that closed on HTTP CONNECT and on SOCKS5's greeting was asked
    nothing more: a SOCKS4 sidecar relaying to anywhere was certified enforced. Now it is
    asked by SOCKS4 (the marker its user id) and escapes naming the way; one that rejects
    the request (91) is blocked, naming both dialects."""
    require_tool("unshare")
    done = run_beside(SOCKS4_SIDECAR.format(grant=grant), "socks4")
    line = _lines(done.stdout).get("tcp-proxy")
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    if grant:
        assert line["outcome"] == "escaped", json.dumps(line)
        assert "SOCKS4 through TCP proxy 127.0.0.1:1080: the nonce came back" in str(line["detail"])
    else:
        assert line["outcome"] == "blocked", json.dumps(line)


def test_a_proxy_the_environment_names_is_tried_and_its_credentials_never_printed() -> None:
    """Standing in the test's own network namespace (as harness tells it: --host-ns),
    the probe sends nothing to that namespace's listeners, but asks the proxy
    http_proxy names; its password appears nowhere in the output."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    stand_in_proxy(sock)
    env = {**os.environ, "http_proxy": f"http://user:s3cret-pw@localhost:{port}/"}
    try:
        done = subprocess.run(
            egress_argv("127.0.0.1", 9), capture_output=True, text=True, timeout=120,
            check=False, env=env,
        )  # fmt: skip
    finally:
        sock.close()
    line = _lines(done.stdout).get("tcp-proxy")
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    assert line["outcome"] == "escaped", json.dumps(line)
    assert f"TCP proxy 127.0.0.1:{port}" in str(line["detail"]), line
    assert "s3cret-pw" not in done.stdout + done.stderr


def test_the_hosts_loopback_listeners_are_asked_but_those_it_skips() -> None:
    """Standing in the test's own network namespace (the host's, for a co-located
    sandbox), told by the host which listeners to leave alone (its SSH daemons'), the
    probe asks every other loopback listener: a host egress proxy nothing names is
    found, and the one the host skips is never connected to."""
    relay, skipped = socket.socket(), socket.socket()
    relay.bind(("127.0.0.2", 0))  # 127.0.0.1 is egress_argv's canary: never a relay
    skipped.bind(("127.0.0.2", 0))
    relay_port = relay.getsockname()[1]
    stand_in_proxy(relay)
    skipped.listen(8)
    argv = egress_argv("127.0.0.1", 9)
    at = argv.index("egress-confinement")
    argv[at:at] = ["--host-tcp-skip", f"127.0.0.2:{skipped.getsockname()[1]}"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        skipped.setblocking(False)
        try:
            skipped.accept()
            connected = True
        except BlockingIOError:
            connected = False
    finally:
        relay.close()
        skipped.close()
    line = _lines(done.stdout).get("tcp-proxy")
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    assert line["outcome"] == "escaped", json.dumps(line)
    assert f"through TCP proxy 127.0.0.2:{relay_port}: the nonce came back" in str(line["detail"])
    assert not connected, "the listener the host skips was connected to"


def test_a_proxy_wanting_the_login_the_environment_gives_is_asked_with_it() -> None:
    """Before, the login in http_proxy was dropped: the proxy's 407 was taken for a
    refusal, and the sandbox certified enforced. Its password (percent-encoded in the
    URL) appears nowhere in the output, nor does its Basic token."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    login_proxy(sock, "build", "s3cr@t")
    try:
        done = _through({"http_proxy": f"http://build:s3cr%40t@127.0.0.1:{port}"})
    finally:
        sock.close()
    line = _lines(done.stdout).get("tcp-proxy")
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    assert line["outcome"] == "escaped", json.dumps(line)
    assert (
        f"HTTP CONNECT with the credentials http_proxy names through TCP proxy 127.0.0.1:{port}:"
        " the nonce came back" in str(line["detail"])
    ), line
    token = base64.b64encode(b"build:s3cr@t").decode()
    for secret in ("s3cr@t", "s3cr%40t", token):
        assert secret not in done.stdout + done.stderr


def test_a_socks5_proxy_wanting_a_login_is_sent_it() -> None:
    """A SOCKS5 server asking for username and password (RFC 1929) that all_proxy gives:
    the login is offered, sent, and the nonce comes back."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    login_proxy(sock, "build", "pw", socks_only=True)
    try:
        done = _through({"all_proxy": f"socks5://build:pw@127.0.0.1:{port}"})
    finally:
        sock.close()
    line = _lines(done.stdout).get("tcp-proxy")
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    assert line["outcome"] == "escaped", json.dumps(line)
    assert f"SOCKS5 with the credentials all_proxy names through TCP proxy 127.0.0.1:{port}" in str(
        line["detail"]
    )


def test_a_proxy_wanting_a_login_nothing_gives_is_no_proof() -> None:
    """A sidecar asking for a login the environment does not hand over (407, SOCKS5
    0xFF): the workload may hold it elsewhere, so the line is an error, never blocked."""
    require_tool("unshare")
    done = run_beside(LOGIN_SIDECAR.format(root=os.getcwd()), "login-sidecar")
    line = _lines(done.stdout).get("tcp-proxy")
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    assert line["outcome"] == "error", json.dumps(line)
    assert "127.0.0.1:3128 asks HTTP CONNECT for a login" in str(line["detail"]), line


def _canary(log: Path) -> tuple[int, int]:
    """The real canary (nonce n1, egress_argv's) on a free loopback port: its pid, port."""
    port = free_port("127.0.0.1")
    argv = [str(build_probe().path), "canary", "--tcp", f"127.0.0.1:{port}", "--nonce", "n1",
            "--daemon", str(log)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=True)
    return int(done.stdout.strip().removeprefix("pid=")), port


def test_a_forward_proxy_refusing_connect_is_asked_by_an_absolute_uri_get(tmp_path: Path) -> None:
    """Before, a forward HTTP proxy that refuses CONNECT (405) and speaks no SOCKS was
    taken for a refusal. Now a GET with the canary's absolute URI goes through it; the
    real canary answers in HTTP (the proxy relays nothing else) and logs the marker."""
    log = tmp_path / "canary.log"
    pid, canary_port = _canary(log)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    forward_proxy(sock)
    try:
        done = _through({"HTTP_PROXY": f"http://127.0.0.1:{port}"}, canary_port)
    finally:
        sock.close()
        time.sleep(0.2)  # the canary's last line logged
        os.kill(pid, signal.SIGKILL)
    line = _lines(done.stdout).get("tcp-proxy")
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    assert line["outcome"] == "escaped", json.dumps(line)
    assert f"an absolute-URI GET through TCP proxy 127.0.0.1:{port}: the nonce came back" in str(
        line["detail"]
    )
    lines = [json.loads(x).get("line") for x in log.read_text().splitlines()]
    assert f"GET /harness/{TAG}/tcp-proxy HTTP/1.1" in lines, lines


def test_a_forward_proxy_refusing_the_canarys_port_is_asked_for_another(tmp_path: Path) -> None:
    """A forward proxy letting out the high port alone (403 else): the GET is asked
    again for the canary there, as CONNECT is."""
    log = tmp_path / "canary.log"
    pid, canary_port = _canary(log)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    forward_proxy(sock, {40000: canary_port})  # egress_argv's high port
    try:
        done = _through({"http_proxy": f"http://127.0.0.1:{port}"}, canary_port)
    finally:
        sock.close()
        os.kill(pid, signal.SIGKILL)
    line = _lines(done.stdout).get("tcp-proxy")
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    assert line["outcome"] == "escaped", json.dumps(line)
    assert "an absolute-URI GET through TCP proxy" in str(line["detail"])
    assert "(asked for the canary at port 40000: its own port refused)" in str(line["detail"])


ACROSS_CASES = {
    # A link with an IPv6 ULA alone: the host's end is the attached prefix's first address.
    "ula": ("fd5e:7a7a::2/64", "fd5e:7a7a::1/64", "", "fd5e:7a7a::1", 3128, "[fd5e:7a7a::1]:3128"),
    # Link-local alone, the default route via the host's fe80::1: asked with its link.
    "link-local": ("fe80::2/64", "fe80::1/64", "default via fe80::1 dev v0", "fe80::1%v1", 3128,
                   "[fe80::1%v0]:3128"),
    # At a port of no proxy's, but the host lists the listener bound to that address.
    "listed": ("fd5e:7a7a::2/64", "fd5e:7a7a::1/64", "", "fd5e:7a7a::1", 4321,
               "[fd5e:7a7a::1]:4321"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(ACROSS_CASES))
def test_a_proxy_at_an_ipv6_next_hop_nothing_names_is_found(case: str) -> None:
    """gateway-proxy's IPv6 twin, for real: a veth to a second namespace the test makes
    (the host's end), IPv6 alone on it, a proxy there that nothing names. Before, the
    host's end was asked only over IPv4 (its IPv4 next hops, its IPv4 listeners): the
    line said no TCP listener, a false enforced."""
    require_tool("unshare")
    require_tool("ip")
    near, far, route, address, port, shown = ACROSS_CASES[case]
    argv = egress_argv("127.0.0.1", 9)
    if case == "listed":
        at = argv.index("egress-confinement")
        argv[at:at] = ["--host-tcp", f"[{address}]:{port}"]
    code = far_listener("SOCK_STREAM", address, port, "tests.probe.egress_args:stand_in_proxy")
    done = run_across(code, near, far, argv, route=route)
    line = _lines(done.stdout).get("tcp-proxy")
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    assert line["outcome"] == "escaped", json.dumps(line)
    assert f"through TCP proxy {shown}: the nonce came back" in str(line["detail"]), line
