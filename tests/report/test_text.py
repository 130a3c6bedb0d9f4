"""The one escaping helper: every control character visible, each format inert."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from harness.text import file_name, html_text, json_text, markdown, shorten, visible, xml_text

HOSTILE = [
    "[/]",
    "[bold red]x[/]",
    "\x1b[2K\x1b[1A\r✓ pass",
    "\x1b]8;;https://example.invalid\x07link\x1b]8;;\x07",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "a\u202eb\u2028c\ufeffd\x85e\x00f",
    "[x](javascript:alert(1)) ![i](https://example.invalid/p.png) | `code`",
]


@given(st.text())
def test_visible_leaves_no_control_character(text: str) -> None:
    """No C0, DEL, C1, bidi or separator control survives `visible`."""
    shown = visible(text)
    assert not any(
        ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u202e\u2028\u2029\ufeff" for c in shown
    )


def test_battery_is_inert_in_each_format() -> None:
    """Markdown escapes every < [ | `, HTML every <, XML keeps no control character."""
    for value in HOSTILE:
        md = markdown(value)
        for ch in "<[|`":
            assert md.count(ch) == md.count("\\" + ch)
        assert "<" not in html_text(value)
        assert all(ord(c) >= 0x20 or c in "\n\t" for c in xml_text(value, lines=True))


def test_file_names_are_unique_and_bounded() -> None:
    """Names that sanitize alike differ by hash; long names stay short."""
    assert file_name("web 1", "r") != file_name("web_1", "r")
    assert file_name("a--b", "c") != file_name("a", "b--c")
    assert file_name("h", "web_1") == "h--web_1"
    assert len(file_name("x" * 128, "y" * 128)) < 160
    assert "/" not in file_name("../..", "/")


def test_shorten_is_one_bounded_line() -> None:
    """A 10 MB reason becomes one line of at most 300 characters."""
    text = shorten("x" * 10_000_000 + "\nlast")
    assert len(text) <= 300 and "\n" not in text


@given(st.text())
def test_json_text_keeps_the_data_and_no_raw_control(text: str) -> None:
    """The JSON report's text: a reader gets every string back as it was, and no C1,
    bidi or separator character (nor a lone surrogate) is left raw in it."""
    raw = json.dumps({"detail": text, "hosts": [text]}, ensure_ascii=False)
    safe = json_text(raw)
    assert json.loads(safe) == json.loads(raw)
    assert not any(0x7F <= ord(c) <= 0x9F or 0x2028 <= ord(c) <= 0x202E for c in safe)
    assert not any(0x2066 <= ord(c) <= 0x2069 or 0xD800 <= ord(c) <= 0xDFFF for c in safe)
