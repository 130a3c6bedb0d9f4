"""Every error harness raises on purpose.

The CLI maps these to exit codes; nothing else catches them broadly. The tree::

    HarnessError
    ├── SpecError            bad matrix or inventory (file + key): exit 2
    ├── UsageError           bad flags or unknown names on the command line: exit 2
    ├── ProbeBuildError      the static probe could not be compiled
    ├── TransportError       a host could not be reached or used (host + reason)
    │   ├── HostKeyError     unknown or changed host key (strict checking)
    │   └── CommandError     a command on a host failed (argv, exit status, stderr)
    ├── ResultsError         the results folder cannot be written
    └── ArtifactError        a runtime release could not be listed, fetched or verified
                             (subject + reason; a checksum mismatch is one)
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.text import redact_urls, shorten


class HarnessError(Exception):
    """Root of every error harness raises deliberately."""


class SpecError(HarnessError):
    """A matrix or inventory is unreadable or invalid; names the file and the key."""

    def __init__(self, file: str, key: str, message: str) -> None:
        self.file = file
        self.key = key
        self.message = message
        where = f"{file}: {key}: " if key else f"{file}: "
        super().__init__(f"{where}{message}")


class UsageError(HarnessError):
    """The command line asks for something that does not exist or cannot work."""


class ProbeBuildError(HarnessError):
    """No compiler could build the static probe."""


class TransportError(HarnessError):
    """A host could not be reached, or the connection broke.

    `transient` marks failures worth retrying (refused, reset, timed out while
    connecting); a refused host key or failed login is not.
    """

    def __init__(self, host: str, reason: str, *, transient: bool = False) -> None:
        self.host = host
        # Copied into every cell of the host: kept short, and any URL in it redacted.
        self.reason = shorten(redact_urls(reason))
        self.transient = transient
        super().__init__(f"{host}: {redact_urls(reason)}")


class HostKeyError(TransportError):
    """The host presented a key that known_hosts does not vouch for."""


class CommandError(TransportError):
    """A command that had to succeed on a host did not."""

    def __init__(
        self, host: str, *, argv: Sequence[str], exit_status: int | None, stderr: str
    ) -> None:
        self.argv = list(argv)
        self.exit_status = exit_status
        self.stderr = stderr[-4000:]
        tail = stderr[-4000:].strip().splitlines()[-1] if stderr.strip() else "no stderr"
        super().__init__(host, f"{argv[0]} exited {exit_status}: {tail}")


class ResultsError(HarnessError):
    """The results folder cannot be created or written."""


class ArtifactError(HarnessError):
    """A release index could not be listed, or an artifact could not be fetched,
    unpacked or verified. A checksum mismatch is one: the artifact is never run."""

    def __init__(self, subject: str, reason: str) -> None:
        self.subject = subject
        self.reason = redact_urls(reason)  # an index URL may carry credentials
        super().__init__(f"{subject}: {self.reason}")


def failure_reason(exc: Exception) -> str:
    """What a run records for a failure: a transport's short reason, a harness error's
    own words, else "internal error" with the exception's type (a bug, logged)."""
    if isinstance(exc, TransportError):
        return exc.reason
    if isinstance(exc, HarnessError):
        return str(exc)
    return f"internal error: {type(exc).__name__}: {exc}"
