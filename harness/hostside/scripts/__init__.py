"""The shell that harness runs on a host, as package files: one script or function
library per file, each with a `# $1 ...` header saying what its arguments are.

Scripts are fixed: values reach them only as positional arguments. `script` reads
one and drops its header (the host is sent the code, not the comment), so the
command a host runs is the file's body, byte for byte. A few name a constant of
harness's own as `@NAME@` (a poll interval, a word the judge reads), filled in here
once, at import, never with a run's values.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files


@cache
def _read(name: str) -> str:
    return (files(__package__) / name).read_text(encoding="utf-8")


def script(name: str, **constants: str) -> str:
    """The body of `scripts/NAME` (its leading `#` lines dropped), each `@KEY@` of
    `constants` replaced by its value.

    Raises:
        KeyError: a constant the file does not name (a typo would go unnoticed).
    """
    lines = _read(name).splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if not line.startswith("#")), len(lines))
    body = "".join(lines[start:])
    for key, value in constants.items():
        token = f"@{key}@"
        if token not in body:
            raise KeyError(f"scripts/{name} names no {token}")
        body = body.replace(token, value)
    return body
