"""SSH via asyncssh: one connection per host, reused by every cell.

Host keys are checked strictly against the inventory's known_hosts (default
~/.ssh/known_hosts). An OpenSSH config cannot switch checking off: harness
always hands asyncssh an explicit known_hosts. Identity files, the agent and
~/.ssh/config (ProxyJump included) are honoured by asyncssh itself.
"""

from __future__ import annotations

import functools
import glob
import logging
import os
import re
import shlex
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from harness.errors import HarnessError, HostKeyError, TransportError
from harness.matrix.models import Host
from harness.transport.base import MAX_OUTPUT, Completed, Transport

with warnings.catch_warnings():
    # asyncssh imports cryptography's DSA classes when it is imported, and cryptography
    # 51 warns of DSA's removal then: a warning about a key type harness never offers,
    # which every user of the ssh transport would see. Only that warning is ignored.
    warnings.filterwarnings("ignore", message="DSA is deprecated", category=Warning)
    import asyncssh

log = logging.getLogger(__name__)
DEFAULT_KNOWN_HOSTS = Path("~/.ssh/known_hosts")
# Channels closed after a timeout may linger a moment; this bounds the wait.
CLOSE_GRACE = 2.0


# asyncssh's default ciphers, in its order: all AEAD or CTR modes.
CHACHA_FIRST = (
    "chacha20-poly1305@openssh.com",
    "aes256-gcm@openssh.com",
    "aes128-gcm@openssh.com",
    "aes256-ctr",
    "aes192-ctr",
    "aes128-ctr",
)
# The same set with AES-GCM first, for CPUs with AES instructions.
AES_FIRST = (CHACHA_FIRST[1], CHACHA_FIRST[0], *CHACHA_FIRST[2:])


@functools.cache
def has_aes_instructions(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Does this CPU encrypt AES-GCM in hardware (x86 aes+pclmulqdq, Arm aes+pmull)?"""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            flags = set(value.split())
            return "aes" in flags and bool(flags & {"pclmulqdq", "pmull"})
    return False


@functools.cache
def config_sets_ciphers(path: str = "~/.ssh/config", depth: int = 0) -> bool:
    """Does the user's OpenSSH config (or a file it includes) choose ciphers, for any
    host? Then harness leaves the choice to it: asyncssh applies the config unless
    the caller overrides it, and its default set is sound either way."""
    try:
        text = Path(path).expanduser().read_text(errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        words = re.split(r"[\s=]+", line.strip(), maxsplit=1)
        key = words[0].lower()
        if key == "ciphers":
            return True
        if key == "include" and len(words) == 2 and depth < 8:
            for pattern in words[1].split():
                found = Path(pattern).expanduser()
                found = found if found.is_absolute() else Path("~/.ssh").expanduser() / found
                if any(config_sets_ciphers(m, depth + 1) for m in sorted(glob.glob(str(found)))):
                    return True
    return False


def default_ciphers() -> tuple[str, ...]:
    """asyncssh's cipher set, ordered as Go's TLS and BoringSSL order theirs: AES-GCM
    first where the CPU has AES instructions (constant-time there, and the cheapest
    per packet: asyncssh's chacha20-poly1305 builds three cipher contexts per packet,
    a quarter of the controller's SSH CPU), chacha20-poly1305 first elsewhere."""
    return AES_FIRST if has_aes_instructions() else CHACHA_FIRST


# Parsed known_hosts files, by path, with the (mtime, size) they were read at.
_KNOWN_HOSTS: dict[str, tuple[tuple[int, int], asyncssh.SSHKnownHosts]] = {}


def _load_known_hosts(path: Path) -> asyncssh.SSHKnownHosts:
    """Parse a known_hosts file once per run, not once per connection.

    Given a path, asyncssh reads and parses the whole file (every key decoded) on
    each connect: with N hosts in the file, a fleet of N costs N^2 key imports.
    A changed file (accept_new_host_key appends to it) is read again.
    """
    stat = path.stat()
    stamp = (stat.st_mtime_ns, stat.st_size)
    cached = _KNOWN_HOSTS.get(str(path))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    known = asyncssh.read_known_hosts(str(path))
    _KNOWN_HOSTS[str(path)] = (stamp, known)
    return known


def _known_hosts(host: Host) -> asyncssh.SSHKnownHosts | bytes:
    path = (host.known_hosts or DEFAULT_KNOWN_HOSTS).expanduser()
    if path.is_file():
        return _load_known_hosts(path)
    if host.known_hosts is not None and not host.accept_new_host_key:
        raise HostKeyError(host.name, f"known_hosts file {path} does not exist")
    return b""  # no file: nothing is trusted, every key is refused


# put_file's command: $1 the destination, $2 its mode (octal). Written private
# (umask), then given its mode: nothing half-written is ever runnable by others.
PUT_SCRIPT = r"""umask 077
cat > "$1" && chmod "$2" "$1"
"""
CHUNK = 1 << 20  # bytes per write: the channel's flow control paces the rest


def _describe(exc: BaseException) -> str:
    if isinstance(exc, asyncssh.HostKeyNotVerifiable):
        return f"host key not verifiable: {exc.reason}"
    if isinstance(exc, asyncssh.PermissionDenied):
        return f"authentication failed: {exc.reason}"
    if isinstance(exc, asyncssh.KeyImportError | asyncssh.KeyEncryptionError):
        return f"identity file unusable: {exc}"
    if isinstance(exc, asyncssh.DisconnectError):
        return f"disconnected: {exc.reason}"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, TimeoutError):
        return "timed out while connecting"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc) or type(exc).__name__


class SSHTransport(Transport):
    """A host reached over SSH, with a cap on concurrent sessions (MaxSessions)."""

    def __init__(self, host: Host) -> None:
        self.host = host.name
        self._spec = host
        self._conn: asyncssh.SSHClientConnection | None = None
        self._sessions = anyio.Semaphore(host.max_sessions)

    def _options(self) -> dict[str, Any]:
        spec = self._spec
        options: dict[str, Any] = {
            "port": spec.port,
            "known_hosts": _known_hosts(spec),
            "connect_timeout": spec.connect_timeout,
            "login_timeout": spec.connect_timeout,
            "keepalive_interval": 15,
            "keepalive_count_max": 4,
        }
        if spec.ciphers or not config_sets_ciphers():
            options["encryption_algs"] = list(spec.ciphers or default_ciphers())
        if spec.user:
            options["username"] = spec.user
        if spec.identity_file:
            path = spec.identity_file.expanduser()
            if not path.is_file():
                raise TransportError(spec.name, f"identity file {path} does not exist")
            options["client_keys"] = [str(path)]
        if spec.passphrase_env:
            passphrase = os.environ.get(spec.passphrase_env)
            if passphrase is None:
                raise TransportError(
                    spec.name, f"environment variable {spec.passphrase_env} is not set"
                )
            options["passphrase"] = passphrase
        return options

    async def connect(self) -> None:
        if self._conn is not None:
            return
        try:
            try:
                self._conn = await asyncssh.connect(self._spec.address, **self._options())
            except asyncssh.HostKeyNotVerifiable:
                if not self._spec.accept_new_host_key:
                    raise
                self._conn = await self._accept_new()
        except asyncssh.HostKeyNotVerifiable as exc:
            changed = await self._changed_key()
            raise HostKeyError(self.host, changed or _describe(exc)) from exc
        except (
            asyncssh.PermissionDenied,
            asyncssh.KeyImportError,
            asyncssh.KeyEncryptionError,
        ) as exc:
            raise TransportError(self.host, _describe(exc)) from exc
        except (OSError, asyncssh.Error, TimeoutError) as exc:
            raise TransportError(self.host, _describe(exc), transient=True) from exc

    def _names_checked(
        self, conn: asyncssh.SSHClientConnection | None
    ) -> tuple[str, str, int | None]:
        """The (host, address, port) asyncssh matched known_hosts against: the
        ssh_config `Hostname` (or `HostKeyAlias`) of the inventory's address, the
        address the connection reached, and the port unless it is 22."""
        options = asyncssh.SSHClientConnectionOptions(
            host=self._spec.address, **{**self._options(), "known_hosts": None}
        )
        host = options.host_key_alias or options.host or self._spec.address
        peer = conn.get_extra_info("peername") if conn is not None else None
        addr = str(peer[0]) if peer else ""
        port = options.port if options.port != 22 else None
        return host, addr, port

    def _key_on_record(self, names: tuple[str, str, int | None]) -> asyncssh.SSHKey | None:
        """The key known_hosts already holds for any name asyncssh checked, if any.
        Then a mismatch is a *changed* key, which accept-new never trusts, whichever
        spelling or alias of the host the inventory used."""
        path = (self._spec.known_hosts or DEFAULT_KNOWN_HOSTS).expanduser()
        if not path.is_file():
            return None
        keys = _load_known_hosts(path)
        host, addr, port = names
        for name in dict.fromkeys((host, self._spec.address, addr)):
            trusted, ca, *_ = keys.match(name, addr, port)
            if trusted or ca:
                return (list(trusted) or list(ca))[0]
        return None

    def _changed_reason(
        self, names: tuple[str, str, int | None], presented: asyncssh.SSHKey | None
    ) -> str | None:
        """A changed key, said as such: both fingerprints and the command that
        forgets the old one (ssh-keygen -R, with -f unless it is the default file)."""
        recorded = self._key_on_record(names)
        if recorded is None:
            return None
        host, _addr, port = names
        name = host if port is None else f"[{host}]:{port}"
        where = self._spec.known_hosts
        command = f"ssh-keygen -R {shlex.quote(name)}"
        if where is not None:
            command += f" -f {shlex.quote(str(where.expanduser()))}"
        now = presented.get_fingerprint() if presented is not None else "another key"
        return (
            f"host key changed: known_hosts has {recorded.get_fingerprint()}, the host now"
            f" presents {now}; if expected: {command}"
        )

    async def _changed_key(self) -> str | None:
        """Why a strict check refused the host, when the reason is a changed key: the
        presented key is fetched without logging in (nothing is sent to the host)."""
        try:
            options = {**self._options(), "known_hosts": None}
            presented = await asyncssh.get_server_host_key(
                self._spec.address,
                options=asyncssh.SSHClientConnectionOptions(host=self._spec.address, **options),
            )
        except (OSError, asyncssh.Error, TimeoutError, HarnessError):
            return None
        return self._changed_reason(self._names_checked(None), presented)

    async def _accept_new(self) -> asyncssh.SSHClientConnection:
        """Trust on first use, for a host whose inventory entry opts in: connect,
        make sure no key is on record for the host under any name, then record
        the key it presented in known_hosts (created if missing)."""
        options = {**self._options(), "known_hosts": None}
        conn = await asyncssh.connect(self._spec.address, **options)
        names = self._names_checked(conn)
        key = conn.get_server_host_key()
        changed = self._changed_reason(names, key)
        if changed is not None:
            conn.close()
            raise HostKeyError(self.host, changed)
        if key is None:  # pragma: no cover - every SSH server presents one
            conn.close()
            raise HostKeyError(self.host, "server presented no host key")
        path = (self._spec.known_hosts or DEFAULT_KNOWN_HOSTS).expanduser()
        host, _addr, port = names
        name = host if port is None else f"[{host}]:{port}"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="ascii") as fh:
            fh.write(f"{name} {key.export_public_key('openssh').decode().strip()}\n")
        log.warning(
            "%s: accepted new host key %s (accept_new_host_key)", self.host, key.get_fingerprint()
        )
        return conn

    def describe(self) -> dict[str, str]:
        if self._conn is None:
            return {}
        key = self._conn.get_server_host_key()
        found = {
            "server_version": self._conn.get_extra_info("server_version"),
            "host_key": key.get_algorithm() if key else None,
            "host_key_fingerprint": key.get_fingerprint() if key else None,
            "cipher": self._conn.get_extra_info("send_cipher"),
        }
        return {name: str(value) for name, value in found.items() if value}

    def _connection(self) -> asyncssh.SSHClientConnection:
        if self._conn is None:
            raise TransportError(self.host, "not connected")
        return self._conn

    async def run(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
    ) -> Completed:
        """Run argv, streaming its output: at most MAX_OUTPUT bytes of each stream
        are kept and the rest is read and dropped, as the local transport does, so
        a host that floods (one endless line, or output without end) costs the
        controller a bounded amount of memory."""
        conn = self._connection()
        command = shlex.join(argv)
        started = time.monotonic()
        out, err = bytearray(), bytearray()
        async with self._sessions:
            try:
                process = await conn.create_process(command, encoding=None)
            except (OSError, asyncssh.Error) as exc:
                raise TransportError(self.host, _describe(exc), transient=True) from exc
            timed_out = False
            try:
                with anyio.move_on_after(timeout) as scope:
                    if stdin:
                        process.stdin.write(stdin)
                    process.stdin.write_eof()
                    # Both streams at once (they share the channel's window); stdout
                    # in this task, so a command costs one task, not two.
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(_drain, process.stderr, err)
                        await _drain(process.stdout, out)
                    await process.wait_closed()
                timed_out = scope.cancelled_caught
            except (OSError, asyncssh.Error) as exc:
                raise TransportError(self.host, _describe(exc), transient=True) from exc
            finally:
                if timed_out or (process.exit_status is None and not process.exit_signal):
                    process.close()
                    with anyio.move_on_after(CLOSE_GRACE, shield=True):
                        await process.wait_closed()
        if timed_out:
            return Completed(
                argv=tuple(argv),
                exit_status=None,
                signal=None,
                stdout=_text(out),
                stderr=_text(err),
                elapsed=time.monotonic() - started,
                timed_out=True,
            )
        if process.exit_status is None and not process.exit_signal:
            # The channel closed without saying how the command ended: the
            # connection dropped (sshd died, the network was cut).
            raise TransportError(self.host, "connection lost while the command ran", transient=True)
        return Completed(
            argv=tuple(argv),
            exit_status=process.exit_status,
            signal=process.exit_signal[0] if process.exit_signal else None,
            stdout=_text(out),
            stderr=_text(err),
            elapsed=time.monotonic() - started,
        )

    async def put_file(self, source: Path, dest: str, *, mode: int = 0o644) -> None:
        """Stream the file over the exec channel commands use (no SFTP subsystem
        needed: many hosts' sshd has none), made private while written."""
        argv = ("sh", "-c", PUT_SCRIPT, "harness-put", dest, f"{mode:o}")
        conn = self._connection()
        async with self._sessions:
            try:
                process = await conn.create_process(
                    shlex.join(argv), encoding=None, stdout=asyncssh.DEVNULL
                )
                async with await anyio.open_file(source, "rb") as fh:
                    while chunk := await fh.read(CHUNK):
                        process.stdin.write(chunk)
                        await process.stdin.drain()
                process.stdin.write_eof()
                err = bytearray()
                await _drain(process.stderr, err)
                await process.wait_closed()
            except (OSError, asyncssh.Error) as exc:
                raise TransportError(self.host, f"upload to {dest}: {_describe(exc)}") from exc
        if process.exit_status != 0:
            why = _text(err).strip() or f"exit {process.exit_status}"
            raise TransportError(self.host, f"upload to {dest}: {why}")

    async def get_file(self, source: str, dest: Path) -> None:
        """The file's bytes over the exec channel (`cat`), as put_file sends them."""
        conn = self._connection()
        async with self._sessions:
            try:
                process = await conn.create_process(
                    shlex.join(("cat", "--", source)), encoding=None, stderr=asyncssh.DEVNULL
                )
                async with await anyio.open_file(dest, "wb") as fh:
                    while chunk := await process.stdout.read(CHUNK):
                        await fh.write(chunk)
                await process.wait_closed()
            except (OSError, asyncssh.Error) as exc:
                raise TransportError(self.host, f"download {source}: {_describe(exc)}") from exc
        if process.exit_status != 0:
            raise TransportError(self.host, f"download {source}: exit {process.exit_status}")

    async def aclose(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.close()
            with anyio.move_on_after(CLOSE_GRACE, shield=True):
                await conn.wait_closed()


async def _drain(stream: asyncssh.SSHReader[bytes], sink: bytearray) -> None:
    """Read a stream to its end, keeping its first MAX_OUTPUT bytes."""
    while True:
        try:
            chunk = await stream.read(65536)
        except (OSError, asyncssh.Error):
            return  # the connection broke: the caller sees no exit status, and says so
        if not chunk:
            return
        room = MAX_OUTPUT - len(sink)
        if room > 0:
            sink.extend(chunk[:room])


def _text(data: object) -> str:
    if data is None:
        return ""
    if isinstance(data, bytes | bytearray):
        return data.decode("utf-8", "replace")
    return str(data)
