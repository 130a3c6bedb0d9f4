"""tcp-proxy asks every relay on TCP the workload can reach without leaving its
network namespace, for real: a stand-in proxy listening on the loopback of a network
namespace of the test's own (a sidecar: found among the namespace's listeners), and one
the environment names, with credentials, where the probe stands in the test's own
namespace (whose listeners are asked only as the host allows: never without its word,
never one it skips). Loopback only."""

from __future__ import annotations

import json
import os
import socket
import subprocess

from tests.lab import require_tool
from tests.probe.egress_args import egress_argv, run_beside, stand_in_proxy

SIDECAR = """import socket, sys, time
sys.path.insert(0, {root!r})
from tests.probe.egress_args import stand_in_proxy
s = socket.socket()
s.bind(("127.0.0.1", 3128))
stand_in_proxy(s)
print("up", flush=True)
time.sleep(120)
"""


def _lines(stdout: str) -> dict[str, dict[str, object]]:
    lines = [json.loads(x) for x in stdout.splitlines() if x.startswith("{")]
    return {x["id"]: x for x in lines if x.get("type") == "check"}


def test_a_sidecar_proxy_on_the_sandboxs_own_loopback_is_found() -> None:
    """Before, nothing tried a TCP listener of the sandbox's own namespace: a sidecar
    relaying to anywhere was certified enforced."""
    require_tool("unshare")
    done = run_beside(SIDECAR.format(root=os.getcwd()), "sidecar")
    line = _lines(done.stdout).get("tcp-proxy")
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    assert line["outcome"] == "escaped", json.dumps(line)
    assert "through TCP proxy 127.0.0.1:3128: the nonce came back" in str(line["detail"])


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
