"""Attribution: an allowed connection's decision record names the binary behind it."""

from __future__ import annotations

from harness.scenarios.base import Check, Need, Scenario

ALLOWED_CONNECT = "attr-allowed-connect"

ATTRIBUTION = Scenario(
    name="attribution",
    summary="the supervisor's record of an allowed connection names the resolved binary",
    property="attribution",
    # Judged from the decision records, not by attempts (`judge/attribution.py`).
    needs=frozenset({Need.CANARY, Need.DECISIONS}),
    checks=(Check(ALLOWED_CONNECT, "connect to the allowed destination", inside_control=True),),
)
