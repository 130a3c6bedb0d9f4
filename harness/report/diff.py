"""What changed between two runs: verdicts, observations, checks, facts, versions,
and the release builds harness fetched.

Cells are matched by (host, runtime, fact or property) and checks by id. Check
details and timings are not compared: they name ports, paths and run ids that
differ on every run. A verdict that only one run has is `added` or `removed`; it
is reported, but only a verdict present in both runs that differs counts as a
changed verdict (`harness diff` exits 1 for those).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.report.runs import describe, observed_text
from harness.results.records import CheckResult, VerdictRecord
from harness.results.store import Key, Run


@dataclass(frozen=True, slots=True)
class Change:
    """One difference. `before` is run A's value, `after` run B's; None means absent.

    `kind` is one of: matrix (its sha256; host is ""), config (a runtime entry's
    setting, e.g. its flags or release; host is ""), renamed (a runtime whose entry
    is the same under another name; host is ""), kernel, version (runtime), build
    (the release build harness fetched for a runtime on a host: version and
    sha512), verdict, expected, observed (a property), fact (a fact's value), check
    (outcome, errno, control), added, removed.
    """

    kind: str
    host: str
    runtime: str | None = None
    subject: str | None = None  # the fact or property
    check: str | None = None  # the check id, for kind "check"
    before: str | None = None
    after: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class RunDiff:
    a: Run
    b: Run
    changes: list[Change] = field(default_factory=list)

    @property
    def verdicts_changed(self) -> int:
        return sum(c.kind == "verdict" for c in self.changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "a": str(self.a.folder),
            "b": str(self.b.folder),
            "verdicts_changed": self.verdicts_changed,
            "changes": [c.to_json() for c in self.changes],
        }


def _check_state(check: CheckResult) -> str:
    state = check.outcome
    if check.errno:
        state += f" {check.errno}"
    if check.control:
        state += f" (control {check.control})"
    return state


def _checks(key: Key, a: VerdictRecord, b: VerdictRecord) -> list[Change]:
    host, runtime, subject = key
    before = {c.id: _check_state(c) for c in a.checks}
    after = {c.id: _check_state(c) for c in b.checks}
    changes = []
    for check_id in dict.fromkeys([*after, *before]):
        old, new = before.get(check_id), after.get(check_id)
        if old != new:
            changes.append(
                Change("check", host, runtime, subject, check=check_id, before=old, after=new)
            )
    return changes


def _verdict_changes(key: Key, a: VerdictRecord, b: VerdictRecord) -> list[Change]:
    host, runtime, subject = key
    changes = []
    if a.verdict != b.verdict:
        changes.append(
            Change("verdict", host, runtime, subject, before=str(a.verdict), after=str(b.verdict))
        )
    if describe(a.expected) != describe(b.expected):
        changes.append(
            Change(
                "expected",
                host,
                runtime,
                subject,
                before=describe(a.expected),
                after=describe(b.expected),
            )
        )
    seen_a, seen_b = observed_text(a), observed_text(b)
    if seen_a != seen_b:
        kind = "fact" if b.fact is not None else "observed"
        changes.append(Change(kind, host, runtime, subject, before=seen_a, after=seen_b))
    changes.extend(_checks(key, a, b))
    return changes


def _flat(value: object, prefix: str = "") -> dict[str, str]:
    """A runtime entry as dotted keys: {"flags": '["--network=none"]', "build.sha512": ...}."""
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for key, item in value.items():
            out.update(_flat(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: json.dumps(value, sort_keys=True)}


def _entries(run: Run) -> dict[str, dict[str, str]]:
    return {str(name): _flat(entry) for name, entry in (run.manifest.runtimes or {}).items()}


def _renames(a: Run, b: Run) -> dict[str, str]:
    """Run B's runtime name -> run A's, for runtimes only one run names whose entries
    are identical: a rename is one change, not an added and a removed row per cell."""
    entries_a, entries_b = _entries(a), _entries(b)
    gone = {n: e for n, e in entries_a.items() if n not in entries_b}
    new = {n: e for n, e in entries_b.items() if n not in entries_a}
    renames: dict[str, str] = {}
    for name_b, entry_b in new.items():
        same = [n for n, e in gone.items() if e == entry_b and n not in renames.values()]
        if len(same) == 1:
            renames[name_b] = same[0]
    return renames


def _config_changes(a: Run, b: Run, renames: dict[str, str]) -> list[Change]:
    """The matrix's sha256 and each runtime entry's settings (flags, release, build)."""
    changes = []
    sha_a, sha_b = a.manifest.matrix_sha256, b.manifest.matrix_sha256
    if sha_a != sha_b:
        changes.append(Change("matrix", "", subject="sha256", before=sha_a, after=sha_b))
    for name_b, name_a in renames.items():
        changes.append(Change("renamed", "", name_b, before=name_a, after=name_b))
    entries_a, entries_b = _entries(a), _entries(b)
    for name, entry_b in entries_b.items():
        entry_a = entries_a.get(renames.get(name, name))
        if entry_a is None:
            continue
        for key in dict.fromkeys([*entry_a, *entry_b]):
            if entry_a.get(key) != entry_b.get(key):
                changes.append(
                    Change("config", "", name, key, before=entry_a.get(key), after=entry_b.get(key))
                )
    return changes


def diff_runs(a: Run, b: Run) -> RunDiff:
    """Every difference from run A to run B.

    Configuration drift first (the matrix, renamed runtimes, runtime settings), then
    kernels and runtime versions, then each verdict both runs have (in run B's
    order), then the verdicts only run B has, then those only run A had.
    """
    renames = _renames(a, b)
    changes: list[Change] = _config_changes(a, b, renames)
    hosts_a = set(a.hosts())
    for host in [h for h in b.hosts() if h in hosts_a]:
        kernel_a, kernel_b = a.kernel(host), b.kernel(host)
        if kernel_a != kernel_b:
            changes.append(Change("kernel", host, before=kernel_a, after=kernel_b))
        runtimes_a = set(a.runtimes(host))
        for runtime in b.runtimes(host):
            old = renames.get(runtime, runtime)
            if old not in runtimes_a:
                continue
            version_a, version_b = a.runtime_version(host, old), b.runtime_version(host, runtime)
            if version_a != version_b:
                changes.append(Change("version", host, runtime, before=version_a, after=version_b))
            build_a, build_b = a.runtime_build(host, old), b.runtime_build(host, runtime)
            if build_a != build_b:
                changes.append(Change("build", host, runtime, before=build_a, after=build_b))
    by_a = a.by_key()
    # Run B's verdicts under run A's runtime names, so that a renamed runtime compares.
    by_b = {(h, renames.get(r, r), s): v for (h, r, s), v in b.by_key().items()}
    for key, verdict_b in by_b.items():
        if key in by_a:
            changes.extend(_verdict_changes(key, by_a[key], verdict_b))
    for key, verdict_b in by_b.items():
        if key not in by_a:
            changes.append(Change("added", *key, before=None, after=str(verdict_b.verdict)))
    for key, verdict_a in by_a.items():
        if key not in by_b:
            changes.append(Change("removed", *key, before=str(verdict_a.verdict), after=None))
    return RunDiff(a=a, b=b, changes=changes)
