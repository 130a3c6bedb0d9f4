"""One local host and one cell on it, as the host-side fixtures see them: for tests
that start a fixture against this machine's own filesystem."""

from __future__ import annotations

from harness.hostside.base import CellSetup, HostSetup
from harness.matrix.models import Canary, Host
from harness.plan import Cell
from harness.runtimes import Runtime
from harness.runtimes.base import CellPaths
from harness.staging import HostState
from harness.transport import LocalTransport

RUN_ID = "abcd1234"


def local_host(workdir: str, runtime: Runtime) -> HostSetup:
    """This machine as a host of one runtime, its work folder `workdir`."""
    return HostSetup(
        transport=LocalTransport(),
        state=HostState(workdir, "6.1", "x86_64", f"{workdir}/probe", False),
        index=0,
        run_id=RUN_ID,
        nonce="nonce",
        high_port=40000,
        canary=Canary(),
        needs=frozenset(),
        targets=frozenset(),
        runtimes=(runtime,),
    )


def local_cell(runtime: Runtime, workdir: str) -> CellSetup:
    """A cell of `runtime` on it."""
    cell = Cell(
        host=Host(name="h", transport="local", address="localhost"), runtime=runtime, scenarios=()
    )
    paths = CellPaths(
        probe=f"{workdir}/probe", workdir=workdir, cell_dir=f"{workdir}/c", cell_id="c"
    )
    return CellSetup(cell=cell, cell_id="c", runtime=runtime, paths=paths)
