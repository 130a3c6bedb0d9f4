"""`harness evidence`: export measured properties in OpenShell's contract shapes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.errors import ResultsError
from harness.evidence import CONFIRMATION, FORMATS, Binding, CellEvidence, document, load_evidence
from harness.evidence.confirmation import session_id_problem, upstream_failures
from harness.evidence.fence import GUARANTEES, UNDECLARED, outer_fence
from harness.evidence.legacy import legacy_document
from harness.evidence.openshell import CONTRACT, contract_properties
from harness.exitcodes import ExitCode
from harness.files import output_error, own_folder, write_atomic
from harness.results.store.manifest import Manifest
from harness.text import file_name, json_text, rich_text, visible


def _filename(host: str, runtime: str) -> str:
    """Unique per (host, runtime) and bounded, whatever the names hold."""
    return f"{file_name(host, runtime)}.json"


@click.command()
@click.argument("folder", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="openshell",
    show_default=True,
    help=(
        "openshell: properties {enforced, mechanism}; openshell-confirmation: upstream's"
        " BoundaryConfirmation, field by field; openshell-legacy: the older mechanism"
        " struct and its validate() result; json: openshell and openshell-legacy, plus"
        " observations."
    ),
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    help="Where to write one document per (host, runtime) [default: FOLDER/evidence/FORMAT].",
)
@click.option(
    "--stdout",
    "to_stdout",
    is_flag=True,
    help="Print the documents as one JSON array instead of writing files.",
)
@click.option(
    "--compare",
    is_flag=True,
    help="Print, per runtime, the legacy verdict next to the property verdicts.",
)
@click.option(
    "--generation",
    help="openshell-confirmation: the sandbox generation to bind every document to"
    " [default: each runtime entry's openshell.generation].",
)
@click.option(
    "--session-id",
    help="openshell-confirmation: the launch's session id, a canonical lowercase UUID"
    " [default: each runtime entry's openshell.session_id].",
)
def evidence(
    folder: Path,
    fmt: str,
    out: Path | None,
    to_stdout: bool,
    compare: bool,
    generation: str | None,
    session_id: str | None,
) -> None:
    """Export the evidence of results FOLDER for OpenShell's confirm step.

    `enforced` comes only from measured property observations; a declared
    mechanism is recorded for audit and never changes it. With
    --format openshell-confirmation, the exit code is 1 when any document would
    fail upstream's BoundaryConfirmation::validate (each reason on stderr).
    """
    if session_id is not None and (problem := session_id_problem(session_id)):
        raise click.UsageError(f"--session-id: {problem}")
    if generation is not None and not generation.strip():
        raise click.UsageError("--generation: empty")
    manifest, cells = load_evidence(folder)
    order = {name: i for i, name in enumerate(manifest.runtimes or {})}
    cells.sort(key=lambda ev: (ev.host, order.get(ev.runtime, len(order))))
    if compare:
        _compare(manifest, cells)
        return
    binding = Binding(generation=generation, session_id=session_id)
    docs = [document(ev, manifest, fmt, binding) for ev in cells]
    if to_stdout:
        click.echo(json_text(json.dumps(docs, indent=2)))
        _refused_upstream(fmt, cells, docs)
        return
    target = out or folder / "evidence" / fmt
    # The default folders are harness's own, inside a folder others may write to:
    # a symlink planted at one is refused, never followed.
    base, names = (out, ()) if out else (folder, ("evidence", fmt))
    path = target
    try:
        own = own_folder(base, names)
    except OSError as exc:
        raise ResultsError(output_error(Path(exc.filename or target), exc)) from exc
    try:
        for ev, doc in zip(cells, docs, strict=True):
            path = target / _filename(ev.host, ev.runtime)
            write_atomic(path, json_text(json.dumps(doc, indent=2)) + "\n", folder=own)
            click.echo(str(path))
    except OSError as exc:  # read-only, a file's child, a full disk: one line, exit 2
        raise ResultsError(output_error(path, exc)) from exc
    finally:
        os.close(own)
    _refused_upstream(fmt, cells, docs)


def _refused_upstream(fmt: str, cells: list[CellEvidence], docs: list[dict[str, Any]]) -> None:
    """A confirmation upstream's check would refuse is exit 1, each reason a line on
    stderr: a CI step never takes a written document for a passing one."""
    if fmt != CONFIRMATION:
        return
    refused = 0
    for ev, doc in zip(cells, docs, strict=True):
        for why in upstream_failures(doc):
            click.echo(visible(f"{ev.host}/{ev.runtime}: {why}"), err=True)
            refused += 1
    if refused:
        raise SystemExit(ExitCode.MISMATCH)


def _compare(manifest: Manifest, cells: list[CellEvidence]) -> None:
    """The seed's argument as a table: the old contract judges mechanisms, the new
    one the four contract properties (each `enforced`, as exported). Failing legacy
    conditions, and why a property is not enforced, are listed under the table."""
    table = Table(
        title="old contract (mechanisms) vs contract properties, and harness's own verdicts",
        title_justify="left",
    )
    table.add_column("host/runtime", style="bold", no_wrap=True)
    table.add_column("legacy validate()", no_wrap=True)
    for prop in CONTRACT:
        table.add_column(prop, no_wrap=True)
    # The projection folds properties together (egress_interception needs a supervisor),
    # so a regressed build can project like a good one: harness's verdicts tell them apart.
    judged = {p for ev in cells for p in ev.property_rows()}
    own: list[str] = [
        p for p in dict.fromkeys(p for ps in CONTRACT.values() for p in ps) if p in judged
    ]
    own += sorted(judged - set(own))
    for prop in own:
        table.add_column(f"{prop} (harness)", no_wrap=True)
    failures: list[tuple[str, list[str]]] = []
    for ev in cells:
        legacy = legacy_document(ev, manifest)["validate"]
        name = f"{ev.host}/{ev.runtime}"
        if legacy["passed"]:
            verdict = Text("passes", style="green")
        else:
            verdict = Text(f"fails ({len(legacy['failing'])})", style="red")
            failures.append((name, legacy["failing"]))
        properties, _audit = contract_properties(ev)
        shown = [
            Text("true", style="green") if properties[p]["enforced"] else Text("false", style="red")
            for p in CONTRACT
        ]
        rows = ev.property_rows()
        verdicts = [_verdict_text(rows[p]["verdict"]) if p in rows else Text("-") for p in own]
        table.add_row(rich_text(name), verdict, *shown, *verdicts)
    console = Console(highlight=False)
    if not console.is_terminal:
        # Never cut: the (harness) columns grow with the guarantees; the table takes
        # only its natural width.
        console.width = max(console.width, 2000)
    console.print(table)
    console.print(
        "enforced, as exported: egress_interception needs egress_confinement and attribution"
        " enforced; request_attribution needs attribution (docs/evidence.md). The"
        " (harness) columns are harness's own verdicts: a regression shows there even"
        " when the projection looks like a good build's.",
        soft_wrap=True,
    )
    for name, failing in failures:
        line = f"{name}: legacy validate() fails on: {', '.join(failing)}"
        console.print(rich_text(line), soft_wrap=True)
    console.print(_fence_table(cells))
    console.print(
        "outer fence, as exported: established only by the run's verdicts"
        " (docs/evidence.md); a mechanism the runtime declares is shown as declared.",
        soft_wrap=True,
    )


FENCE_STYLE = {"established": "green", "not-established": "red", "not-measured": "yellow"}


def _fence_table(cells: list[CellEvidence]) -> Table:
    """The outer fence's four guarantees per runtime, each as measured, with what the
    runtime declares beside it: never in place of it."""
    table = Table(title="outer fence (OuterFenceGuarantees), measured", title_justify="left")
    table.add_column("host/runtime", style="bold", no_wrap=True)
    for guarantee in GUARANTEES:
        table.add_column(guarantee, no_wrap=True)
    for ev in cells:
        block = outer_fence(ev)
        shown = []
        for guarantee in GUARANTEES:
            found = block[guarantee]
            text = Text(found["status"].replace("-", " "), style=FENCE_STYLE[found["status"]])
            if found["declared"] != UNDECLARED:
                text.append(f" (declared: {found['declared']})", style="dim")
            shown.append(text)
        table.add_row(rich_text(f"{ev.host}/{ev.runtime}"), *shown)
    return table


VERDICT_STYLE = {"pass": "green", "regression": "red", "unexpected": "red", "flaky": "red"}


def _verdict_text(verdict: str) -> Text:
    """One verdict word, coloured as the report colours it (inconclusive: yellow)."""
    return Text(verdict, style=VERDICT_STYLE.get(verdict, "yellow"))
