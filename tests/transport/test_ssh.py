"""The SSH transport against real sshd: trust, quoting, files, limits, retries."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import anyio
import pytest

from harness.errors import HostKeyError, TransportError
from harness.matrix.models import Host
from harness.transport import LocalTransport, SSHTransport
from harness.transport.retry import connect_with_retries
from harness.transport.ssh import config_sets_ciphers, has_aes_instructions
from tests.conftest import Lab
from tests.lab import Sshd, free_port, keygen, start_sshd

pytestmark = pytest.mark.anyio

HOSTILE = [
    "$(touch MARK)",
    "`touch MARK`",
    "a;touch MARK",
    "'q'\"dq\"",
    "x\ny",
    "é🙂",
    "-rf",
    "*",
    "~",
]


def _host(lab: Lab, sshd: Sshd, **extra: object) -> Host:
    fields: dict[str, object] = {
        "name": sshd.name,
        "transport": "ssh",
        "address": sshd.address,
        "port": sshd.port,
        "user": "root",
        "identity_file": lab.client_key,
        "known_hosts": lab.known_hosts,
        "connect_timeout": 10.0,
    }
    fields.update(extra)
    return Host.model_validate(fields)


async def test_unknown_host_key_is_refused(lab: Lab) -> None:
    """Strict checking: a key not in known_hosts refuses the host, saying why."""
    with pytest.raises(HostKeyError, match="host key not verifiable"):
        async with SSHTransport(_host(lab, lab.stranger)):
            pass


async def test_accept_new_records_an_unknown_key(lab: Lab, tmp_path: Path) -> None:
    """With the opt-in, a never-seen key is trusted once and written to known_hosts."""
    known = tmp_path / "known_hosts"
    shutil.copy(lab.known_hosts, known)
    host = _host(lab, lab.stranger, known_hosts=known, accept_new_host_key=True)
    async with SSHTransport(host) as t:
        assert (await t.run(["true"])).ok
    assert lab.stranger.host_pub.split()[1] in known.read_text()
    strict = _host(lab, lab.stranger, known_hosts=known)
    async with SSHTransport(strict) as t:  # now known: strict checking passes
        assert (await t.run(["true"])).ok


async def test_known_hosts_is_parsed_once_per_change(
    lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fleet's known_hosts is parsed once, not per connection; a changed file is re-read."""
    import asyncssh

    known = tmp_path / "known_hosts"
    shutil.copy(lab.known_hosts, known)
    reads: list[str] = []
    real = asyncssh.read_known_hosts

    def counting(path: str) -> asyncssh.SSHKnownHosts:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(asyncssh, "read_known_hosts", counting)
    for _ in range(3):
        async with SSHTransport(_host(lab, lab.trusted, known_hosts=known)) as t:
            assert (await t.run(["true"])).ok
    assert len(reads) == 1
    with pytest.raises(HostKeyError):
        async with SSHTransport(_host(lab, lab.stranger, known_hosts=known)):
            pass
    known.write_text(known.read_text() + lab.stranger.known_hosts_line() + "\n")
    async with SSHTransport(_host(lab, lab.stranger, known_hosts=known)) as t:
        assert (await t.run(["true"])).ok
    assert len(reads) == 2


async def test_changed_key_is_refused_even_with_accept_new(lab: Lab, tmp_path: Path) -> None:
    """A host whose recorded key differs is refused, opt-in or not."""
    known = tmp_path / "known_hosts"
    kind, key = lab.stranger.host_pub.split()[:2]
    known.write_text(f"[{lab.trusted.address}]:{lab.trusted.port} {kind} {key}\n")
    host = _host(lab, lab.trusted, known_hosts=known, accept_new_host_key=True)
    with pytest.raises(HostKeyError):
        async with SSHTransport(host):
            pass
    assert known.read_text().count("\n") == 1


@pytest.mark.parametrize("accept_new", [False, True])
async def test_a_changed_key_says_it_changed_and_how_to_fix_it(
    lab: Lab, tmp_path: Path, accept_new: bool
) -> None:
    """A changed key is not "untrusted": the error says it changed, shows the recorded
    and the presented fingerprints, and the ssh-keygen -R command for that file."""
    import asyncssh

    known = _changed_key_file(lab, tmp_path)
    old = asyncssh.import_public_key(lab.stranger.host_pub).get_fingerprint()
    new = asyncssh.import_public_key(lab.trusted.host_pub).get_fingerprint()
    host = _host(lab, lab.trusted, known_hosts=known, accept_new_host_key=accept_new)
    with pytest.raises(HostKeyError) as caught:
        async with SSHTransport(host):
            pass
    name = f"[{lab.trusted.address}]:{lab.trusted.port}"
    assert caught.value.reason == (
        f"host key changed: known_hosts has {old}, the host now presents {new};"
        f" if expected: ssh-keygen -R '{name}' -f {known}"
    )
    assert known.read_text().count("\n") == 1


async def test_every_argument_arrives_literally(lab: Lab, tmp_path: Path) -> None:
    """Hostile argv elements reach the remote program unchanged and never execute."""
    async with SSHTransport(_host(lab, lab.trusted)) as t:
        done = await t.run(
            ["sh", "-c", 'cd "$1" && shift && printf "%s\\0" "$@"', "x", str(tmp_path), *HOSTILE]
        )
    assert done.ok, done.stderr
    assert done.stdout.split("\0")[:-1] == HOSTILE
    assert not (tmp_path / "MARK").exists()


async def test_cipher_preference_is_negotiated(lab: Lab) -> None:
    """By default AES-GCM first where the CPU has AES instructions, chacha20-poly1305
    first elsewhere; an inventory's preference wins; the manifest says what was used."""
    async with SSHTransport(_host(lab, lab.trusted)) as t:
        default = t.describe()
    chacha = ("chacha20-poly1305@openssh.com",)
    async with SSHTransport(_host(lab, lab.trusted, ciphers=chacha)) as t:
        chosen = t.describe()
        assert (await t.run(["true"])).ok
    expected = "aes256-gcm@openssh.com" if has_aes_instructions() else chacha[0]
    assert default["cipher"] == expected
    assert chosen["cipher"] == chacha[0]
    assert chosen["host_key"] == "ssh-ed25519" and chosen["server_version"].startswith("SSH-2.0-")


def test_a_ciphers_line_in_the_users_config_is_left_to_it(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text("Host *\n  # Ciphers aes128-ctr\n  ServerAliveInterval 5\n")
    assert config_sets_ciphers.__wrapped__(str(config)) is False
    config.write_text("Host *\n  ciphers aes128-ctr\n")
    assert config_sets_ciphers.__wrapped__(str(config)) is True
    config.write_text("Host *\n  Ciphers=aes128-ctr\n")
    assert config_sets_ciphers.__wrapped__(str(config)) is True
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "fleet.conf").write_text("Host ci-*\n  Ciphers aes128-ctr\n")
    config.write_text(f"Include {tmp_path}/conf.d/*.conf\n")
    assert config_sets_ciphers.__wrapped__(str(config)) is True
    assert config_sets_ciphers.__wrapped__(str(tmp_path / "missing")) is False


@pytest.mark.parametrize(
    ("text", "aes"),
    [
        ("processor\t: 0\nflags\t\t: fpu sse2 aes pclmulqdq avx2\n", True),
        ("processor\t: 0\nflags\t\t: fpu sse2 avx2\n", False),
        ("processor\t: 0\nflags\t\t: fpu aes\n", False),  # no carry-less multiply: slow GCM
        ("processor\t: 0\nFeatures\t: fp asimd aes pmull sha1\n", True),
        ("", False),
    ],
)
def test_aes_instructions_are_read_from_cpuinfo(tmp_path: Path, text: str, aes: bool) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(text)
    assert has_aes_instructions.__wrapped__(str(cpuinfo)) is aes
    assert has_aes_instructions.__wrapped__(str(tmp_path / "missing")) is False


async def test_files_round_trip(lab: Lab, tmp_path: Path) -> None:
    """put_file and get_file move bytes unchanged, with the mode asked for."""
    src = tmp_path / "src.bin"
    src.write_bytes(bytes(range(256)) * 64)
    async with SSHTransport(_host(lab, lab.trusted)) as t:
        await t.put_file(src, str(tmp_path / "up.bin"), mode=0o750)
        await t.get_file(str(tmp_path / "up.bin"), tmp_path / "down.bin")
    assert (tmp_path / "down.bin").read_bytes() == src.read_bytes()
    assert (tmp_path / "up.bin").stat().st_mode & 0o777 == 0o750


async def test_files_are_staged_without_the_sftp_subsystem(lab: Lab, tmp_path: Path) -> None:
    """A host whose sshd has no SFTP subsystem still takes and gives files: they go
    over the exec channel that commands use, bytes and mode unchanged."""
    bare = start_sshd(
        tmp_path, name="nosftp", address=lab.trusted.address,
        authorized=lab.folder / "authorized_keys", sftp=False,
    )  # fmt: skip
    try:
        src = tmp_path / "src.bin"
        src.write_bytes(bytes(range(256)) * 9000)  # 2.3 MB: more than one chunk
        known = tmp_path / "known_hosts"
        host = _host(lab, bare, known_hosts=known, accept_new_host_key=True)
        async with SSHTransport(host) as t:
            await t.put_file(src, str(tmp_path / "up.bin"), mode=0o750)
            await t.get_file(str(tmp_path / "up.bin"), tmp_path / "down.bin")
        assert (tmp_path / "down.bin").read_bytes() == src.read_bytes()
        assert (tmp_path / "up.bin").stat().st_mode & 0o777 == 0o750
    finally:
        bare.stop()


async def test_sessions_are_capped_per_host(lab: Lab) -> None:
    """Many concurrent commands share one connection within max_sessions."""
    async with SSHTransport(_host(lab, lab.trusted, max_sessions=3)) as t:
        results: list[bool] = []

        async def one() -> None:
            results.append((await t.run(["sleep", "0.2"])).ok)

        started = time.monotonic()
        async with anyio.create_task_group() as tg:
            for _ in range(12):
                tg.start_soon(one)
        elapsed = time.monotonic() - started
    assert results == [True] * 12
    assert elapsed >= 0.8  # 12 commands, 3 at a time, 0.2 s each


async def test_timeout_returns_partial_output(lab: Lab) -> None:
    """A command past its timeout comes back marked timed_out with what it printed."""
    async with SSHTransport(_host(lab, lab.trusted)) as t:
        done = await t.run(["sh", "-c", "echo early; exec sleep 30"], timeout=1.0)
    assert done.timed_out and not done.ok
    assert "early" in done.stdout


async def test_connect_retries_until_sshd_comes_up(lab: Lab, tmp_path: Path) -> None:
    """Connection refused is transient: the connect is retried with backoff."""
    port = free_port("127.0.0.5")
    started: list[Sshd] = []
    timer = threading.Timer(
        1.0,
        lambda: started.append(
            start_sshd(
                tmp_path,
                name="late",
                address="127.0.0.5",
                authorized=lab.folder / "authorized_keys",
                port=port,
            )
        ),
    )
    timer.start()
    try:
        late_known = tmp_path / "known_hosts"
        host = _host(
            lab,
            lab.trusted,
            name="late",
            address="127.0.0.5",
            port=port,
            known_hosts=late_known,
            accept_new_host_key=True,
            connect_retries=5,
        )
        transport = SSHTransport(host)
        await connect_with_retries(transport, host)
        assert (await transport.run(["true"])).ok
        await transport.aclose()
    finally:
        timer.join()
        for sshd in started:
            sshd.stop()


async def test_refused_login_is_not_retried(lab: Lab, tmp_path: Path) -> None:
    """A failed login is final: no retries, a clear reason."""
    keygen(tmp_path / "stranger_key", "nobody")
    host = _host(lab, lab.trusted, identity_file=tmp_path / "stranger_key", connect_retries=5)
    started = time.monotonic()
    with pytest.raises(TransportError, match=r"authentication failed") as info:
        await connect_with_retries(SSHTransport(host), host)
    assert not info.value.transient
    assert time.monotonic() - started < 5


async def test_local_transport_kills_the_process_group_on_timeout(tmp_path: Path) -> None:
    """A local command past its timeout is killed with everything it started."""
    marker = f"sleep 77.{time.monotonic_ns() % 1000}"
    done = await LocalTransport().run(["sh", "-c", f"{marker} & {marker}"], timeout=0.5)
    assert done.timed_out
    await anyio.sleep(0.2)
    out = await LocalTransport().run(["pgrep", "-f", marker])
    assert out.stdout.strip() == ""


async def test_flood_over_ssh_is_capped(lab: Lab) -> None:
    """A command printing more than MAX_OUTPUT on one line comes back capped, with its
    exit status, as over the local transport; stderr is capped the same way."""
    from harness.transport.base import MAX_OUTPUT

    flood = f"head -c {MAX_OUTPUT + 5_000_000} /dev/zero | tr '\\0' x"
    async with SSHTransport(_host(lab, lab.trusted)) as t:
        done = await t.run(["sh", "-c", f"{flood}; {flood} >&2; exit 7"], timeout=120)
    assert done.exit_status == 7
    assert len(done.stdout) == MAX_OUTPUT and len(done.stderr) == MAX_OUTPUT


async def test_endless_output_over_ssh_ends_at_the_timeout(lab: Lab) -> None:
    """Output without end is read and dropped past the cap until the timeout."""
    from harness.transport.base import MAX_OUTPUT

    async with SSHTransport(_host(lab, lab.trusted)) as t:
        done = await t.run(
            ["sh", "-c", "yes yyyyyyyyyyyyyyyyyyyyyyyyyyyy | tr -d '\\n'"], timeout=8
        )
        assert done.timed_out
        assert len(done.stdout) <= MAX_OUTPUT
        assert (await t.run(["true"])).ok  # the connection is still usable


def _changed_key_file(lab: Lab, tmp_path: Path) -> Path:
    """known_hosts holding another key for the trusted host, under its address."""
    known = tmp_path / "known_hosts"
    kind, key = lab.stranger.host_pub.split()[:2]
    known.write_text(f"[{lab.trusted.address}]:{lab.trusted.port} {kind} {key}\n")
    return known


async def test_accept_new_refuses_a_changed_key_under_another_spelling(
    lab: Lab, tmp_path: Path
) -> None:
    """Reached as `127.2` (the same address spelled otherwise), a changed key is
    still refused with accept_new_host_key, and nothing is recorded."""
    known = _changed_key_file(lab, tmp_path)
    spelled = "127." + lab.trusted.address.split(".")[-1]
    assert spelled != lab.trusted.address
    host = _host(lab, lab.trusted, known_hosts=known, accept_new_host_key=True)
    host = host.model_copy(update={"address": spelled})
    with pytest.raises(HostKeyError):
        async with SSHTransport(host):
            pass
    assert known.read_text().count("\n") == 1


async def test_accept_new_refuses_a_changed_key_through_an_ssh_config_alias(
    lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reached through an ssh_config `Hostname` alias, a changed key is refused too:
    the key is checked against every name asyncssh checked."""
    known = _changed_key_file(lab, tmp_path)
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "config").write_text(f"Host trusted-alias\n  Hostname {lab.trusted.address}\n")
    monkeypatch.setenv("HOME", str(home))
    host = _host(lab, lab.trusted, known_hosts=known, accept_new_host_key=True)
    host = host.model_copy(update={"address": "trusted-alias"})
    with pytest.raises(HostKeyError):
        async with SSHTransport(host):
            pass
    assert known.read_text().count("\n") == 1
