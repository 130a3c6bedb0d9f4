"""`harness bisect --from RESULTS`: what to bisect, taken from a run's regression.

A nightly run says `egress_confinement` regressed on `node-17/runsc-nightly`; the
bisection needs exactly that runtime, property, host and matrix. Taking them from
the results folder saves retyping them, and refuses to guess when the run holds
several regressions (the flags narrow the choice).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.errors import UsageError
from harness.judge.verdicts import MISMATCH
from harness.report.runs import load_run


@dataclass(frozen=True, slots=True)
class Origin:
    """The regression a bisection starts from."""

    matrix: Path
    host: str
    runtime: str
    subject: str
    is_property: bool
    verdict: str


def regression_in(
    folder: Path,
    *,
    runtime: str | None = None,
    prop: str | None = None,
    fact: str | None = None,
    host: str | None = None,
) -> Origin:
    """The one regression (or unexpected verdict) in `folder` that the flags allow."""
    run = load_run(folder)
    found = [
        v
        for v in run.verdicts
        if v.verdict in MISMATCH
        and runtime in (None, v.runtime)
        and host in (None, v.host)
        and (prop is None or v.property == prop)
        and (fact is None or v.fact == fact)
    ]
    pairs = list(dict.fromkeys((v.runtime, v.subject()) for v in found))
    if not pairs:
        raise UsageError(f"--from {folder}: no regression to bisect (with the flags given)")
    if len(pairs) > 1:
        shown = ", ".join(f"{rt} {subject}" for rt, subject in pairs[:6])
        raise UsageError(
            f"--from {folder}: several regressions ({shown}); choose with --runtime and"
            " --property or --fact"
        )
    first = next(v for v in found if (v.runtime, v.subject()) == pairs[0])
    path = run.manifest.matrix.path if run.manifest.matrix else None
    if not path:
        raise UsageError(f"--from {folder}: the manifest names no matrix; give MATRIX")
    return Origin(
        matrix=Path(str(path)),
        host=first.host,
        runtime=first.runtime,
        subject=first.subject(),
        is_property=first.property is not None,
        verdict=str(first.verdict),
    )
