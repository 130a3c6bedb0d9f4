"""What a run tells about its progress as it goes: the console listens, tests may too."""

from __future__ import annotations

from typing import Protocol

from harness.plan import Cell
from harness.results import CellRecord, VerdictRecord


class Observer(Protocol):
    """Told about progress; the console implements it, tests may too."""

    def host_ready(self, host: str, error: str | None) -> None: ...

    def cell_started(self, cell: Cell) -> None: ...

    def cell_finished(
        self, cell: Cell, record: CellRecord, verdicts: list[VerdictRecord]
    ) -> None: ...


class SilentObserver:
    def host_ready(self, host: str, error: str | None) -> None:
        pass

    def cell_started(self, cell: Cell) -> None:
        pass

    def cell_finished(self, cell: Cell, record: CellRecord, verdicts: list[VerdictRecord]) -> None:
        pass
