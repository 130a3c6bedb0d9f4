"""`harness run --format json` prints one JSON array, written one verdict at a time."""

from __future__ import annotations

import json

import pytest

from harness.cli.run import echo_json_array

CASES = [
    [],
    [{"host": "h", "verdict": "pass"}],
    [{"reason": "two\nlines", "checks": [{"id": "x", "errno": None}]}, {"n": 2.5}, {}],
    [[1, 2], []],
]


@pytest.mark.parametrize("items", CASES)
def test_streamed_array_is_what_json_dumps_prints(
    items: list[object], capsys: pytest.CaptureFixture[str]
) -> None:
    """The streamed text is byte for byte json.dumps(items, indent=2), for scripts."""
    echo_json_array(iter(items))
    assert capsys.readouterr().out == json.dumps(items, indent=2) + "\n"
