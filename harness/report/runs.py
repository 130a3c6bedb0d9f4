"""Read a results folder back into typed records, for reports and diffs.

A folder is what `harness run` writes: manifest.json, cells.jsonl and
verdicts.jsonl. An interrupted run may end in a torn line; it is skipped, as
everywhere else. Newer keys in a record are ignored, so an older harness can
still report on a newer run; a missing required key is bad input.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.report.console import ORDER as CONSOLE_ORDER
from harness.report.console import STYLE
from harness.results.parse import read_cells, read_manifest, read_verdicts
from harness.results.records import (
    CellRecord,
    CheckResult,
    Verdict,
    VerdictRecord,
)

# Every verdict that is neither a pass, a skip nor inconclusive is a mismatch: it makes
# the run exit 1, a JUnit <failure>, and a row under "Mismatches".
MISMATCH = frozenset(set(Verdict) - {Verdict.PASS, Verdict.SKIPPED, Verdict.INCONCLUSIVE})
ATTENTION = MISMATCH | {Verdict.INCONCLUSIVE}
# One symbol per verdict, the same in every report as in the terminal table.
ORDER: tuple[Verdict, ...] = tuple(CONSOLE_ORDER)
SYMBOL: dict[Verdict, str] = {verdict: symbol for verdict, (symbol, _) in STYLE.items()}

Key = tuple[str, str, str]  # (host, runtime, fact or property)


@dataclass(frozen=True, slots=True)
class Run:
    """One results folder, read back."""

    folder: Path
    manifest: dict[str, Any]
    cells: list[CellRecord] = field(default_factory=list)
    verdicts: list[VerdictRecord] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def run_id(self) -> str:
        return str(self.manifest.get("run_id") or "")

    @property
    def matrix_name(self) -> str:
        matrix = self.manifest.get("matrix")
        return str(matrix.get("name", "")) if isinstance(matrix, dict) else ""

    @property
    def started(self) -> str:
        return str(self.manifest.get("started") or "")

    @property
    def ended(self) -> str | None:
        ended = self.manifest.get("ended")
        return str(ended) if ended else None

    @property
    def exit_code(self) -> int | None:
        code = self.manifest.get("exit_code")
        return code if isinstance(code, int) else None

    @property
    def interrupted(self) -> bool:
        return bool(self.manifest.get("interrupted"))

    def hosts(self) -> list[str]:
        """Hosts in the manifest's order, then any that only the verdicts name."""
        named = self.manifest.get("hosts")
        order = list(named) if isinstance(named, dict) else []
        return list(dict.fromkeys([*order, *(v.host for v in self.verdicts)]))

    def runtimes(self, host: str | None = None) -> list[str]:
        """Runtimes in matrix order (as the manifest lists them), for one host or all."""
        order: list[str] = []
        named = self.manifest.get("hosts")
        if isinstance(named, dict):
            for name, entry in named.items():
                if host in (None, name) and isinstance(entry, dict):
                    order.extend(entry.get("runtimes") or {})
        seen = [v.runtime for v in self.verdicts if host in (None, v.host)]
        present = set(seen)
        return [r for r in dict.fromkeys([*order, *seen]) if r in present]

    def subjects(self, host: str | None = None) -> list[str]:
        """Facts and properties in the order the cells report them."""
        return list(dict.fromkeys(v.subject() for v in self.verdicts if host in (None, v.host)))

    def by_key(self) -> dict[Key, VerdictRecord]:
        return {(v.host, v.runtime, v.subject()): v for v in self.verdicts}

    def cell(self, host: str, runtime: str) -> CellRecord | None:
        """The (last) record of a judged cell; implicit control cells are not judged."""
        found = None
        for cell in self.cells:
            if cell.host == host and cell.runtime == runtime and not cell.control:
                found = cell
        return found

    def host_info(self, host: str) -> dict[str, Any]:
        named = self.manifest.get("hosts")
        entry = named.get(host) if isinstance(named, dict) else None
        return entry if isinstance(entry, dict) else {}

    def runtime_version(self, host: str, runtime: str) -> str | None:
        """What the runtime said about itself (e.g. `runsc --version`), if anything."""
        entry = self.host_info(host).get("runtimes")
        info = entry.get(runtime) if isinstance(entry, dict) else None
        version = info.get("version") if isinstance(info, dict) else None
        if version:
            return str(version)
        cell = self.cell(host, runtime)
        return cell.runtime_version if cell else None

    def runtime_build(self, host: str, runtime: str) -> str | None:
        """The release build harness installed for the runtime, as
        `channel/version (sha512 prefix)`; None for a runtime not run by release."""
        entry = self.host_info(host).get("runtimes")
        info = entry.get(runtime) if isinstance(entry, dict) else None
        build = info.get("build") if isinstance(info, dict) else None
        if not isinstance(build, dict) or not build.get("version"):
            return None
        digest = str(build.get("sha512") or "")[:16]
        return f"{build.get('channel')}/{build.get('version')} (sha512 {digest})"

    def kernel(self, host: str) -> str | None:
        kernel = self.host_info(host).get("kernel_release")
        return str(kernel) if kernel else None

    def counts(self) -> dict[Verdict, int]:
        counts = dict.fromkeys(ORDER, 0)
        for v in self.verdicts:
            counts[v.verdict] += 1
        return counts


def load_run(folder: Path) -> Run:
    """Read one results folder.

    Raises:
        UsageError: the folder does not exist or does not hold a run.
    """
    manifest = read_manifest(folder)
    verdicts = [v for _line, v in read_verdicts(folder)]
    cells = [c for _line, c in read_cells(folder, required=False)]
    return Run(folder=folder, manifest=manifest, cells=cells, verdicts=verdicts)


def load_runs(folders: Iterable[Path]) -> list[Run]:
    """Several folders, oldest first (by start time, then folder name)."""
    runs = [load_run(Path(f)) for f in folders]
    return sorted(runs, key=lambda r: (r.started, r.name))


def failing_checks(verdict: VerdictRecord) -> list[CheckResult]:
    """The checks that went against the expectation; all of them when none stands out.

    Expected `enforced`: every attempt that was not blocked (and every inside control
    that did not pass). Expected `violated`: every attempt that did not escape.
    """
    if verdict.property is not None and verdict.expected == "enforced":
        bad = [c for c in verdict.checks if c.outcome not in ("blocked", "ok")]
    elif verdict.property is not None and verdict.expected == "violated":
        bad = [c for c in verdict.checks if c.outcome not in ("escaped", "ok")]
    else:
        bad = []
    return bad or list(verdict.checks)


def describe(value: object) -> str:
    """An expectation or observation as people write it: `true`, `7`, `enforced`, `-`."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def observed_text(verdict: VerdictRecord) -> str:
    return verdict.display or describe(verdict.observed)


def check_line(check: CheckResult) -> str:
    """One check on one line: `tcp-raw-ip: escaped errno=- control=escaped: detail`."""
    parts = [f"{check.id}: {check.outcome}", f"errno={check.errno or '-'}"]
    if check.control:
        parts.append(f"control={check.control}")
    line = " ".join(parts)
    return f"{line}: {check.detail}" if check.detail else line
