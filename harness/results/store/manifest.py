"""manifest.json's models: the typed `Manifest` with its `HostEntry` per host, and how
a run's (or a merge's) manifest is made. Reading and writing it is `read.py`'s and
`write.py`'s job; `schema.py` draws its JSON Schema from these types.

Unknown keys are kept (`_Open`) and written back as read, so an older harness can
read a newer run and a newer one an older run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from harness.text import redact_argv, redact_url

if TYPE_CHECKING:
    from harness.matrix import RuntimeSpec
    from harness.plan import Plan


class _Open(BaseModel):
    """Tolerant of keys it does not name: they are kept, and written back as read."""

    model_config = ConfigDict(extra="allow")

    def to_json(self) -> dict[str, Any]:
        """As written: the keys set, none added."""
        return self.model_dump(exclude_unset=True)


class MatrixRef(_Open):
    name: str | None = None
    path: str | None = None
    sha256: str | None = None


class Selection(_Open):
    """What `harness run` was asked to run: `--resume` and `merge` run it again."""

    hosts: list[str] | None = None
    runtimes: list[str] | None = None
    scenarios: list[str] | None = None
    shard: str | None = None
    index: str | None = None


class Segment(_Open):
    """One part of a run that was interrupted and resumed (`--resume`)."""

    run_id: str | None = None
    started: str | None = None
    ended: str | None = None


class SshInfo(_Open):
    """What an SSH connection negotiated (`Transport.describe`); local hosts have none."""

    server_version: str | None = None
    host_key: str | None = None
    host_key_fingerprint: str | None = None
    cipher: str | None = None


class CanaryInfo(_Open):
    """The canary a host ran (the canary fixture's `manifest()`)."""

    mode: str | None = None
    address: str | None = None
    address6: str | None = None
    high_port: int | None = None
    netns: str | None = None
    subnet: dict[str, str] | None = None  # the leased /30 and /64 and their addresses
    error: str | None = None


class HelpersInfo(_Open):
    """The privilege helpers staged on a host, and whether their bits took."""

    folder: str | None = None
    setuid: bool | None = None
    fcap: bool | None = None


class SupervisorInfo(_Open):
    """One reference supervisor a host ran, under its runtime's name."""

    kind: str | None = None
    sha256: str | None = None
    netns: str | None = None
    records: str | None = None
    fault: str | None = None
    error: str | None = None


class RuntimeBuild(_Open):
    """The release build harness installed on a host for a runtime (`build_record`)."""

    release: str | None = None
    channel: str | None = None
    version: str | None = None
    arch: str | None = None
    sha512: str | None = None
    source: str | None = None
    runsc_sha256: str | None = None
    path: str | None = None


class HostRuntime(_Open):
    """What a runtime said about itself on a host (`RuntimeStatus`)."""

    available: bool | None = None
    version: str | None = None
    reason: str | None = None
    fingerprint: dict[str, str] | None = None  # microvm and kata: what they run on
    build: RuntimeBuild | None = None


class HostEntry(_Open):
    """One host in the manifest: how it was reached, what the fixtures set up there
    and what preparing it learned (`HostState.manifest`), or why it failed.

    The runner fills it in this order, so the fields are declared in it: a folder
    read and written again (merge, resume) keeps its keys where they were.
    """

    transport: str | None = None
    address: str | None = None
    port: int | None = None  # None for the local transport
    user: str | None = None
    ssh: SshInfo | None = None
    cleaned_runs: list[str] | None = None  # dead runs this run cleaned up after
    canary: CanaryInfo | None = None
    helpers: HelpersInfo | None = None
    supervisors: dict[str, SupervisorInfo] | None = None
    workdir: str | None = None
    kernel_release: str | None = None
    machine: str | None = None
    arch: str | None = None
    probe_path: str | None = None
    probe_sha256: str | None = None
    probe_uploaded: bool | None = None
    runtimes: dict[str, HostRuntime] | None = None
    error: str | None = None  # why the host could not be used


class Manifest(_Open):
    """manifest.json. Every key is optional on reading, so older folders still read;
    only the keys given (or read) are written, in this order, then any others."""

    harness_version: str | None = None
    run_id: str | None = None
    matrix: MatrixRef | None = None
    started: str | None = None
    ended: str | None = None
    interrupted: bool | None = None
    settings: dict[str, Any] | None = None
    canary: dict[str, Any] | None = None
    probe: dict[str, Any] | None = None  # the controller's build: sha256, compiler
    probes: dict[str, Any] | None = None  # every architecture's build
    releases: dict[str, Any] | None = None  # the release index and what names resolved to
    runtimes: dict[str, dict[str, Any]] | None = None  # each entry as the matrix declares it
    scenarios: list[str] | None = None
    cells_planned: int | None = None
    hosts: dict[str, HostEntry] | None = None  # what each host said about itself
    selection: Selection | None = None
    exit_code: int | None = None  # None until the run ended
    segments: list[Segment] | None = None  # a resumed run's later parts
    merged_from: list[dict[str, Any]] | None = None  # a merged run's shards
    missing_shards: list[str] | None = None

    @property
    def shard(self) -> str:
        return str(self.selection.shard or "") if self.selection else ""

    @property
    def matrix_sha256(self) -> str | None:
        return self.matrix.sha256 if self.matrix else None

    def host(self, name: str) -> HostEntry:
        """What a host said about itself (kernel, runtimes, canary...); empty if nothing."""
        return (self.hosts or {}).get(name) or HostEntry()

    def runtime(self, name: str) -> dict[str, Any]:
        """A runtime's entry as the matrix declared it, or {}."""
        return (self.runtimes or {}).get(name) or {}


def runtime_entry(spec: RuntimeSpec) -> dict[str, Any]:
    """A runtime entry as recorded in the manifest: what it promised and declared.
    A URL's user:password part and secret query values are dropped; token values are
    never in the spec, and a command line's secret-looking options are dropped."""
    data = spec.model_dump(mode="json")
    for key in ("argv", "exec", "stage_exec"):  # a command line may carry a credential
        if isinstance(data.get(key), list):
            data[key] = redact_argv(data[key])
    source = data.get("attribution")
    if source and source.get("url"):
        source["url"] = redact_url(source["url"])
    return data


def _settings_entry(settings: dict[str, Any]) -> dict[str, Any]:
    """The matrix's settings as recorded: an index URL's credentials redacted."""
    if isinstance(settings.get("index"), str):
        settings["index"] = redact_url(settings["index"])
    return settings


def run_manifest(
    *,
    run_id: str,
    plan: Plan,
    started: str,
    ended: str | None,
    interrupted: bool,
    probe: dict[str, Any],
    probes: dict[str, Any],
    releases: dict[str, Any] | None,
    hosts: dict[str, Any],
    selection: Mapping[str, Any],
    exit_code: int | None,
    resumed_from: Mapping[str, Any] | None = None,
) -> Manifest:
    """The manifest of a run of `plan` (or of a resumed run's latest part).

    A resumed run keeps its first part's identity and hosts, lists each later part
    in `segments`, and its exit code covers every verdict in the folder.
    """
    from harness._version import __version__

    matrix = plan.matrix
    data: dict[str, Any] = {
        "harness_version": __version__,
        "run_id": run_id,
        "matrix": {"name": matrix.name, "path": str(matrix.path), "sha256": matrix.sha256},
        "started": started,
        "ended": ended,
        "interrupted": interrupted,
        "settings": _settings_entry(matrix.settings.model_dump()),
        "canary": matrix.canary.model_dump(mode="json"),
        "probe": probe,
        "probes": probes,
        **({"releases": releases} if releases is not None else {}),
        "runtimes": {c.runtime.name: runtime_entry(c.runtime.spec) for c in plan.cells},
        "scenarios": list(plan.scenarios),
        "cells_planned": len(plan.cells),
        "hosts": hosts,
        "selection": dict(selection),
        "exit_code": exit_code,
    }
    if resumed_from is not None:
        first = Manifest.model_validate(dict(resumed_from))
        data.update(
            run_id=first.run_id or run_id,
            started=first.started or started,
            hosts={**(first.hosts or {}), **hosts},
            segments=[
                *(s.to_json() for s in first.segments or ()),
                {"run_id": run_id, "started": started, "ended": ended},
            ],
        )
    return Manifest.model_validate(data)


def merged_manifest(
    shards: Sequence[tuple[Path, Manifest]], *, exit_code: int, missing_shards: list[str]
) -> Manifest:
    """The manifest of shards merged into one run: the first shard's, spanning them all."""
    manifests = [m for _folder, m in shards]
    return Manifest.model_validate(
        {
            **manifests[0].to_json(),
            "started": min(str(m.started) for m in manifests),
            "ended": max(str(m.ended) for m in manifests),
            "interrupted": any(m.interrupted for m in manifests),
            "hosts": {k: v for m in manifests for k, v in (m.hosts or {}).items()},
            "runtimes": {k: v for m in manifests for k, v in (m.runtimes or {}).items()},
            "merged_from": [
                {"folder": str(f), "run_id": m.run_id, "shard": m.selection and m.selection.shard}
                for f, m in shards
            ],
            "exit_code": exit_code,
            "missing_shards": missing_shards,
        }
    )
