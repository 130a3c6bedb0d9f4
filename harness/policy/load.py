"""Read a runtime's declared policy: an OpenShell policy file (YAML), or the same
fields inline in the matrix. One `SpecError` names the file and the dotted key."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from harness.errors import SpecError
from harness.files import Unreadable, read_regular
from harness.policy.models import MAX_POLICY_BYTES, Policy, PolicyFile, digest

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(loc: tuple[int | str, ...]) -> str:
    """A dotted key; a name that is not bare is quoted, so the error stays one line."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        name = part if _BARE.match(part) else json.dumps(part)
        out += f".{name}" if out else name
    return out


def _is_branch(part: int | str) -> bool:
    """A union branch's tag in an error location (`str`, `int`, `Binary`, ...), not a key."""
    return isinstance(part, str) and (
        part in ("str", "int", "Binary", "constrained-str") or part.startswith("function-")
    )


def _explain(err: dict[str, Any]) -> str:
    if err.get("type") == "extra_forbidden":
        return "unknown key"
    if err.get("type") == "missing":
        return "required key is missing"
    text = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def validated(data: object, *, file: str, prefix: str = "") -> PolicyFile:
    """The policy fields, validated; the first problem as one SpecError."""
    if not isinstance(data, dict):
        got = "nothing" if data is None else type(data).__name__
        raise SpecError(file, prefix, f"expected a policy (a mapping), got {got}")
    try:
        return PolicyFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(p for p in first.get("loc", ()) if not _is_branch(p))
        key = _key(loc)
        key = f"{prefix}.{key}" if prefix and key else (prefix or key)
        raise SpecError(file, key, _explain(dict(first))) from None


def _read(path: Path, shown: str) -> bytes:
    """The file's bytes: a regular file only, bounded, never following a loop."""
    try:
        return read_regular(path, limit=MAX_POLICY_BYTES)
    except Unreadable as exc:
        raise SpecError(shown, "", "no such file" if exc.missing else exc.why) from None


def load_policy(path: Path, *, shown: str) -> Policy:
    """An OpenShell policy file, as it is."""
    raw = _read(path, shown)
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SpecError(shown, "", f"not UTF-8 text (byte {exc.start})") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" (line {where.line + 1})" if where is not None else ""
        why = getattr(exc, "problem", None) or "cannot parse"
        raise SpecError(shown, "", f"invalid YAML{at}: {why}") from None
    except RecursionError:
        raise SpecError(shown, "", "invalid YAML: nested too deeply") from None
    fields = validated(data, file=shown)
    return Policy(**fields.model_dump(), source=str(path), sha256=hashlib.sha256(raw).hexdigest())


def inline_policy(fields: PolicyFile) -> Policy:
    """A matrix's inline policy table, with the digest of its canonical form."""
    data = fields.model_dump()
    return Policy(**data, source="inline", sha256=digest(data))
