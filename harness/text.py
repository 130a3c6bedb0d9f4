"""Text that came from outside (hosts, probes, files), made safe to keep and show.

`shorten` bounds a reason to one short line, so a flood of output never gets
copied into every record. `visible` makes control characters visible, so no
escape sequence from a host ever reaches a terminal or a report as itself.
"""

from __future__ import annotations

REASON_LIMIT = 300


def shorten(text: str, limit: int = REASON_LIMIT) -> str:
    """One line of at most `limit` characters (whitespace runs folded)."""
    if len(text) > limit * 8:
        text = text[: limit * 4] + " " + text[-limit * 4 :]
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"
