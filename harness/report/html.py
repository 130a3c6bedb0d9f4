"""One self-contained HTML page: the verdict grid, click-through, and history.

Nothing is loaded from anywhere: CSS and the little JS (`static/report.css` and
`report.js`, package files) are inlined into the page, there are no external
links, and a Content-Security-Policy forbids any fetch, so the file can be
archived, mailed or opened from a CI artifact as it is.

The page works without JS. Each grid cell links to its detail panel (`#d-…`) and
`:target` shows it; the panel links on to the cell's raw probe output (`#raw-…`).
Every verdict has its own colour *and* its own symbol, so the grid reads in grey.
Given several runs (oldest first), the newest is the grid and a history section
shows each cell's verdicts across the runs, marking where each mismatch appeared.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from importlib.resources import files

from harness.judge.verdicts import MISMATCH
from harness.report.grid import Grid, run_grids
from harness.report.grid import subjects as grid_subjects
from harness.report.history import Step, mismatch_since, timelines
from harness.report.runs import describe, failing_checks, observed_text, verdict_counts
from harness.report.symbols import ATTENTION, ORDER, SYMBOL
from harness.results.records import CellRecord, VerdictRecord
from harness.results.store import Run
from harness.text import html_text

RAW_LIMIT = 256 * 1024  # characters of raw probe output kept per cell


def _static(name: str) -> str:
    """A file of `static/` (the page's CSS and JS), as the wheel ships it."""
    return (files("harness.report") / "static" / name).read_text(encoding="utf-8")


# As the page inlines them: a newline before, as the strings had.
CSS = "\n" + _static("report.css")
JS = "\n" + _static("report.js")

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)


def _e(value: object) -> str:
    return html_text(value)


def _t(value: object) -> str:
    """Escaped for a text node (not an attribute), where quotes need no escaping: a
    probe's raw JSON lines are mostly quotes, and a fleet's page has hundreds of them."""
    return html_text(value).replace("&quot;", '"').replace("&#x27;", "'")


def _vclass(verdict: VerdictRecord | None) -> str:
    return f"v-{verdict.verdict}" if verdict is not None else "v-none"


def _counts(run: Run) -> str:
    counts = verdict_counts(run)
    return "".join(
        f'<span class="v-{v}"><span class="sym">{SYMBOL[v]}</span> {counts[v]} {v}</span>'
        for v in ORDER
    )


def _legend() -> str:
    return "".join(
        f'<span class="v-{v}"><span class="sym">{SYMBOL[v]}</span> {v}</span>' for v in ORDER
    )


def _raw_id(hi: int, ri: int) -> str:
    return f"raw-{hi}-{ri}"


def _detail_id(hi: int, ri: int, si: int) -> str:
    return f"d-{hi}-{ri}-{si}"


def _run_label(run: Run, index: int | None = None) -> str:
    prefix = f"#{index + 1} " if index is not None else ""
    when = f" ({run.started})" if run.started else ""
    return f"{prefix}{run.name}{when}"


def _grid(
    run: Run,
    grid: Grid,
    hi: int,
    history: dict[tuple[str, str, str], list[Step]] | None,
) -> str:
    host = grid.hosts[0]
    kernel = run.kernel(host)
    head = "".join(
        f'<th scope="col" data-runtime="{_e(rt)}"'
        f' title="{_e(run.runtime_version(host, rt) or "")}">'
        f'{_e(rt)} <a class="raw-link" href="#{_raw_id(hi, ri)}">raw</a></th>'
        for ri, rt in enumerate(grid.runtimes)
    )
    rows = []
    for si, row in enumerate(grid.rows):
        cells = []
        needs = False
        for ri, cell in enumerate(row.cells):
            if cell is None:
                cells.append('<td class="cell v-none" data-verdict="none"></td>')
                continue
            verdict = cell.record
            needs = needs or verdict.verdict in ATTENTION
            detail = _detail_id(hi, ri, si)
            since = ""
            if history is not None:
                step = mismatch_since(history.get((host, cell.runtime, row.subject), []))
                if step is not None:
                    since = f'<span class="since">since run #{step.index + 1}</span>'
            title = f"{verdict.verdict}: expected {describe(verdict.expected)}"
            cells.append(
                f'<td class="cell {_vclass(verdict)}" data-verdict="{verdict.verdict}"'
                f' data-host="{_e(host)}" data-runtime="{_e(cell.runtime)}"'
                f' data-subject="{_e(row.subject)}" data-detail="{detail}">'
                f'<a href="#{detail}" title="{_e(title)}">'
                f'<span class="sym">{cell.symbol}</span> '
                f'<span class="obs">{_e(cell.text)}</span>{since}</a></td>'
            )
        rows.append(
            f'<tr class="{"attention" if needs else "quiet"}" data-subject="{_e(row.subject)}">'
            f'<th scope="row" class="subject" data-kind="{row.kind}">{_e(row.subject)}</th>'
            + "".join(cells)
            + "</tr>"
        )
    return (
        f'<section class="host" id="grid-{hi}" data-host="{_e(host)}">'
        f"<h2>host: {_e(host)}</h2>"
        + (f'<p class="meta">kernel {_e(kernel)}</p>' if kernel else "")
        + '<table class="grid"><thead><tr><th scope="col">fact / property</th>'
        + head
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></section>"
    )


def _checks_table(verdict: VerdictRecord) -> str:
    if not verdict.checks:
        return '<p class="meta">No checks: nothing was attempted for this verdict.</p>'
    failing = {id(c) for c in failing_checks(verdict)} if verdict.verdict in ATTENTION else set()
    rows = []
    for check in verdict.checks:
        elapsed = f"{check.elapsed_ms:g}" if check.elapsed_ms is not None else ""
        cls = "failing" if id(check) in failing else ""
        rows.append(
            f'<tr class="check {cls}" data-check="{_e(check.id)}">'
            f'<td class="mono">{_e(check.id)}</td><td class="outcome">{_e(check.outcome)}</td>'
            f'<td class="errno mono">{_e(check.errno or "")}</td>'
            f'<td class="detail">{_t(check.detail or "")}</td>'
            f"<td>{_e(elapsed)}</td><td>{_e(check.control or '')}</td></tr>"
        )
    return (
        '<table class="checks"><thead><tr><th>check</th><th>outcome</th><th>errno</th>'
        "<th>detail</th><th>ms</th><th>control</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def _detail(
    run: Run,
    verdict: VerdictRecord,
    *,
    ids: tuple[int, int, int],
    steps: list[Step] | None,
) -> str:
    hi, ri, si = ids
    items = [
        (
            "verdict",
            f'<span class="{_vclass(verdict)}"><span class="sym">'
            f"{SYMBOL[verdict.verdict]}</span> {_e(verdict.verdict)}</span>",
        ),
        ("expected", _e(describe(verdict.expected))),
        ("observed", _e(observed_text(verdict))),
    ]
    if verdict.errno:
        items.append(("errno", f'<span class="mono">{_e(verdict.errno)}</span>'))
    if verdict.reason:
        items.append(("reason", _e(verdict.reason)))
    version = run.runtime_version(verdict.host, verdict.runtime)
    if version:
        items.append(("runtime version", _e(version)))
    if steps:
        since = mismatch_since(steps)
        if since is not None:
            items.append(("mismatch since", _e(_run_label(since.run, since.index))))
        # The trail itself is in the history section, once: here, a count per verdict.
        seen = Counter(str(s.verdict.verdict) if s.verdict else "absent" for s in steps)
        counts = ", ".join(f"{n} {v}" for v, n in seen.items())
        link = '(<a href="#history">history</a>)'
        items.append(("history", f"{len(steps)} runs: {_e(counts)} {link}"))
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items)
    return (
        f'<article class="panel detail" id="{_detail_id(hi, ri, si)}"'
        f' data-host="{_e(verdict.host)}" data-runtime="{_e(verdict.runtime)}"'
        f' data-subject="{_e(verdict.subject())}" data-verdict="{verdict.verdict}">'
        f'<a class="close" href="#grid-{hi}">close ✕</a>'
        f"<h3>{_e(verdict.host)} / {_e(verdict.runtime)} / {_e(verdict.subject())}</h3>"
        f"<dl>{dl}</dl>"
        f"<h3>checks</h3>{_checks_table(run.full(verdict))}"
        f'<p><a class="raw-link" href="#{_raw_id(hi, ri)}">raw probe output of this cell</a></p>'
        "</article>"
    )


def _raw(run: Run, host: str, runtime: str, hi: int, ri: int) -> str:
    cell: CellRecord | None = run.cell(host, runtime)
    if cell is None:
        body = '<p class="meta">No cell record: the run has no raw output for this cell.</p>'
    else:
        items = [
            ("status", cell.status),
            ("reason", cell.reason or ""),
            ("exit status", "" if cell.exit_status is None else cell.exit_status),
            ("signal", cell.signal or ""),
            ("elapsed", f"{cell.elapsed:.3f} s"),
            ("started", cell.started),
            ("runtime version", run.runtime_version(host, runtime) or ""),
            ("host kernel", cell.host_kernel or ""),
        ]
        dl = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in items if v != "")
        stdout = cell.stdout
        cut = ""
        if len(stdout) > RAW_LIMIT:
            stdout = stdout[:RAW_LIMIT]
            cut = f'<p class="meta">cut at {RAW_LIMIT} characters; cells.jsonl has it all</p>'
        body = (
            f'<dl>{dl}</dl><h3>probe stdout</h3><pre class="stdout">{_t(stdout)}</pre>{cut}'
            f'<h3>probe stderr (tail)</h3><pre class="stderr">{_t(cell.stderr)}</pre>'
        )
    return (
        f'<article class="panel raw" id="{_raw_id(hi, ri)}"'
        f' data-host="{_e(host)}" data-runtime="{_e(runtime)}">'
        f'<a class="close" href="#grid-{hi}">close ✕</a>'
        f"<h3>{_e(host)} / {_e(runtime)}: raw probe output</h3>{body}</article>"
    )


def _step(step: Step, *, count: int = 1) -> str:
    """A run's square, or `count` runs in a row from this one (`data-runs`, "xN")."""
    verdict = step.verdict
    last = step.index + count
    runs = f"runs #{step.index + 1}-#{last}" if count > 1 else f"run #{step.index + 1}"
    span = f' data-runs="{count}"' if count > 1 else ""
    times = f'<span class="times">&#215;{count}</span>' if count > 1 else ""
    if verdict is None:
        title = f"{runs}: not in this run"
        return (
            f'<li class="step v-none" data-run="{step.index}"{span} title="{_e(title)}">'
            f"&#8211;{times}</li>"
        )
    title = (
        f"{runs}: {verdict.verdict}, observed {observed_text(verdict)}"
        + (" (mismatch first seen here)" if step.first else "")
        + (f"; {verdict.reason}" if verdict.reason and count == 1 else "")
    )
    first = " first" if step.first else ""
    return (
        f'<li class="step {_vclass(verdict)}{first}" data-run="{step.index}"{span}'
        f' data-verdict="{verdict.verdict}" title="{_e(title)}">{SYMBOL[verdict.verdict]}'
        f"{times}</li>"
    )


def _same(a: Step, b: Step) -> bool:
    """Would one square say both runs? The same verdict and observation, and neither
    is the run where a mismatch first appeared (that one is always its own square)."""
    if a.first or b.first:
        return False
    if a.verdict is None or b.verdict is None:
        return a.verdict is None and b.verdict is None
    return (a.verdict.verdict, observed_text(a.verdict)) == (
        b.verdict.verdict,
        observed_text(b.verdict),
    )


def _trail(steps: list[Step]) -> str:
    """One square per run, except that runs in a row where the cell stayed the same are
    one square with their count (a healthy fleet, night after night, is mostly that):
    30 nights of a fleet stay a page that opens at once. A run where a mismatch first
    appeared always has its own square."""
    squares: list[str] = []
    i = 0
    while i < len(steps):
        j = i + 1
        while j < len(steps) and _same(steps[i], steps[j]):
            j += 1
        squares.append(_step(steps[i], count=j - i))
        i = j
    return "".join(squares)


def _history(runs: Sequence[Run], history: dict[tuple[str, str, str], list[Step]]) -> str:
    items = "".join(
        f'<li data-run="{i}"><span class="mono">{_e(r.name)}</span>'
        f"{' · ' + _e(r.started) if r.started else ''}"
        f"{' · exit ' + _e(r.exit_code) if r.exit_code is not None else ''}</li>"
        for i, r in enumerate(runs)
    )
    newest_first = list(reversed(runs))  # the newest run's (matrix) order, then older ones'
    hosts = list(dict.fromkeys(h for r in newest_first for h in r.hosts()))
    sections = []
    for host in hosts:
        runtimes = list(dict.fromkeys(rt for r in newest_first for rt in r.runtimes(host)))
        subjects = list(dict.fromkeys(s for r in newest_first for s in grid_subjects(r, host)))
        if not runtimes:
            continue
        head = "".join(f'<th scope="col">{_e(rt)}</th>' for rt in runtimes)
        rows = []
        for subject in subjects:
            cells = []
            for runtime in runtimes:
                steps = history.get((host, runtime, subject))
                if steps is None:
                    cells.append('<td class="history"></td>')
                    continue
                trail = _trail(steps)
                cells.append(
                    f'<td class="history" data-runtime="{_e(runtime)}"'
                    f' data-subject="{_e(subject)}"><ol class="timeline">{trail}</ol></td>'
                )
            rows.append(
                f'<tr><th scope="row" class="subject">{_e(subject)}</th>{"".join(cells)}</tr>'
            )
        sections.append(
            f'<h3>host: {_e(host)}</h3><table class="history-grid" data-host="{_e(host)}">'
            f'<thead><tr><th scope="col">fact / property</th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    return (
        f'<section id="history"><h2>History: {len(runs)} runs, oldest first</h2>'
        '<p class="meta">One square per run. A ringed square with ▲ marks the run where a'
        " mismatch first appeared; &#8211; means the run did not have that cell; a"
        " square marked &#215;N stands for N runs in a row where the cell stayed the same.</p>"
        f'<ol class="runs">{items}</ol>{"".join(sections)}</section>'
    )


def render_html(runs: Sequence[Run]) -> str:
    """The newest run's grid and details, plus a history when given several runs."""
    return "".join(html_parts(runs))


def html_parts(runs: Sequence[Run]) -> Iterator[str]:
    """`render_html`'s page in pieces: the grids host by host, then each host's
    panels, reading each cell's record only while its panel is made, so a page of
    many hosts is never held whole."""
    if not runs:
        raise ValueError("render_html needs at least one run")
    run = runs[-1]
    history = timelines(runs) if len(runs) > 1 else None
    grids = run_grids(run)  # one per host with verdicts
    title = f"harness: {run.matrix_name}" if run.matrix_name else "harness"
    meta = [f'results <span class="mono">{_e(run.name)}</span>']
    if run.run_id:
        meta.append(f"run {_e(run.run_id)}")
    if run.started:
        meta.append(f"started {_e(run.started)}")
    if run.exit_code is not None:
        meta.append(f"exit {_e(run.exit_code)}")
    if run.interrupted:
        meta.append("<strong>interrupted</strong>")
    mismatches = sum(v.verdict in MISMATCH for v in run.verdicts)
    yield (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head>"
        f'<body data-mismatches="{mismatches}" data-runs="{len(runs)}">'
        f"<header><h1>{_e(title)}</h1>"
        f'<p class="meta">{" · ".join(meta)}</p>'
        f'<p class="counts">{_counts(run)}</p>'
        f'<p class="legend">{_legend()}</p>'
        '<p class="tools"><label><input type="checkbox" id="attention-only"> only rows that'
        " need attention</label> · click a cell for its checks, errno, detail and raw output</p>"
        "</header>"
        "<main>"
    )
    for hi, grid in enumerate(grids):
        yield _grid(run, grid, hi, history)
    yield f"{_history(runs, history) if history else ''}</main>"
    for hi, grid in enumerate(grids):  # the panels the grids' cells link to, by index
        host = grid.hosts[0]
        for ri, runtime in enumerate(grid.runtimes):
            yield _raw(run, host, runtime, hi, ri)
            for si, row in enumerate(grid.rows):
                cell = row.cells[ri]
                if cell is not None:
                    steps = history.get((host, runtime, row.subject)) if history else None
                    yield _detail(run, cell.record, ids=(hi, ri, si), steps=steps)
    yield f"<script>{JS}</script></body></html>\n"
