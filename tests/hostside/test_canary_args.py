"""What the canary is told and what it tells the probe: its abstract unix name, the
host's own addresses, its IPC objects (issue 27)."""

from __future__ import annotations

from harness.hostside.canary_setup import RunningCanary, _canary_argv, canary_ipc, canary_unix_name
from harness.matrix.models import Canary


def test_the_host_addresses_are_asked_for_only_where_the_canary_listens_there() -> None:
    """A netns canary's lease names the host's end of its veth: the probe tries it and
    the judge asks for `hostaddr` and `veth` (a frame reaches the canary over its link); a
    canary without one asks for none of them."""
    leased = RunningCanary("10.251.0.2", Canary(), "n", "/log", address6="fd5e::2")
    leased.subnet = {"host4": "10.251.0.1", "host6": "fd5e::1"}
    leased.unix_name = canary_unix_name("abc", 3)
    args = leased.probe_args()
    assert args[args.index("--host4") + 1] == "10.251.0.1"
    assert args[args.index("--host6") + 1] == "fd5e::1"
    assert args[args.index("--canary-unix") + 1] == "harness-canary-abc-3"
    assert leased.abilities() == ["ipv4", "ipv6", "capture", "hostaddr", "veth"]
    assert leased.addresses() == ["10.251.0.2", "fd5e::2", "10.251.0.1", "fd5e::1"]
    bare = RunningCanary("10.0.0.1", Canary(), "n", "/log")
    assert "--host4" not in bare.probe_args() and "--canary-unix" not in bare.probe_args()
    assert "hostaddr" not in bare.abilities() and "veth" not in bare.abilities()


def test_the_canary_listens_at_the_host_addresses_on_the_high_port() -> None:
    """A TCP and a UDP listener on each host address, IPv6 bracketed, and the abstract
    unix listener, besides the usual ones."""
    argv = _canary_argv(
        "/p", Canary(), v4="@A4@", v6="@A6@", nonce="n", high_port=40000, unix="u",
        ipc=("0x1234abcd", "/q"), hosts=("@H4@", "@H6@"),
    )  # fmt: skip
    pairs = list(zip(argv[2::2], argv[3::2], strict=False))
    assert ("--unix-abstract", "u") in pairs
    assert ("--sysv", "0x1234abcd") in pairs and ("--mqueue", "/q") in pairs
    for host in ("@H4@", "[@H6@]"):
        assert ("--host-tcp", f"{host}:40000") in pairs
        assert ("--host-udp", f"{host}:40000") in pairs
    plain = _canary_argv(
        "/p", Canary(), v4="10.0.0.1", v6="", nonce="n", high_port=1, unix="u", ipc=("0x1", "/q")
    )
    assert "--host-tcp" not in plain


def test_the_ipc_objects_are_the_runs_and_asked_for_only_where_the_canary_holds_them() -> None:
    """A SysV key and a POSIX queue name per run and host entry (never IPC_PRIVATE),
    handed to the probe; the judge asks the ipc-* checks only of a canary that has them."""
    key, name = canary_ipc("abc", 3)
    assert (key, name) != canary_ipc("abc", 4) and key != canary_ipc("abd", 3)[0]
    assert key.startswith("0x") and len(key) == 10 and int(key, 16) != 0
    assert name == "/harness-abc-3"
    held = RunningCanary("10.0.0.1", Canary(), "n", "/log")
    held.sysv_key, held.mq_name = key, name
    args = held.probe_args()
    assert args[args.index("--canary-sysv") + 1] == key
    assert args[args.index("--canary-mq") + 1] == name
    assert held.abilities()[-1] == "ipc"
    assert held.manifest()["ipc"] == {"sysv": key, "mqueue": name}
    bare = RunningCanary("10.0.0.1", Canary(), "n", "/log")
    assert "--canary-sysv" not in bare.probe_args() and "ipc" not in bare.abilities()


def test_the_ipc_objects_the_canary_could_not_make_are_named_by_their_check() -> None:
    """Its log's `unbound` IPC lines (not a taken sweep port, not a broken line) become
    the reason its control failed: a limit reached is not a fence."""
    from harness.hostside.canary_log import unbound_ipc

    log = "\n".join([
        '{"event":"ready","pid":7}',
        '{"event":"unbound","proto":"posix-mq","listen":"mq /harness-x-0",'
        '"error":"No file descriptors available"}',
        '{"event":"unbound","proto":"sysv-shm","listen":"shm 0x1","error":"File exists"}',
        '{"event":"unbound","proto":"tcp","listen":"[::1]:80","error":"Address in use"}',
        '{"event":"unbound", broken',
    ])  # fmt: skip
    assert unbound_ipc(log) == {
        "ipc-posix-mq": "No file descriptors available",
        "ipc-sysv-shm": "File exists",
    }
    assert unbound_ipc("") == {}


def test_a_listen_canary_captures_what_is_sent_to_its_addresses_and_says_so() -> None:
    """Listen mode asks for a capture of each of its addresses; `capture` is among what
    the canary can prove only once its start said the capture runs ("capture=on"),
    so a canary that could not open its packet socket leaves those checks unasked."""
    argv = _canary_argv(
        "/p", Canary(), v4="127.0.0.9", v6="::1", nonce="n", high_port=1, unix="u",
        ipc=("0x1", "/q"), capture_to=True,
    )  # fmt: skip
    pairs = list(zip(argv[2::2], argv[3::2], strict=False))
    assert [v for k, v in pairs if k == "--capture-to"] == ["127.0.0.9", "::1"]
    assert "--capture" not in argv
    netns = _canary_argv(
        "/p", Canary(), v4="@A4@", v6="@A6@", nonce="n", high_port=1, unix="u", ipc=("0x1", "/q")
    )
    assert "--capture-to" not in netns
    listen = Canary(mode="listen", address="127.0.0.9")
    running = RunningCanary("127.0.0.9", listen, "n", "/log")
    assert "capture" not in running.abilities() and running.manifest()["capture"] is False
    running.capture = True
    assert "capture" in running.abilities() and running.manifest()["capture"] is True


def test_a_dead_canary_not_yet_reaped_is_not_read() -> None:
    """A canary that died stays a zombie until the host's PID 1 reaps it (late, or never
    in a container whose first process is a shell): `kill -0` still answers for it, and
    its log of refused connections would pass for a live canary's."""
    import os
    import subprocess
    import tempfile
    import time

    from harness.hostside.canary_log import READ_LOG

    with tempfile.NamedTemporaryFile("w", suffix=".log") as log:
        log.write('{"event":"ready"}\n')
        log.flush()
        child = os.fork()
        if child == 0:
            os._exit(0)
        try:  # not reaped yet: a zombie, once the child has run to its exit
            # Up to 10 s, sleeping between looks: 200 reads back to back took a few
            # microseconds, and on a busy machine the child had not exited yet (the
            # canary was then alive, and read: the flake seen under load).
            zombie = False
            for _ in range(1000):
                with open(f"/proc/{child}/stat") as stat:
                    zombie = stat.read().rsplit(") ", 1)[1].startswith("Z")
                if zombie:
                    break
                time.sleep(0.01)
            assert zombie, "the child never exited"
            dead = subprocess.run(["sh", "-c", READ_LOG, "log", str(child), log.name],
                                  capture_output=True, text=True)  # fmt: skip
            live = subprocess.run(["sh", "-c", READ_LOG, "log", str(os.getpid()), log.name],
                                  capture_output=True, text=True)  # fmt: skip
        finally:
            os.waitpid(child, 0)
    assert dead.returncode == 3 and "no longer running" in dead.stderr, dead
    assert live.returncode == 0 and live.stdout == '{"event":"ready"}\n', live


def test_the_metadata_addresses_are_tried_only_where_the_canary_answers_there() -> None:
    """A lease line naming the metadata addresses: the probe is given them, the judge
    asks for `metadata`, arrivals there are the canary's, and the canary listens at
    each on the high port (TCP and UDP, IPv6 bracketed); without them, none of that."""
    leased = RunningCanary("10.251.0.2", Canary(), "n", "/log", address6="fd5e::2")
    leased.subnet = {"meta4": "169.254.169.254", "meta6": "fd00:ec2::254"}
    args = leased.probe_args()
    assert args[args.index("--meta4") + 1] == "169.254.169.254"
    assert args[args.index("--meta6") + 1] == "fd00:ec2::254"
    assert "metadata" in leased.abilities()
    assert {"169.254.169.254", "fd00:ec2::254"} <= set(leased.addresses())
    bare = RunningCanary("10.0.0.1", Canary(), "n", "/log")
    assert "--meta4" not in bare.probe_args() and "metadata" not in bare.abilities()
    argv = _canary_argv(
        "/p", Canary(), v4="@A4@", v6="@A6@", nonce="n", high_port=40000, unix="u",
        ipc=("0x1234abcd", "/q"), metadata=("169.254.169.254", "fd00:ec2::254"),
    )  # fmt: skip
    pairs = list(zip(argv[2::2], argv[3::2], strict=False))
    for address in ("169.254.169.254", "[fd00:ec2::254]"):
        assert ("--sweep-tcp", f"{address}:40000") in pairs
        assert ("--sweep-udp", f"{address}:40000") in pairs
