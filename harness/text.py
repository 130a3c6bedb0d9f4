"""Text that came from outside (hosts, probes, files), made safe to keep and show.

Everything a host, a probe or a file supplied (names, details, stderr, reasons) is
data. It reaches a terminal, rich, Markdown, HTML, XML or a file name only through
this module, so an escape sequence never moves a cursor, markup never styles or
links, and `<script>` never runs:

- `visible` writes control characters (C0, DEL, C1, bidi and line-separator
  controls, lone surrogates, U+FFFE/U+FFFF) as `\\xNN` / `\\uNNNN`;
- `rich_text` is a rich `Text` (never parsed as markup) of the visible text, and
  `markup` the same for the few places that take a markup string;
- `markdown` and `html_text` escape for those formats, `xml_text` for XML 1.0,
  `json_text` JSON text (the same data, no raw bidi or control character);
- `file_name` makes a unique, bounded file name part;
- `shorten` bounds a reason to one short line, so a flood of output is never
  copied into every record;
- `redact_url` and `redact_urls` drop a URL's user:password and the values of
  secret-looking query keys, before a URL is kept in a record or a log line.
"""

from __future__ import annotations

import hashlib
import html
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

REASON_LIMIT = 300
NAME_LIMIT = 60

_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\ufffe\uffff\ud800-\udfff]"
)
_CONTROL_KEEP_LINES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\ufffe\uffff\ud800-\udfff]"
)
# What could make HTML, a link or image, a code span, emphasis or a table break.
_MARKDOWN = re.compile(r"([\\`*\[\]|~<>&])")
_UNSAFE_FILE = re.compile(r"[^A-Za-z0-9_.-]")


def _show(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# What JSON text may hold raw but a terminal or an editor acts on (json.dumps, not
# asked for ASCII, writes all but C0 as they are).
_JSON_RAW = re.compile(
    "[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
    "\ufffe\uffff\ud800-\udfff]"
)


def json_text(text: str) -> str:
    """JSON text (what json.dumps wrote) with every control, bidi and separator
    character written as a \\uXXXX escape: the same data to a JSON reader, and no
    reordered line in a terminal, a CI log or a diff. They occur only inside strings.

    Escaped, not removed or shown as `\\u202e` text: the file never holds them raw,
    yet a script parsing it gets the host's string back as it was. The JSON harness
    writes for people and scripts (report, diff, bisect.json) goes through it."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def visible(text: object, *, lines: bool = False) -> str:
    """`text` with every control character written out visibly; with `lines`,
    newlines and tabs stay as they are (multi-line bodies)."""
    return (_CONTROL_KEEP_LINES if lines else _CONTROL).sub(_show, str(text))


def rich_text(text: object, style: str = "") -> Text:
    """A rich Text of the visible text: styled by us, never parsed as markup."""
    from rich.text import Text  # errors.py imports this module: keep rich out of it

    return Text(visible(text), style=style)


def markup(text: object) -> str:
    """For rich APIs that take markup strings: visible, with markup escaped."""
    from rich.markup import escape

    return escape(visible(text))


def markdown(text: object) -> str:
    """Inline Markdown that renders as the literal text: no HTML, links, images,
    emphasis or table breaks (GitHub-flavoured Markdown)."""
    flat = visible(" ".join(str(text).split()))
    return _MARKDOWN.sub(r"\\\1", flat)


def html_text(text: object) -> str:
    """HTML text or attribute value."""
    return html.escape(visible(text), quote=True)


def xml_text(text: object, *, lines: bool = False) -> str:
    """Valid in XML 1.0 (the serializer escapes <, > and &)."""
    return visible(text, lines=lines)


def file_name(*parts: str, limit: int = NAME_LIMIT) -> str:
    """A file name part from values, joined by `--`: safe characters only and each
    part bounded. Values that are not already safe, short and free of `--` get a
    hash of the exact values appended, so two never share a name (`web 1` and
    `web_1`, or two long names alike in their first characters)."""
    plain = all(p not in ("", ".", "..") and len(p) <= limit and "--" not in p for p in parts)
    if plain and not any(_UNSAFE_FILE.search(p) for p in parts):
        return "--".join(parts)
    digest = hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:10]
    shown = "--".join(_UNSAFE_FILE.sub("_", p)[:limit] for p in parts)
    return f"{shown}--{digest}"


def shorten(text: str, limit: int = REASON_LIMIT) -> str:
    """One line of at most `limit` characters (whitespace runs folded)."""
    if len(text) > limit * 8:
        text = text[: limit * 4] + " " + text[-limit * 4 :]
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


# Query keys whose values are credentials (matched in lower case, `-` as `_`): an
# API key, a token, a signature, a password, a session.
_SECRET_KEY = re.compile(
    r"(?:^|_)(?:key|apikey|token|secret|password|passwd|pwd|pass|sig|signature|auth"
    r"|authorization|credential|credentials|session|sessionid|code)$|^x_amz_(?:signature|credential|security_token)$"
)
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]*[^\s\"'<>:.,;)]")
REDACTED = "REDACTED"


def redact_url(url: str) -> str:
    """`url` without its user:password part and with the values of secret-looking
    query keys (`key`, `token`, `sig`, ...) replaced: what a record or log may keep."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        netloc = parts.netloc.rpartition("@")[2] if "@" in parts.netloc else parts.netloc
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            if any(_secret(k) for k, _v in pairs):
                query = urlencode(
                    [(k, REDACTED if _secret(k) else v) for k, v in pairs], safe=REDACTED
                )
        return urlunsplit(parts._replace(netloc=netloc, query=query))
    except ValueError:  # not a URL urllib can take apart: keep nothing after the scheme
        return url.partition("://")[0] + "://" + REDACTED


def redact_argv(argv: list[str]) -> list[str]:
    """A command line as a record may keep it: the value of a secret-looking option
    (`--token X`, `--password=X`, `--bearer X`), of a secret-looking `NAME=VALUE`
    (`env API_TOKEN=X`), of an `Authorization:` header and of what follows `Bearer`
    replaced; URLs redacted."""
    out: list[str] = []
    hide = False
    for word in argv:
        name, eq, _value = word.partition("=")
        key = name.lstrip("-")
        header, colon, _rest = word.partition(":")
        if hide:
            out.append(REDACTED)
        elif eq and key and " " not in name and _secret_word(key):
            out.append(f"{name}={REDACTED}")
        elif colon and header.strip().lower() in ("authorization", "proxy-authorization", "cookie"):
            out.append(f"{header}: {REDACTED}")
        elif " " in word and word.split()[0].lower() == "bearer":
            out.append(f"Bearer {REDACTED}")
        else:
            out.append(redact_urls(word))
        lowered = word.lower()
        hide = lowered == "bearer" or (word.startswith("-") and not eq and _secret_word(key))
    return out


def _secret_word(key: str) -> bool:
    return _secret(key) or key.lower().replace("-", "_").endswith("bearer")


def _secret(key: str) -> bool:
    return bool(_SECRET_KEY.search(key.lower().replace("-", "_")))


def redact_urls(text: str) -> str:
    """Free text (an error, a log line) with every URL in it redacted (`redact_url`)."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: redact_url(m.group()), text)
