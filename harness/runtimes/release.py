"""A runsc entry naming a release build (`release = "latest" | "nightly" | version`):
installed per host architecture, verified, and run in the plan runtime's place."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.errors import ArtifactError, CommandError
from harness.matrix.models import RunscRuntimeSpec
from harness.runtimes import Runtime, make_runtime
from harness.staging import HostState, RuntimeStatus
from harness.transport import Transport

if TYPE_CHECKING:
    from harness.releases.builds import ReleaseBuilds


def release_of(runtime: Runtime) -> RunscRuntimeSpec | None:
    """The runsc entry if it names a release build for harness to fetch."""
    spec = runtime.spec
    return spec if isinstance(spec, RunscRuntimeSpec) and spec.release is not None else None


async def stage_release(
    releases: ReleaseBuilds, transport: Transport, state: HostState, runtime: Runtime
) -> Runtime | None:
    """Install the runtime's release build for this host's architecture; the
    runtime to run in its place here, recorded in `state`. A build that cannot be
    had, verified or started makes the runtime unavailable on this host (None):
    its verdicts are inconclusive."""
    from harness.releases.builds import Request, build_record  # httpx: only when needed

    spec = release_of(runtime)
    assert spec is not None
    request = Request.of(spec)
    try:
        candidate, installed = await releases.install(
            transport, request, workdir=state.workdir, machine=state.machine
        )
    except (ArtifactError, CommandError) as exc:
        why = f"release {request.channel}/{request.release}: {exc}"
        state.runtimes[runtime.name] = RuntimeStatus(available=False, reason=why)
        return None
    replaced = make_runtime(runtime.name, spec.model_copy(update={"binary": installed.path}))
    seen = replaced.identify(installed.version)
    state.runtimes[runtime.name] = RuntimeStatus(
        available=seen.unavailable is None,
        version=seen.version,
        reason=seen.unavailable,
        fingerprint=seen.fingerprint,
        build=build_record(candidate, installed, request),
    )
    return replaced
