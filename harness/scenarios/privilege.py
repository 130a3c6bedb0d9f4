"""Privilege floor: an unprivileged process must not gain privilege."""

from __future__ import annotations

from harness.scenarios.base import Check, Control, Scenario

PRIVILEGE = Scenario(
    name="privilege-floor",
    probe_name="privilege",
    summary="exec a setuid-root and a file-capability helper; setuid(0), capset, ambient raise",
    property="privilege_floor",
    checks=(
        Check("priv-setuid-exec", "exec a setuid-root helper as an unprivileged uid"),
        Check("priv-fcap-exec", "exec a helper carrying cap_net_raw+ep"),
        Check("priv-setuid0", "setuid(0) as an unprivileged uid", control=Control.NONE),
        Check("priv-capset", "raise CAP_SYS_ADMIN with capset", control=Control.NONE),
        Check("priv-ambient", "PR_CAP_AMBIENT_RAISE of CAP_NET_RAW", control=Control.NONE),
    ),
)
