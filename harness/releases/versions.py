"""gVisor release names: parsing, ordering, the aliases users type, and tags.

gVisor publishes two channels under `releases/<channel>/<version>/`: `release`
(`YYYYMMDD` or `YYYYMMDD.N`, tagged `release-<version>` upstream) and `nightly`
(`YYYY-MM-DD`, untagged). Versions order by date, then by `.N`; a bare date
comes before its `.0`.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from harness.errors import UsageError

CHANNELS = ("release", "nightly")
UPSTREAM = "https://github.com/google/gvisor"
DEFAULT_BRANCH = "master"

_RELEASE = re.compile(r"^(\d{4})(\d{2})(\d{2})(?:\.(\d{1,6}))?$")
_NIGHTLY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:\.(\d{1,6}))?$")
_PREFIX = re.compile(r"^(?:releases/)?(release|nightly)[-/](.+)$")
FORMS = "release-20260817.0, 20260817.0, 2026-09-02 or nightly/2026-09-02"


@dataclass(frozen=True, slots=True)
class Version:
    """One published build: its channel, its date and its `.N` (None when absent)."""

    channel: str
    date: datetime.date
    n: int | None = None

    @property
    def name(self) -> str:
        """The folder name in the bucket, e.g. `20260817.0` or `2026-09-02`."""
        day = self.date.strftime("%Y%m%d" if self.channel == "release" else "%Y-%m-%d")
        return day if self.n is None else f"{day}.{self.n}"

    @property
    def key(self) -> tuple[datetime.date, int]:
        """Sort key within a channel: by date, then by `.N` (a bare date first)."""
        return (self.date, -1 if self.n is None else self.n)

    @property
    def tag(self) -> str | None:
        """The upstream git tag; nightlies have none."""
        return f"release-{self.name}" if self.channel == "release" else None

    def __str__(self) -> str:
        return f"{self.channel}/{self.name}"

    def __lt__(self, other: Version) -> bool:
        return (self.channel, *self.key) < (other.channel, *other.key)


def parse_listed(channel: str, name: str) -> Version | None:
    """A bucket folder name as a version of `channel`, or None (`latest`, junk)."""
    pattern = _RELEASE if channel == "release" else _NIGHTLY
    match = pattern.match(name)
    if match is None:
        return None
    year, month, day, n = match.groups()
    try:
        date = datetime.date(int(year), int(month), int(day))
    except ValueError:
        return None
    return Version(channel, date, int(n) if n is not None else None)


def parse_version(text: str, *, flag: str) -> Version:
    """A version as a user writes it: `release-20260817.0`, `20260817.0`,
    `2026-09-02`, `nightly/2026-09-02` (also `release/...`, `nightly-...`).

    The shape of the date decides the channel; a prefix that contradicts it is
    an error rather than a guess.
    """
    raw = text.strip()
    said: str | None = None
    body = raw
    if prefixed := _PREFIX.match(raw.lower()):
        said, body = prefixed.group(1), prefixed.group(2)
    for channel in CHANNELS:
        version = parse_listed(channel, body)
        if version is None:
            continue
        if said is not None and said != channel:
            shape = "YYYYMMDD[.N]" if said == "release" else "YYYY-MM-DD"
            raise UsageError(f"{flag}: {text!r}: a {said} version is named {shape}")
        return version
    raise UsageError(f"{flag}: {text!r} is not a gVisor version (expected e.g. {FORMS})")


def check_pair(good: Version, bad: Version) -> None:
    """`--good` and `--bad` must be in one channel, the good one older."""
    if good.channel != bad.channel:
        raise UsageError(f"--good {good} and --bad {bad} are in different channels")
    if not good < bad:
        raise UsageError(f"--good {good} must be older than --bad {bad}")


def select_range(
    listed: Iterable[Version], good: Version, bad: Version, *, index: str = ""
) -> list[Version]:
    """The listed versions from `good` to `bad`, both included, oldest first. `index`
    names where they were listed (a URL or a folder), for the error: a mirror that
    lags the bucket is the usual reason a version is missing.

    Raises:
        UsageError: the two are in different channels, out of order, or not listed.
    """
    check_pair(good, bad)
    ordered = sorted({v for v in listed if v.channel == good.channel}, key=lambda v: v.key)
    where = f"the index at {index}" if index else "the index"
    for flag, wanted in (("--good", good), ("--bad", bad)):
        if wanted not in ordered:
            raise UsageError(f"{flag}: {wanted} is not in {where}{_nearest(ordered, wanted)}")
    return [v for v in ordered if good.key <= v.key <= bad.key]


def _nearest(ordered: Sequence[Version], wanted: Version) -> str:
    before = [v.name for v in ordered if v.key < wanted.key][-1:]
    after = [v.name for v in ordered if v.key > wanted.key][:1]
    near = before + after
    return f" (nearest: {', '.join(near)})" if near else f" (no {wanted.channel} versions listed)"


def compare_url(last_good: Version, first_bad: Version) -> str:
    """The upstream changes between two builds.

    Releases compare their tags. Nightlies have no tags, so they compare the
    default branch as it was on each build's date: close, but approximate.
    """
    if last_good.tag and first_bad.tag:
        return f"{UPSTREAM}/compare/{last_good.tag}...{first_bad.tag}"

    def at(v: Version) -> str:
        return quote(f"{DEFAULT_BRANCH}@{{{v.date.isoformat()}}}", safe="@")

    return f"{UPSTREAM}/compare/{at(last_good)}...{at(first_bad)}"
