"""Transports: how harness reaches a host.

The SSH transport is imported on first use: asyncssh and its cryptography take
a tenth of a second to import, which a run on local hosts alone never needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.matrix.models import Host
from harness.transport.base import Completed, Transport
from harness.transport.local import LocalTransport

if TYPE_CHECKING:
    from harness.transport.ssh import SSHTransport

__all__ = ["Completed", "LocalTransport", "SSHTransport", "Transport", "open_transport"]


def __getattr__(name: str) -> object:
    if name == "SSHTransport":
        from harness.transport.ssh import SSHTransport

        return SSHTransport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_transport(host: Host) -> Transport:
    """The transport a host's inventory entry asks for (not yet connected)."""
    if host.transport == "local":
        return LocalTransport(host.name)
    from harness.transport.ssh import SSHTransport

    return SSHTransport(host)
