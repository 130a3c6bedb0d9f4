"""The reference supervisor, started for real by its fixture (the same script harness
runs on a host): a network namespace of its own, the program read from stdin, its
policy, its decision records, its faults, and nothing left behind.

The allowed destination is a listener on this machine's loopback; clients run inside
the supervisor's namespace (`nsenter --net`), where loopback is the namespace's own,
so they reach the destination only through the supervisor.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.hostside.supervisor import (
    RunningSupervisor,
    restore_policy,
    revoke_hook,
    start_supervisor,
    stop_supervisor,
)
from harness.matrix.models import Canary
from harness.policy.models import Policy
from harness.transport import LocalTransport
from tests.lab import require_tool

pytestmark = pytest.mark.anyio

# Runs inside the namespace: argv[1] is a JSON list of steps, prints one JSON result each.
CLIENT = r"""
import json, socket, subprocess, sys
out = []
for step in json.loads(sys.argv[1]):
    kind, host, port = step["kind"], step["host"], step["port"]
    cur = {}
    out.append(cur)
    try:
        if kind == "dns":
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.settimeout(3)
            s.connect((host, port))
            s.send(bytes.fromhex(step["query"]))
            reply = s.recv(512)
            cur.update(rcode=reply[3] & 15, id=reply[:2].hex())
            continue
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(3)
        if step.get("share"):  # another program holds the socket while this one connects
            held = subprocess.Popen([step["share"], "30"], pass_fds=(s.fileno(),))
        s.connect((host, port))
        cur["src_port"] = s.getsockname()[1]
        s.sendall(step["send"].encode())
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        cur["reply"] = data.decode("latin-1")
    except OSError as exc:
        cur["error"] = exc.__class__.__name__
    finally:
        if step.get("share"):
            held.kill()
            held.wait()
print(json.dumps(out))
"""
# A query for "denied.test", type A, id 0x1234.
QUERY = "1234010000010000000000000664656e69656404746573740000010001"


def _listen() -> socket.socket:
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn, contextlib.suppress(OSError):  # one client's reset ends only its own
                conn.recv(256)
                conn.sendall(b"NONCE through\n")

    threading.Thread(target=serve, daemon=True).start()
    return server


@pytest.fixture
def destination() -> Iterator[tuple[int, int]]:
    """Two loopback listeners answering one line per connection: the allowed
    destination and a denied one (the canary's other TCP port)."""
    allowed, denied = _listen(), _listen()
    yield allowed.getsockname()[1], denied.getsockname()[1]
    allowed.close()
    denied.close()


async def _start(
    tmp_path: Path,
    ports: tuple[int, int],
    fault: Any = None,
    *,
    policy: Policy | None = None,
    probe_sha256: str = "",
) -> RunningSupervisor:
    for tool in ("ip", "nsenter"):
        require_tool(tool)
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    canary = Canary(allowed_port=ports[0], tcp_port=ports[1])
    running = await start_supervisor(
        LocalTransport(),
        runtime="t",
        workdir=str(tmp_path),
        run_id=secrets.token_hex(4),
        host_index=0,
        serial=0,
        canary=canary,
        canary_address="127.0.0.1",
        fault=fault,
        policy=policy,
        probe_sha256=probe_sha256,
    )
    assert running.error is None, running.error
    return running


def _inside(running: RunningSupervisor, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    argv = running.wrap((sys.executable, "-c", CLIENT, json.dumps(steps)))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    return list(json.loads(done.stdout))


def _records(running: RunningSupervisor) -> list[dict[str, Any]]:
    path = Path(running.records_path)
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


def _gone(pid: str) -> bool:
    """No such process, or only its zombie (exited, not yet reaped by its new parent)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def _sha256(path: str) -> str:
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


async def test_allows_denies_and_names_the_binary(
    tmp_path: Path, destination: tuple[int, int]
) -> None:
    """Transparent TCP to the allowed destination is relayed and attributed to the client's
    binary (path and sha256); a denied destination is closed unanswered, with a record;
    denied names are refused; HTTP CONNECT follows the same policy."""
    running = await _start(tmp_path, destination)
    allowed_port, denied_port = destination
    try:
        got = _inside(
            running,
            [
                {"kind": "tcp", "host": "127.0.0.1", "port": allowed_port, "send": "HARNESS a\n"},
                # Any address lands on the supervisor; this destination is not allowed.
                {"kind": "tcp", "host": "10.251.9.9", "port": denied_port, "send": "x\n"},
                {"kind": "dns", "host": "10.251.9.9", "port": 53, "query": QUERY},
                {
                    "kind": "tcp",
                    "host": "127.0.0.1",
                    "port": 3128,
                    "send": f"CONNECT 127.0.0.1:{allowed_port} HTTP/1.1\r\n\r\nHARNESS b\n",
                },
                {
                    "kind": "tcp",
                    "host": "127.0.0.1",
                    "port": 3128,
                    "send": "CONNECT 10.251.9.9:443 HTTP/1.1\r\n\r\n",
                },
            ],
        )
        records = _records(running)
    finally:
        await stop_supervisor(LocalTransport(), running)
    allowed, denied, dns, connect_ok, connect_denied = got
    assert allowed["reply"] == "NONCE through\n"
    assert denied.get("reply", "") == "" and "NONCE" not in str(denied)
    assert dns == {"rcode": 5, "id": "1234"}  # REFUSED
    assert "200 Connection established" in connect_ok["reply"]
    assert connect_ok["reply"].endswith("NONCE through\n")
    assert connect_denied["reply"].startswith("HTTP/1.1 403")
    by_port = {r["src_port"]: r for r in records}
    first = by_port[allowed["src_port"]]
    assert first["decision"] == "allow" and first["dst"] == f"127.0.0.1:{allowed_port}"
    assert first["upstream"].startswith("127.0.0.1:")
    exe = os.path.realpath(sys.executable)
    assert first["binary"]["path"] == exe and first["binary"]["sha256"] == _sha256(exe)
    assert by_port[denied["src_port"]]["decision"] == "deny"
    assert by_port[connect_denied["src_port"]]["decision"] == "deny"
    assert by_port[connect_ok["src_port"]]["proto"] == "connect"
    assert any(r["proto"] == "dns/udp" and r["qname"] == "denied.test" for r in records)
    # Torn down: namespace, process and files.
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert running.netns not in netns
    assert not Path(running.records_path).exists()
    assert _gone(running.pid)


@pytest.mark.parametrize("fault", ["wrong-binary", "no-record", "allow-all"])
async def test_each_fault_breaks_one_thing(
    tmp_path: Path, destination: tuple[int, int], fault: str
) -> None:
    """wrong-binary names the client's launcher; no-record writes nothing; allow-all
    relays a destination the policy denies."""
    running = await _start(tmp_path, destination, fault)
    try:
        # The client is started by a shell, so its launcher is another program.
        allowed_port, denied_port = destination
        steps = [{"kind": "tcp", "host": "127.0.0.1", "port": allowed_port, "send": "HARNESS a\n"}]
        argv = running.wrap(
            ("sh", "-c", '"$@"; :', "launcher", sys.executable, "-c", CLIENT, json.dumps(steps))
        )
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
        (allowed,) = json.loads(done.stdout)
        denied = _inside(
            running, [{"kind": "tcp", "host": "127.0.0.1", "port": denied_port, "send": "x\n"}]
        )[0]
        records = _records(running)
    finally:
        await stop_supervisor(LocalTransport(), running)
    assert allowed["reply"] == "NONCE through\n"
    if fault == "no-record":
        assert records == []
    elif fault == "wrong-binary":
        named = next(r for r in records if r["src_port"] == allowed["src_port"])["binary"]
        assert os.path.basename(named["path"]) in ("sh", "dash", "bash")
    else:
        # Not allowed, yet relayed to the host's listener.
        assert denied["reply"] == "NONCE through\n"
    if fault != "allow-all":
        assert denied.get("reply", "") == ""


# A network policy naming one binary: in the lab, it stands for the one whose sha256
# the supervisor is given.
NAMED = Policy.model_validate(
    {
        "network_policies": {
            "api": {"endpoints": [{"host": "api.example.test", "port": 443}], "binaries": ["/a"]}
        }
    }
)


@pytest.mark.parametrize(
    ("named", "fault", "reached"),
    [("client", None, True), ("other", None, False), ("other", "any-binary", True)],
)
async def test_a_policy_allows_its_destination_to_its_binaries_alone(
    tmp_path: Path, destination: tuple[int, int], named: str, fault: Any, reached: bool
) -> None:
    """Where the runtime's policy names binaries, the allowed destination is relayed to
    the binary of that sha256 and refused (with a record naming the binary) to any
    other; any-binary relays it to every binary."""
    client = os.path.realpath(sys.executable)
    sha = _sha256(client if named == "client" else "/bin/sh")
    running = await _start(tmp_path, destination, fault, policy=NAMED, probe_sha256=sha)
    allowed_port = destination[0]
    try:
        (got,) = _inside(
            running,
            [{"kind": "tcp", "host": "127.0.0.1", "port": allowed_port, "send": "HARNESS a\n"}],
        )
        records = _records(running)
    finally:
        await stop_supervisor(LocalTransport(), running)
    assert (got.get("reply") == "NONCE through\n") is reached
    record = next(r for r in records if r["src_port"] == got["src_port"])
    assert record["decision"] == ("allow" if reached else "deny")
    assert record["binary"]["sha256"] == _sha256(client)


@pytest.mark.parametrize("fault", [None, "first-holder"])
async def test_a_socket_two_programs_hold_names_neither(
    tmp_path: Path, destination: tuple[int, int], fault: Any
) -> None:
    """A client that starts another program with its socket inherited, and connects it
    while that program holds it too, may be either: the reference names neither and
    refuses it where the policy names binaries; first-holder names the first by pid
    order, the allowed client, and relays it."""
    client = os.path.realpath(sys.executable)
    running = await _start(tmp_path, destination, fault, policy=NAMED, probe_sha256=_sha256(client))
    sleep = subprocess.run(["sh", "-c", "command -v sleep"], capture_output=True, text=True)
    step = {"kind": "tcp", "host": "127.0.0.1", "port": destination[0], "send": "HARNESS a\n"}
    try:
        (got,) = _inside(running, [{**step, "share": sleep.stdout.strip()}])
        records = _records(running)
    finally:
        await stop_supervisor(LocalTransport(), running)
    record = next(r for r in records if r["src_port"] == got["src_port"])
    if fault is None:
        assert got.get("reply", "") == "" and record["decision"] == "deny", (got, record)
        assert record["identity"] == "unavailable", record
        assert "held by processes of 2 programs" in record["reason"], record
    else:
        assert got["reply"] == "NONCE through\n" and record["decision"] == "allow", record
        assert record["binary"]["sha256"] == _sha256(client)


async def test_without_python3_it_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A host without python3 gets one clear error, and no namespace is made."""
    require_tool("ip")
    empty = tmp_path / "bin"
    empty.mkdir()
    for tool in ("sh", "ip"):
        found = subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, text=True)
        (empty / tool).symlink_to(found.stdout.strip())
    monkeypatch.setenv("PATH", str(empty))
    running = await start_supervisor(
        LocalTransport(), runtime="t", workdir=str(tmp_path), run_id=secrets.token_hex(4),
        host_index=0, serial=0, canary=Canary(), canary_address="127.0.0.1", fault=None,
    )  # fmt: skip
    assert running.error == (
        "supervisor did not start: the reference supervisor needs python3 on the host"
    )
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert running.netns not in netns


def test_the_program_needs_nothing_but_the_standard_library() -> None:
    """reference.py is sent to hosts alone: it imports no module of harness, or of
    anything outside Python's standard library."""
    import ast

    source = Path(__file__).parents[2] / "harness" / "supervisor" / "reference.py"
    imported = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported


# Runs inside the namespace: holds a connection to 127.0.0.1:argv[1], says "held",
# prints its port, waits for a line on stdin, then prints what a line sent on it brought back.
HOLDER = r"""
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
print(s.getsockname()[1], flush=True)
sys.stdin.readline()
try:
    s.sendall(b"HARNESS held\n")
    print(repr(s.recv(4096)), flush=True)
except OSError as exc:
    print(exc.__class__.__name__, flush=True)
"""


@pytest.mark.parametrize("fault", [None, "keep-established"])
async def test_a_revoked_rule_stops_new_connections_and_cuts_held_ones(
    tmp_path: Path, destination: tuple[int, int], fault: Any
) -> None:
    """The revocation hook reloads the policy without the allowed destination and
    returns once the supervisor acknowledged it: a new connection is refused, the
    held one is cut (kept by keep-established); restoring the policy allows it again."""
    running = await _start(tmp_path, destination, fault)
    allowed_port = destination[0]
    step = {"kind": "tcp", "host": "127.0.0.1", "port": allowed_port, "send": "HARNESS a\n"}
    holder = subprocess.Popen(
        running.wrap((sys.executable, "-c", HOLDER, str(allowed_port))),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        port = int(holder.stdout.readline())
        # Relayed (recorded) before the revocation: one still connecting is refused.
        for _ in range(500):
            if any(r.get("src_port") == port for r in _records(running)):
                break
            time.sleep(0.01)
        revoked = subprocess.run(
            ["sh", "-c", revoke_hook(running)], capture_output=True, text=True, timeout=30
        )
        assert revoked.returncode == 0, revoked
        kept = 1 if fault else 0
        assert f"cut {1 - kept} established" in revoked.stdout
        holder.stdin.write("go\n")
        holder.stdin.flush()
        held = holder.stdout.readline().strip()
        (new,) = _inside(running, [step])
        await restore_policy(LocalTransport(), running)
        (again,) = _inside(running, [step])
    finally:
        holder.kill()
        holder.communicate()
        await stop_supervisor(LocalTransport(), running)
    assert ("NONCE through" in held) is bool(fault), held
    assert new.get("reply", "") == ""
    assert running.error is None and again["reply"] == "NONCE through\n"


def test_the_matrix_knows_every_fault_the_supervisor_has() -> None:
    """reference.py stands alone (it is sent to a host as one file), so its faults are
    listed twice: the matrix's `supervisor_fault` must accept exactly those."""
    from typing import get_args

    from harness.matrix.models import SupervisorFault
    from harness.supervisor.reference import FAULTS

    assert set(get_args(SupervisorFault)) == set(FAULTS) - {"none"}
