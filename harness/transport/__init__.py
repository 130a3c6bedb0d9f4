"""Transports: how harness reaches a host."""

from harness.spec.models import Host
from harness.transport.base import Completed, Transport
from harness.transport.local import LocalTransport
from harness.transport.ssh import SSHTransport

__all__ = ["Completed", "LocalTransport", "SSHTransport", "Transport", "open_transport"]


def open_transport(host: Host) -> Transport:
    """The transport a host's inventory entry asks for (not yet connected)."""
    if host.transport == "local":
        return LocalTransport(host.name)
    return SSHTransport(host)
