"""The outer fence: what a supervised sandbox's egress does when its controller goes.

A scenario in phases (docs/probe-protocol.md, "Phases"): the probe makes the
allowed connection, stops at a barrier while harness kills the supervisor on the
host (every process of it), then tries the allowed destination again, on a
connection held open across the kill and on a new one. Both must fail; the canary
decides (`Rule.ARRIVAL`), and the host runtime's same attempts are the control.
"""

from __future__ import annotations

from harness.scenarios.base import Check, Need, Rule, Scenario

LOSS_PHASE = "controller-loss"
LOSS_HELD = "loss-held"
LOSS_NEW = "loss-new"

CONTROLLER_LOSS = Scenario(
    name="controller-loss",
    summary="with the supervisor killed mid-cell, nothing reaches even the allowed destination",
    property="controller_loss_fails_closed",
    # The barrier lives in the allowed folder (the sentinels fixture makes it).
    needs=frozenset({Need.CANARY, Need.TARGETS, Need.SENTINELS, Need.PHASES}),
    phases=(LOSS_PHASE,),
    checks=(
        Check(
            LOSS_HELD,
            "After the supervisor was killed: a line on a connection to the allowed"
            " destination opened before the kill (`evidence.before`: the allowed exchange"
            " before it, `evidence.barrier_ms`: how long the host took).",
            rule=Rule.ARRIVAL,
        ),
        Check(
            LOSS_NEW,
            "After the supervisor was killed: a new connection to the allowed destination.",
            rule=Rule.ARRIVAL,
        ),
    ),
)
