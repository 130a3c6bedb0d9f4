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
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from harness.report.runs import describe, observed_text, unreachable_hosts
from harness.results.records import CheckResult, Verdict, VerdictRecord
from harness.results.store import Key, Run


@dataclass(frozen=True, slots=True)
class Change:
    """One difference. `before` is run A's value, `after` run B's; None means absent.

    `kind` is one of: matrix (its sha256; host is ""), config (a runtime entry's
    setting, e.g. its flags or release; host is ""), renamed (a runtime whose entry
    is the same under another name; host is ""), kernel, version (runtime), build
    (the release build harness fetched for a runtime on a host: version and
    sha512), verdict, expected, observed (a property), fact (a fact's value), check
    (outcome, errno, control), added, removed; and the lab's: inventory (how a host
    is reached: transport, address, port, user, workdir) and unreachable (a host
    reached in one run only: one change standing for all its verdicts, `verdicts`
    of which changed).

    `side` says whose change it is: "config" (the matrix, runtimes and hosts as
    set up), "lab" (a host lost or moved, or a verdict that is inconclusive on one
    side: the lab could not judge) or "sandbox" (a judged verdict that changed).
    """

    kind: str
    host: str
    runtime: str | None = None
    subject: str | None = None  # the fact or property
    check: str | None = None  # the check id, for kind "check"
    before: str | None = None
    after: str | None = None
    side: str = "sandbox"
    verdicts: int = 0  # for kind "unreachable": the host's verdict changes it stands for

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class RunDiff:
    a: Run
    b: Run
    changes: list[Change] = field(default_factory=list)

    def _verdicts(self, side: str | None = None) -> int:
        return sum(
            (c.kind == "verdict") + c.verdicts
            for c in self.changes
            if side is None or c.side == side
        )

    @property
    def verdicts_changed(self) -> int:
        """Every verdict present in both runs that changed, a dead host's included."""
        return self._verdicts()

    @property
    def sandbox_verdicts(self) -> int:
        """Changed verdicts judged on both sides: the sandbox's behaviour changed."""
        return self._verdicts("sandbox")

    def to_json(self) -> dict[str, Any]:
        return {
            "a": str(self.a.folder),
            "b": str(self.b.folder),
            "verdicts_changed": self.verdicts_changed,
            "sandbox_verdicts_changed": self.sandbox_verdicts,
            "lab_verdicts_changed": self._verdicts("lab"),
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
    """A verdict's changes, each the lab's when either side is inconclusive."""
    lab = Verdict.INCONCLUSIVE in (a.verdict, b.verdict)
    return [replace(c, side="lab") if lab else c for c in _judged_changes(key, a, b)]


def _judged_changes(key: Key, a: VerdictRecord, b: VerdictRecord) -> list[Change]:
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
        changes.append(
            Change("matrix", "", subject="sha256", before=sha_a, after=sha_b, side="config")
        )
    for name_b, name_a in renames.items():
        changes.append(Change("renamed", "", name_b, before=name_a, after=name_b, side="config"))
    entries_a, entries_b = _entries(a), _entries(b)
    for name, entry_b in entries_b.items():
        entry_a = entries_a.get(renames.get(name, name))
        if entry_a is None:
            continue
        for key in dict.fromkeys([*entry_a, *entry_b]):
            if entry_a.get(key) != entry_b.get(key):
                before, after = entry_a.get(key), entry_b.get(key)
                changes.append(
                    Change("config", "", name, key, before=before, after=after, side="config")
                )
    return changes


# How a host is reached: what an inventory entry sets (the work folder as resolved).
REACHED = ("transport", "address", "port", "user", "workdir")


def _inventory_changes(a: Run, b: Run, host: str) -> list[Change]:
    """Inventory drift of one host, as matrix drift is shown: a key per change. A
    key one run did not record (a dead host has no resolved workdir) is not drift."""
    entry_a, entry_b = a.manifest.host(host), b.manifest.host(host)
    changes = []
    for key in REACHED:
        before, after = getattr(entry_a, key), getattr(entry_b, key)
        if before is not None and after is not None and before != after:
            changes.append(
                Change("inventory", host, subject=key, before=str(before), after=str(after),
                       side="lab")
            )  # fmt: skip
    return changes


def diff_runs(a: Run, b: Run) -> RunDiff:
    """Every difference from run A to run B.

    Configuration drift first (the matrix, renamed runtimes, runtime settings), then
    kernels and runtime versions, then each verdict both runs have (in run B's
    order), then the verdicts only run B has, then those only run A had.
    """
    renames = _renames(a, b)
    changes: list[Change] = _config_changes(a, b, renames)
    dead_a, dead_b = unreachable_hosts(a.verdicts), unreachable_hosts(b.verdicts)
    dead = set(dead_a) | set(dead_b)
    hosts_a = set(a.hosts())
    both = [h for h in b.hosts() if h in hosts_a]
    for host in both:
        changes.extend(_inventory_changes(a, b, host))
    lost: dict[str, Change] = {}
    for host in both:
        if (host in dead_a) != (host in dead_b):
            before = f"unreachable: {dead_a[host][0]}" if host in dead_a else "reachable"
            after = f"unreachable: {dead_b[host][0]}" if host in dead_b else "reachable"
            lost[host] = Change("unreachable", host, before=before, after=after, side="lab")
    for host in both:
        if host in dead:
            continue  # a lost host's kernel and versions are not known: not drift
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
                changes.append(
                    Change("version", host, runtime, before=version_a, after=version_b,
                           side="config")
                )  # fmt: skip
            build_a, build_b = a.runtime_build(host, old), b.runtime_build(host, runtime)
            if build_a != build_b:
                changes.append(
                    Change("build", host, runtime, before=build_a, after=build_b, side="config")
                )
    by_a = a.by_key()
    # Run B's verdicts under run A's runtime names, so that a renamed runtime compares.
    by_b = {(h, renames.get(r, r), s): v for (h, r, s), v in b.by_key().items()}
    judged: list[Change] = []
    folded: dict[str, int] = dict.fromkeys(lost, 0)
    for key, verdict_b in by_b.items():
        if key in by_a:
            found = _verdict_changes(key, by_a[key], verdict_b)
            if key[0] in dead:  # one line per lost host, not one per verdict and check
                if key[0] in folded:  # lost in both runs: all inconclusive, nothing changed
                    folded[key[0]] += sum(c.kind == "verdict" for c in found)
                continue
            judged.extend(found)
    for key, verdict_b in by_b.items():
        if key not in by_a and key[0] not in dead:
            side = "lab" if verdict_b.verdict is Verdict.INCONCLUSIVE else "sandbox"
            judged.append(
                Change("added", *key, before=None, after=str(verdict_b.verdict), side=side)
            )
    for key, verdict_a in by_a.items():
        if key not in by_b and key[0] not in dead:
            side = "lab" if verdict_a.verdict is Verdict.INCONCLUSIVE else "sandbox"
            judged.append(
                Change("removed", *key, before=str(verdict_a.verdict), after=None, side=side)
            )
    changes += [replace(c, verdicts=folded[h]) for h, c in lost.items()]
    # The lab's changes before the sandbox's: what to fix in the lab, then what changed.
    changes += [c for c in judged if c.side == "lab"] + [c for c in judged if c.side != "lab"]
    return RunDiff(a=a, b=b, changes=changes)
