"""One bisection: list the builds, then step through the search, recording each step.

A step fetches the candidate runsc (cache, sha512), installs it on the host by
sha256, and runs one ordinary harness run: the selected runtime with `binary`
replaced by the candidate, only the scenario that holds the selected property
or fact, on one host (plus its host control cell). The run's verdict for that
property or fact decides the step: `pass` is good, `regression` or
`unexpected` is bad, anything else (an inconclusive run, a broken download, a
failed install) is skipped. Every step has its own results folder, and
`bisect.json` is rewritten after each one, so an interrupted bisection keeps
what it learned.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import anyio
from rich.progress import Progress

from harness.bisect.report import SUMMARY, to_json
from harness.bisect.search import Bisection, StepOutcome, combine
from harness.bisect.steps import BisectReport, StepRecord, Target
from harness.errors import ArtifactError, ResultsError, TransportError, UsageError
from harness.files import output_error, write_atomic
from harness.judge.verdicts import MISMATCH
from harness.matrix import Host, Matrix
from harness.matrix.models import RunscRuntimeSpec
from harness.plan import make_plan
from harness.probe import BuiltProbe
from harness.releases.artifacts import fetch
from harness.releases.index import ReleaseIndex
from harness.releases.install import HostInfo, candidate_host, install
from harness.releases.versions import Version, select_range
from harness.results import ResultsStore, Verdict, VerdictRecord
from harness.results.store.layout import utc_now
from harness.runner import Runner
from harness.runtimes import make_runtime
from harness.scenarios import SCENARIOS
from harness.scenarios.base import PROPERTIES
from harness.text import json_text
from harness.transport import Transport, open_transport

STEP = "step.json"
BISECTABLE = ("runsc", "oci")


def find_target(*, prop: str | None, fact: str | None) -> Target:
    """`--property P` or `--fact F` (exactly one), and the scenario that measures it."""
    if (prop is None) == (fact is None):
        raise UsageError("give exactly one of --property P or --fact F")
    if prop is not None:
        for scenario in SCENARIOS.values():
            if scenario.property is not None and scenario.property == prop:
                return Target("property", scenario.property, scenario.name)
        raise UsageError(f"--property: unknown property {prop!r} (known: {', '.join(PROPERTIES)})")
    assert fact is not None
    for scenario in SCENARIOS.values():
        if fact in scenario.facts:
            return Target("fact", fact, scenario.name)
    known = sorted({f for s in SCENARIOS.values() for f in s.facts})
    raise UsageError(f"--fact: unknown fact {fact!r} (known: {', '.join(known)})")


def choose(matrix: Matrix, *, runtime: str, host: str | None, target: Target) -> tuple[Host, str]:
    """Check that the runtime can take a candidate runsc, that the target can be
    judged on it, and pick the host (the only one, unless --host says)."""
    if runtime not in matrix.runtimes:
        known = ", ".join(matrix.runtimes) or "none"
        raise UsageError(f"--runtime: unknown runtime {runtime!r} (known: {known})")
    spec = matrix.runtimes[runtime]
    if spec.kind not in BISECTABLE:
        raise UsageError(
            f"--runtime {runtime}: kind {spec.kind!r} has no binary to replace"
            f" (bisect needs kind {' or '.join(BISECTABLE)})"
        )
    if target.kind == "fact":
        identity = (
            target.name == "kernel_release" and make_runtime(runtime, spec).promises_own_kernel
        )
        if target.name not in spec.facts and not identity:
            raise UsageError(
                f"--fact {target.name}: runtimes.{runtime} has no expectation for it, so no"
                f" step could be good or bad (add facts = {{ {target.name} = ... }})"
            )
    if target.kind == "property" and target.name == "attribution" and spec.attribution is None:
        raise UsageError(f"--property attribution: runtimes.{runtime} has no attribution source")
    names = [h.name for h in matrix.hosts]
    if host is None:
        if len(matrix.hosts) != 1:
            raise UsageError(
                f"the matrix has {len(names)} hosts; choose one with --host ({', '.join(names)})"
            )
        return matrix.hosts[0], runtime
    for h in matrix.hosts:
        if h.name == host:
            return h, runtime
    raise UsageError(f"--host: unknown host {host!r} (known: {', '.join(names) or 'none'})")


class StepObserver(Protocol):
    def step_started(self, number: int, version: Version) -> None: ...

    def step_finished(self, step: StepRecord) -> None: ...


class _Silent:
    def step_started(self, number: int, version: Version) -> None:
        pass

    def step_finished(self, step: StepRecord) -> None:
        pass


def classify(verdict: VerdictRecord | None) -> tuple[StepOutcome, str | None]:
    """A run's verdict for the target as a step outcome, with the reason if skipped."""
    if verdict is None:
        return StepOutcome.SKIPPED, "the run gave no verdict for it"
    if verdict.verdict is Verdict.PASS:
        return StepOutcome.GOOD, None
    # A mismatch but `flaky`: reruns of this step disagreed, so it is no clean `bad`.
    if verdict.verdict in MISMATCH and verdict.verdict is not Verdict.FLAKY:
        return StepOutcome.BAD, None
    return StepOutcome.SKIPPED, f"{verdict.verdict}: {verdict.reason or 'no reason given'}"


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Replace a JSON file atomically; a host's strings (a step's reason) with no raw
    bidi or control character, as in the JSON report."""
    try:
        text = json_text(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        write_atomic(path, text + "\n")
    except OSError as exc:
        raise ResultsError(output_error(path, exc)) from exc


class BisectSession:
    """Runs one bisection into one folder; see the module docstring."""

    def __init__(
        self,
        *,
        matrix: Matrix,
        host: Host,
        runtime: str,
        target: Target,
        good: Version,
        bad: Version,
        index: ReleaseIndex,
        cache: Path,
        folder: Path,
        probe: BuiltProbe,
        repeat: int = 1,
        progress: Progress | None = None,
        observer: StepObserver | None = None,
        max_steps: int | None = None,
        script: str | None = None,
    ) -> None:
        self.matrix = matrix
        self.host = host
        self.runtime = runtime
        self.target = target
        self.index = index
        self.cache = cache
        self.probe = probe
        self.repeat = repeat
        self.progress = progress
        self.observer = observer or _Silent()
        self.max_steps = max_steps
        self.script = script
        self._opened = False
        self.report = BisectReport(
            matrix=matrix,
            runtime=runtime,
            host=host.name,
            target=target,
            good=good,
            bad=bad,
            index=index.location,
            folder=folder,
            repeat=repeat,
        )

    # -- bookkeeping -----------------------------------------------------------------

    def _save(self) -> None:
        if self._opened:
            write_json(self.report.folder / SUMMARY, to_json(self.report))

    def _open_folder(self) -> None:
        folder = self.report.folder
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ResultsError(f"{folder}: cannot write results: {exc.strerror}") from exc
        if (folder / SUMMARY).exists() or any(folder.glob("step-*")):
            raise ResultsError(f"{folder}: already holds a bisection; choose another --out")
        self._opened = True

    # -- the search ------------------------------------------------------------------

    async def run(self) -> BisectReport:
        """List, search, record. Interrupted: `bisect.json` still says what was learned."""
        report = self.report
        listed = await self.index.versions(report.good.channel)
        report.versions = select_range(listed, report.good, report.bad, index=self.index.location)
        self._open_folder()
        search = Bisection(len(report.versions), max_steps=self.max_steps)
        try:
            self._save()
            async with open_transport(self.host) as transport:
                info = await candidate_host(transport, workdir=self.host.workdir)
                report.arch = info.arch
                while (i := search.next()) is not None:
                    step = await self._step(
                        transport,
                        info=info,
                        number=len(report.steps) + 1,
                        version=report.versions[i],
                    )
                    search.record(i, step.outcome)
                    report.steps.append(step)
                    report.result = search.result()
                    self._save()
        except anyio.get_cancelled_exc_class():
            report.interrupted = True
            raise
        finally:
            with anyio.CancelScope(shield=True):
                report.result = search.result() if search.order else None
                report.ended = utc_now()
                self._save()
        return report

    async def _step(
        self, transport: Transport, *, info: HostInfo, number: int, version: Version
    ) -> StepRecord:
        step = StepRecord(
            number=number, version=version, folder=f"step-{number:02d}-{version.name}"
        )
        folder = self.report.folder / step.folder
        try:
            folder.mkdir()
        except OSError as exc:
            raise ResultsError(f"{folder}: cannot write results: {exc.strerror}") from exc
        self.observer.step_started(number, version)
        t0 = time.monotonic()
        try:
            await self._try(step, transport=transport, info=info, folder=folder)
        except anyio.get_cancelled_exc_class():
            step.reason = "interrupted"
            raise
        finally:
            step.elapsed = time.monotonic() - t0
            with anyio.CancelScope(shield=True):
                write_json(folder / STEP, self._step_json(step))
        self.observer.step_finished(step)
        return step

    async def _try(
        self, step: StepRecord, *, transport: Transport, info: HostInfo, folder: Path
    ) -> None:
        try:
            step.candidate = await fetch(
                self.index, step.version, arch=info.arch, cache=self.cache, progress=self.progress
            )
        except ArtifactError as exc:
            step.reason = exc.reason
            return
        try:
            installed = await install(transport, step.candidate, host=info)
        except TransportError as exc:
            step.reason = f"install failed: {exc.reason}"
            return
        step.remote_path, step.uploaded = installed.path, installed.uploaded
        step.reported_version = installed.version
        outcomes: list[StepOutcome] = []
        reasons: list[str] = []
        for run in range(self.repeat):
            where = folder if self.repeat == 1 else folder / f"run-{run + 1}"
            verdict = await self._run_once(installed.path, where)
            outcome, why = classify(verdict)
            if self.script is not None:
                outcome, why = await self._judge_by_script(step, installed.path, where)
            outcomes.append(outcome)
            step.verdicts.append(str(verdict.verdict) if verdict else "missing")
            if why:
                reasons.append(why)
            if step.judged is None and outcome in (StepOutcome.GOOD, StepOutcome.BAD):
                step.judged = verdict
        step.outcome = combine(outcomes)
        if step.outcome is StepOutcome.FLAKY:
            step.reason = f"runs disagree: {', '.join(step.verdicts)}"
        elif step.outcome is StepOutcome.SKIPPED:
            step.reason = reasons[0] if reasons else None

    async def _judge_by_script(
        self, step: StepRecord, remote_runsc: str, folder: Path
    ) -> tuple[StepOutcome, str | None]:
        """`--script CMD`, with git bisect run's convention: exit 0 good, 125 skip,
        any other code below 128 bad; 128 and above (a crash, a signal) skip.

        It runs on the controller, in the step's results folder, after the step's
        harness run; its output is kept in `script.log` there.
        """
        assert self.script is not None and step.candidate is not None
        env = {
            **os.environ,
            "HARNESS_VERSION": step.version.name,
            "HARNESS_CHANNEL": step.version.channel,
            "HARNESS_RUNSC_LOCAL": str(step.candidate.runsc),
            "HARNESS_RUNSC": remote_runsc,
            "HARNESS_HOST": self.host.name,
            "HARNESS_RESULTS": str(folder),
        }
        folder.mkdir(parents=True, exist_ok=True)
        done = await anyio.run_process(
            ["sh", "-c", self.script], env=env, cwd=folder, check=False, stderr=subprocess.STDOUT
        )
        log = done.stdout[-64 * 1024 :]
        write_atomic(folder / "script.log", log)
        code = done.returncode
        if code == 0:
            return StepOutcome.GOOD, None
        if code == 125:
            return StepOutcome.SKIPPED, "--script exited 125 (skip)"
        if 0 < code < 128:
            return StepOutcome.BAD, None
        return StepOutcome.SKIPPED, f"--script exited {code} (crashed or killed)"

    def _step_matrix(self, binary: str) -> Matrix:
        spec = self.matrix.runtimes[self.runtime]
        # A runtime that names a release runs the candidate instead, never its release.
        unpinned = {"release": None, "channel": None} if isinstance(spec, RunscRuntimeSpec) else {}
        spec = spec.model_copy(update={"binary": binary, **unpinned})
        return self.matrix.model_copy(
            update={
                "runtimes": {**self.matrix.runtimes, self.runtime: spec},
                "scenarios": (self.target.scenario,),
            }
        )

    async def _run_once(self, binary: str, folder: Path) -> VerdictRecord | None:
        """One ordinary harness run of the target with the candidate, into `folder`."""
        plan = make_plan(
            self._step_matrix(binary),
            hosts=[self.host.name],
            runtimes=[self.runtime],
            scenarios=[self.target.scenario],
        )
        store = ResultsStore(folder)
        store.open()
        try:
            # The step's verdict keeps its check results: the report names each
            # attempt whose outcome changed across the boundary.
            outcome = await Runner(plan, probe=self.probe, store=store, keep_checks=True).run()
        finally:
            store.close()
        return _find(
            outcome.verdicts, host=self.host.name, runtime=self.runtime, target=self.target
        )

    def _step_json(self, step: StepRecord) -> dict[str, Any]:
        data = step.to_json()
        data["candidate"] = step.candidate.to_json() if step.candidate else None
        data["remote_path"] = step.remote_path
        data["judged"] = step.judged.to_json() if step.judged else None
        if self.repeat > 1:
            data["runs"] = [f"run-{i + 1}" for i in range(len(step.verdicts))]
        return data


def _find(
    verdicts: Sequence[VerdictRecord], *, host: str, runtime: str, target: Target
) -> VerdictRecord | None:
    for v in verdicts:
        if v.host == host and v.runtime == runtime:
            name = v.property if target.kind == "property" else v.fact
            if name == target.name:
                return v
    return None
