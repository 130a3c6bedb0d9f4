"""dns-own and udp-relay ask every UDP listener of the sandbox's own network namespace,
for real: a stand-in forwarding resolver (a sidecar's dnsmasq that resolv.conf does not
name) and a stand-in datagram relay (a statsd shipper's) on the loopback of a network
namespace of the test's own, answering as the canary would through them; and, where
the probe stands in the test's own namespace (as harness tells it: --host-ns), that
namespace's listeners are never sent anything. Loopback only."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.lab import require_tool
from tests.probe.egress_args import (
    egress_argv,
    far_listener,
    run_across,
    run_beside,
    unhurried,
)

# A resolver that answers every query as the canary answers its TXT query (nonce=n1),
# as a forwarder to the canary would hand that answer back. Port 5354: 5353 is
# egress_argv's alternate resolver, which dns-alt-udp asks.
RESOLVER = """import socket, sys, time
sys.path.insert(0, {root!r})
from tests.probe.test_udp_listeners import stand_in_relay, stand_in_resolver
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 5354))
stand_in_resolver(s)
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind(("127.0.0.1", 8125))
stand_in_relay(r)
print("up", flush=True)
time.sleep(120)
"""


def _answer(query: bytes) -> bytes:
    """The TXT answer `nonce=n1` to `query` (its id and question kept)."""
    end = 12
    while query[end]:
        end += 1 + query[end]
    question = query[12 : end + 5]
    txt = b"nonce=n1"
    record = (
        b"\xc0\x0c\x00\x10\x00\x01\x00\x00\x00\x00"
        + (len(txt) + 1).to_bytes(2)
        + bytes([len(txt)])
        + txt
    )
    return query[:2] + b"\x81\x80\x00\x01\x00\x01\x00\x00\x00\x00" + question + record


def stand_in_resolver(sock: socket.socket) -> None:
    """Serve `sock` (bound, UDP) as a forwarder to the canary would answer. A daemon
    thread; closing the socket ends it."""

    def serve() -> None:
        while True:
            try:
                query, peer = sock.recvfrom(4096)
                sock.sendto(_answer(query), peer)
            except (OSError, IndexError):
                if sock.fileno() < 0:
                    return

    threading.Thread(target=serve, daemon=True).start()


def stand_in_relay(sock: socket.socket) -> None:
    """Serve `sock` (bound, UDP) as a datagram relay to the canary would answer: the
    nonce n1 to the HARNESS line; a DNS query goes nowhere (a datagram relay aimed at
    the canary's high port)."""

    def serve() -> None:
        while True:
            try:
                line, peer = sock.recvfrom(4096)
                if line.startswith(b"HARNESS "):
                    sock.sendto(b"NONCE n1\n", peer)
            except OSError:
                if sock.fileno() < 0:
                    return

    threading.Thread(target=serve, daemon=True).start()


def _lines(stdout: str) -> dict[str, dict[str, object]]:
    lines = [json.loads(x) for x in stdout.splitlines() if x.startswith("{")]
    return {x["id"]: x for x in lines if x.get("type") == "check"}


def test_sidecar_resolvers_and_relays_on_udp_are_asked() -> None:
    """Before, dns-own asked only resolv.conf's resolvers and nothing sent a datagram
    to a UDP listener: a sidecar's forwarding resolver, or a datagram relay, on the
    sandbox's own loopback was certified enforced."""
    require_tool("unshare")
    done = run_beside(RESOLVER.format(root=os.getcwd()), "resolver")
    line = _lines(done.stdout).get("dns-own")
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    assert line["outcome"] == "escaped", json.dumps(line)
    assert "127.0.0.1:5354 (a UDP listener of its namespace)" in str(line["detail"]), line
    relay = _lines(done.stdout)["udp-relay"]
    assert relay["outcome"] == "escaped", json.dumps(relay)
    assert "the nonce came back from 127.0.0.1:8125" in str(relay["detail"]), relay


def test_the_hosts_own_udp_listeners_are_never_asked() -> None:
    """Standing in the test's own network namespace, the probe sends nothing to a UDP
    listener there: it is the host's own service, not the sandbox's."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    stand_in_resolver(sock)
    try:
        done = subprocess.run(
            egress_argv("127.0.0.1", 9), capture_output=True, text=True, timeout=120,
            check=False,
        )  # fmt: skip
    finally:
        sock.close()
    line = _lines(done.stdout).get("dns-own")
    assert line, done.stdout[-2000:] + done.stderr[-2000:]
    assert f":{port}" not in str(line["detail"]), line
    assert line["outcome"] != "escaped", line
    relay = _lines(done.stdout)["udp-relay"]
    assert relay["outcome"] == "blocked", relay
    assert "host's network namespace" in str(relay["detail"]), relay


def test_a_shipper_at_an_ipv6_next_hop_is_sent_the_line() -> None:
    """gateway-udp over IPv6, for real: a veth to a second namespace the test makes (the
    host's end), an IPv6 ULA alone on it, a datagram relay there at a shipper's port
    that nothing names. Before, the shippers' ports were asked at IPv4 next hops alone."""
    require_tool("unshare")
    require_tool("ip")
    serve = "tests.probe.test_udp_listeners:stand_in_relay"
    code = far_listener("SOCK_DGRAM", "fd5e:7a7b::1", 8125, serve)
    argv = unhurried(egress_argv("127.0.0.1", 9))
    done = run_across(code, "fd5e:7a7b::2/64", "fd5e:7a7b::1/64", argv)
    relay = _lines(done.stdout).get("udp-relay")
    assert relay, done.stdout[-2000:] + done.stderr[-2000:]
    assert relay["outcome"] == "escaped", json.dumps(relay)
    assert "the nonce came back from [fd5e:7a7b::1]:8125" in str(relay["detail"]), relay


# The host's end of the probe's link (the far namespace), holding the address of another
# of its links too (on its loopback), where a shipper listens: "up" once it does.
OTHER_LINK_SHIPPER = """import socket, subprocess, sys, time
sys.path.insert(0, {root!r})
from tests.probe.test_udp_listeners import stand_in_relay
subprocess.run(["ip", "addr", "add", "10.247.99.1/32", "dev", "lo"], check=True)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.247.99.1", 8125))
stand_in_relay(s)
print("up", flush=True)
time.sleep(120)
"""


@pytest.mark.parametrize("routed", [True, False])
def test_a_shipper_on_another_link_of_the_hosts_is_sent_the_line(routed: bool) -> None:
    """A host takes datagrams for any address it holds, from whichever link they come:
    its shipper bound to the address of another of its links (listed by the host,
    --host-udp) is sent the line where the probe's default route leads through the host.
    Before, a listed socket was asked at the host's end of the canary's link and at next
    hops alone. Without the route it is out of reach, and blocked."""
    require_tool("unshare")
    require_tool("ip")
    argv = unhurried(egress_argv("127.0.0.1", 9))
    at = argv.index("egress-confinement")
    argv[at:at] = ["--host-udp", "10.247.99.1:8125"]
    code = OTHER_LINK_SHIPPER.format(root=os.getcwd())
    route4 = "default via 10.247.98.1" if routed else ""
    done = run_across(code, "10.247.98.2/30", "10.247.98.1/30", argv, route4=route4)
    relay = _lines(done.stdout).get("udp-relay")
    assert relay, done.stdout[-2000:] + done.stderr[-2000:]
    if routed:
        assert relay["outcome"] == "escaped", json.dumps(relay)
        assert "the nonce came back from 10.247.99.1:8125" in str(relay["detail"]), relay
    else:
        assert relay["outcome"] == "blocked", json.dumps(relay)
        assert "10.247.99.1:8125" in str(relay["detail"]), relay


# A process of another network namespace holding a datagram socket with a datagram
# queued for it, as a relay or a resolver holds its own: it reads it when told to.
OWNER = """import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
s.sendto(b"OWNER", s.getsockname())
print("up", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
try:
    print("kept" if s.recv(64, socket.MSG_DONTWAIT) == b"OWNER" else "other", flush=True)
except BlockingIOError:
    print("gone", flush=True)
"""

# In a PID namespace of the test's own (the owner and the probe alone in view), the
# owner in a network namespace, the probe in another.
BESIDE_AN_OWNER = """set -e
ip link set lo up
unshare -n sh -c 'ip link set lo up && exec "$0" -c "$1" "$2"' "$PY" "$OWNER" "$FLAG" > "$LOG" &
while ! grep -q up "$LOG"; do sleep 0.05; done
unshare -n sh -c 'ip link set lo up && exec "$@"' sh "$@" || true
touch "$FLAG"
wait
cat "$LOG"
"""


def test_a_datagram_socket_taken_from_another_process_is_never_read(tmp_path: Path) -> None:
    """held-fds sends through a socket it takes from another process (pidfd_getfd) but
    never reads it: what waits there is its owner's. Before, the probe read the owner's
    datagram (and, under load, took the answer a relay owed the sweep's udp-relay line
    from the relay's own socket: that line went unanswered)."""
    require_tool("unshare")
    env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PY": sys.executable, "OWNER": OWNER,
        "FLAG": str(tmp_path / "flag"), "LOG": str(tmp_path / "owner.log"),
    }  # fmt: skip
    done = subprocess.run(
        ["unshare", "-p", "-f", "--mount-proc", "sh", "-c", BESIDE_AN_OWNER, "sh",
         *egress_argv("127.0.0.1", 9)],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    held = _lines(done.stdout).get("held-fds")
    assert held, done.stdout[-2000:] + done.stderr[-2000:]
    assert "(taken by pidfd_getfd), fd" in str(held["detail"]), held
    assert "unconnected" in str(held["detail"]), held
    assert done.stdout.splitlines()[-1] == "kept", done.stdout[-500:]
