"""Every row of every surface, in the order the page lists them."""

from __future__ import annotations

from harness.catalogue import filesystem, network, privilege
from harness.catalogue.rows import Row


def all_rows() -> tuple[Row, ...]:
    """Filesystem first, then privilege, then network."""
    return filesystem.ROWS + privilege.ROWS + network.ROWS
