"""The outer fence: what a supervised sandbox's egress does when its controller goes,
and when its controller takes a rule back.

Scenarios in phases (docs/probe-protocol.md, "Phases"): the probe makes the
allowed connection, stops at a barrier while harness acts on the host (kills the
supervisor, every process of it; or revokes the allow rule), then tries the allowed
destination again, on a connection held open across the barrier and on a new one.
Both must fail; the canary decides (`Rule.ARRIVAL`), and the host runtime's same
attempts are the control.
"""

from __future__ import annotations

from harness.scenarios.base import Check, Need, Rule, Scenario

LOSS_PHASE = "controller-loss"
LOSS_HELD = "loss-held"
LOSS_NEW = "loss-new"
REVOKE_PHASE = "revocation"
REVOKE_HELD = "revoke-held"
REVOKE_NEW = "revoke-new"
REVOKE_RESTORED = "revoke-restored"
# The rule put back before the cell goes on: the scenarios after it (controller-loss)
# need the allowed connection.
RESTORE_PHASE = "revocation-restore"
# How long an established connection may outlive its rule, counted from the
# revocation hook's return (the probe's REVOKE_BOUND_MS, fence.c).
REVOKE_BOUND_MS = 1000
# The check that holds a connection across each barrier (its evidence.before: the
# allowed exchange before it).
HELD = {LOSS_PHASE: LOSS_HELD, REVOKE_PHASE: REVOKE_HELD}
# Phased scenarios run in this order: a controller that was killed revokes nothing.
PHASE_ORDER = (REVOKE_PHASE, LOSS_PHASE)


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
            how=(
                "Exchange a `HARNESS <tag> loss-before` line with the allowed destination "
                "(`evidence.before`: `ok`, or why not), open a second connection to it and send "
                "nothing, stop at the barrier `controller-loss`, then send this check's line on "
                "the held connection. Escaped if the nonce comes back (or the canary logs the "
                "line). `evidence.barrier_ms`: how long the barrier held."
            ),
        ),
        Check(
            LOSS_NEW,
            "After the supervisor was killed: a new connection to the allowed destination.",
            rule=Rule.ARRIVAL,
            how=(
                "After the barrier (an error if it was never passed): the TCP exchange with the "
                "allowed destination on a new connection."
            ),
        ),
    ),
)


REVOCATION = Scenario(
    name="revocation",
    summary="a revoked allow rule stops new connections and cuts the established one",
    property="revocation_verified",
    needs=frozenset({Need.CANARY, Need.TARGETS, Need.SENTINELS, Need.PHASES}),
    phases=(REVOKE_PHASE, RESTORE_PHASE),
    checks=(
        Check(
            REVOKE_HELD,
            "After the allow rule was revoked: a line on a connection to the allowed"
            f" destination opened before, sent once it was cut or {REVOKE_BOUND_MS} ms after"
            " the revocation (`evidence.cut_ms`: when the probe saw it cut, -1: never).",
            rule=Rule.ARRIVAL,
            how=(
                "As `loss-held`, but at the barrier `revocation` the host revokes the allow rule. "
                "After it, the probe waits up to 1000 ms (`evidence.bound_ms`) for the held "
                "connection to be cut (`evidence.cut_ms`: when it saw it cut, counted from the "
                "barrier's release; -1: not within the bound), then sends this check's line on it "
                "anyway; where the host had nothing to revoke (its go file says `idle`), it does "
                "not wait (`bound_ms` 0). Escaped if the nonce comes back (or the canary logs the "
                "line)."
            ),
        ),
        Check(
            REVOKE_NEW,
            "After the allow rule was revoked: a new connection to the allowed destination.",
            rule=Rule.ARRIVAL,
            how=(
                "After the barrier `revocation` (an error if it was never passed): the TCP "
                "exchange with the allowed destination on a new connection."
            ),
        ),
        Check(
            REVOKE_RESTORED,
            "Once the rule is restored (the barrier revocation-restore): the allowed"
            " destination is reached again, so the failures above were the revocation's.",
            inside_control=True,
            how=(
                "Stop at the barrier `revocation-restore`, where the host puts the rule back, then "
                "the TCP exchange with the allowed destination: it must work again, so the "
                "failures above were the revocation's."
            ),
        ),
    ),
)
