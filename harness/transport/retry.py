"""Connecting to a host, with retries for what may pass (refused, reset, timed out)."""

from __future__ import annotations

import logging
from typing import Any

from harness.errors import TransportError
from harness.matrix.models import Host
from harness.transport.base import Transport

log = logging.getLogger(__name__)


def _transient(exc: Exception) -> bool:
    return isinstance(exc, TransportError) and exc.transient


def _log_retry(details: Any) -> None:
    """One readable line per scheduled connection retry (stamina's RetryDetails)."""
    cause = " ".join(str(details.caused_by).split())[:200]
    log.warning(
        "%s; retry %d in %.1f s",
        cause or type(details.caused_by).__name__,
        details.retry_num,
        details.wait_for,
    )


async def connect_with_retries(transport: Transport, host: Host) -> None:
    """Connect, retrying refused/reset/timed-out attempts with jittered backoff.
    A refused host key or login is final at once. This machine needs no retries."""
    if host.transport == "local":
        await transport.connect()
        return
    import stamina  # only for networked hosts: a local run starts sooner without it
    from stamina.instrumentation import set_on_retry_hooks

    set_on_retry_hooks([_log_retry])  # ours, not stamina's bare "stamina.retry_scheduled"
    async for attempt in stamina.retry_context(
        on=_transient,
        attempts=host.connect_retries + 1,
        timeout=(host.connect_retries + 1) * (host.connect_timeout + 5.0),
        wait_initial=0.5,
        wait_max=5.0,
    ):
        with attempt:
            await transport.connect()
