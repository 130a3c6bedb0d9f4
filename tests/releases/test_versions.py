"""Version names: parsing the forms users type, ordering, ranges and compare links."""

from __future__ import annotations

import datetime

import pytest

from harness.errors import UsageError
from harness.releases.versions import (
    Version,
    compare_url,
    parse_listed,
    parse_version,
    select_range,
)


def _release(text: str) -> Version:
    v = parse_listed("release", text)
    assert v is not None
    return v


def _nightly(text: str) -> Version:
    v = parse_listed("nightly", text)
    assert v is not None
    return v


@pytest.mark.parametrize(
    ("text", "channel", "name"),
    [
        ("release-20260817.0", "release", "20260817.0"),
        ("20260817.0", "release", "20260817.0"),
        ("20260817", "release", "20260817"),
        ("release/20260817.3", "release", "20260817.3"),
        ("2026-09-02", "nightly", "2026-09-02"),
        ("nightly/2026-09-02", "nightly", "2026-09-02"),
        ("nightly-2026-09-02", "nightly", "2026-09-02"),
        (" Release-20260817.0 ", "release", "20260817.0"),
    ],
)
def test_aliases_name_the_same_build(text: str, channel: str, name: str) -> None:
    """Every accepted spelling parses to its channel and bucket folder name."""
    v = parse_version(text, flag="--good")
    assert (v.channel, v.name) == (channel, name)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nightly/20260817.0", "a nightly version is named YYYY-MM-DD"),
        ("release-2026-09-02", r"a release version is named YYYYMMDD\[\.N\]"),
        ("2026-02-30", "is not a gVisor version"),
        ("latest", "is not a gVisor version"),
        ("v1.2.3", "is not a gVisor version"),
        ("", "is not a gVisor version"),
    ],
)
def test_bad_versions_are_usage_errors(text: str, message: str) -> None:
    """A version that is not one, or whose prefix contradicts its shape, is refused."""
    with pytest.raises(UsageError, match=message) as info:
        parse_version(text, flag="--bad")
    assert str(info.value).startswith("--bad: ")


def test_order_is_by_date_then_by_n() -> None:
    """20260817 < 20260817.0 < 20260817.2 < 20260817.10 < 20260818.0; never by text."""
    names = ["20260818.0", "20260817.10", "20260817.2", "20260817", "20260817.0"]
    ordered = sorted((_release(n) for n in names), key=lambda v: v.key)
    assert [v.name for v in ordered] == [
        "20260817",
        "20260817.0",
        "20260817.2",
        "20260817.10",
        "20260818.0",
    ]
    assert _release("20260817.2") < _release("20260817.10")
    assert _nightly("2026-09-02").date == datetime.date(2026, 9, 2)


def test_listing_names_that_are_not_versions_are_ignored() -> None:
    """`latest` and other folders in the bucket are not versions."""
    assert parse_listed("nightly", "latest") is None
    assert parse_listed("release", "2026-09-02") is None
    assert parse_listed("nightly", "20260902") is None


def test_range_includes_both_ends_in_order() -> None:
    """The range runs from --good to --bad inclusive, whatever the listing's order."""
    listed = [_nightly(f"2026-09-{d:02d}") for d in (5, 1, 3, 2, 4)]
    picked = select_range(listed, _nightly("2026-09-02"), _nightly("2026-09-04"))
    assert [v.name for v in picked] == ["2026-09-02", "2026-09-03", "2026-09-04"]


def test_range_refuses_unlisted_reversed_and_mixed() -> None:
    """Unlisted ends name their neighbours; reversed or cross-channel ranges are refused."""
    listed = [_nightly("2026-09-01"), _nightly("2026-09-05")]
    with pytest.raises(
        UsageError,
        match=r"--good: nightly/2026-09-03 is not in the index \(nearest: 2026-09-01, 2026-09-05\)",
    ):
        select_range(listed, _nightly("2026-09-03"), _nightly("2026-09-05"))
    with pytest.raises(UsageError, match=r"--bad: nightly/2026-09-07 is not in the index at /m "):
        select_range(listed, _nightly("2026-09-01"), _nightly("2026-09-07"), index="/m")
    with pytest.raises(UsageError, match="must be older"):
        select_range(listed, _nightly("2026-09-05"), _nightly("2026-09-01"))
    with pytest.raises(UsageError, match="different channels"):
        select_range(listed, _release("20260901.0"), _nightly("2026-09-05"))


def test_compare_links() -> None:
    """Releases compare tags; nightlies compare the branch by date."""
    assert compare_url(_release("20260817.0"), _release("20260824.0")) == (
        "https://github.com/google/gvisor/compare/release-20260817.0...release-20260824.0"
    )
    assert compare_url(_nightly("2026-09-06"), _nightly("2026-09-07")) == (
        "https://github.com/google/gvisor/compare/master@%7B2026-09-06%7D...master@%7B2026-09-07%7D"
    )
