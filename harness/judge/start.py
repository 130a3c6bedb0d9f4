"""How the workload started (`priv-start`, the privilege floor's first check): as
whom, against the policy's user and group, and with which capabilities, against
Docker's default set in the host's initial user namespace.

Its own module, not `reach.py`'s: what a sandbox can reach through its mounts and
descriptors is another question, judged from other evidence. The capabilities'
names are `harness/caps.py`'s, shared with the matrix and the OCI bundle; turning a
mask into them is judging, so it is here, where the mutation gate sees it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from harness.caps import CAP_NAMES, DOCKER_DEFAULT_CAPS
from harness.policy.models import ProcessPolicy
from harness.results.records import CheckOutcome


def cap_names(mask: int) -> list[str]:
    """Capability names in a mask, unknown bits as CAP_<n>."""
    return [
        CAP_NAMES[bit] if bit < len(CAP_NAMES) else f"CAP_{bit}"
        for bit in range(64)
        if mask >> bit & 1
    ]


def _ids(evidence: Mapping[str, Any], keys: tuple[str, ...]) -> list[int] | None:
    """The ids under `keys`, all of them integers, or None."""
    found = [evidence.get(k) for k in keys]
    ids = [v for v in found if isinstance(v, int) and not isinstance(v, bool)]
    return ids if len(ids) == len(keys) else None


def _started_as(
    evidence: Mapping[str, Any], process: ProcessPolicy
) -> tuple[CheckOutcome, str] | None:
    """How the workload's start differs from the policy's user and group (None: it does
    not): its real, effective and saved ids, and, with a group declared, no
    supplementary group but that one. A name is what the sandbox's own /etc/passwd or
    /etc/group calls the id, except that id 0 is `root` and nothing else (so `root` is
    checked with no file at all); another name it cannot give cannot be checked (an
    error)."""
    for want, keys, name_key, policy_key in (
        (process.run_as_user, ("uid", "euid", "suid"), "user", "run_as_user"),
        (process.run_as_group, ("gid", "egid", "sgid"), "group", "run_as_group"),
    ):
        if want is None:
            # OpenShell's default, where its policy names none: a sandbox user that is
            # not root (it refuses id 0, primary or supplementary, as a workload's); a
            # policy that names root as its user leaves root's group to it.
            if name_key == "group" and process.run_as_user in (0, "0", "root"):
                continue
            ids = _ids(evidence, keys)
            extra = str(evidence.get("groups") or "").split(",") if name_key == "group" else []
            if ids is not None and (0 in ids or "0" in extra):
                which = f"{keys[0]} 0" if 0 in ids else "supplementary group 0"
                return (
                    CheckOutcome.ESCAPED,
                    f"started as {which}, but the policy names no {policy_key}: OpenShell's"
                    " default is a sandbox user that is not root",
                )
            continue
        ids, name = _ids(evidence, keys), evidence.get(name_key)
        if ids is None:
            why = f"the probe reported no {'/'.join(keys)}, so {policy_key} cannot be checked"
            return CheckOutcome.ERROR, why
        numeric = isinstance(want, int) or re.fullmatch(r"[0-9]+", want) is not None
        # "root" needs no file to check: it is id 0, and only id 0 (a sandbox with no
        # /etc/passwd, or a forged one, says nothing about it).
        if not numeric and not isinstance(name, str) and want != "root":
            why = f"the sandbox names no {name_key} for {keys[0]} {ids[0]}, so {policy_key}"
            return CheckOutcome.ERROR, f"{why}: {want} cannot be checked"
        # Id 0 is "root" whatever the sandbox's own files call it: a forged /etc/passwd
        # that names uid 0 "nobody" (or another uid "root") does not pass.
        named_ok = ids[0] == 0 if want == "root" else (want == name and ids[0] != 0)
        real_ok = (int(want) == ids[0]) if numeric else named_ok
        if not real_ok or len(set(ids)) > 1:
            shown = f"{keys[0]} {ids[0]}" + (f" ({name})" if isinstance(name, str) else "")
            if len(set(ids)) > 1:
                shown += f", {'/'.join(keys)} {'/'.join(map(str, ids))}"
            return (
                CheckOutcome.ESCAPED,
                f"started as {shown}, but the policy says {policy_key}: {want}",
            )
        if policy_key == "run_as_group":
            extra = [g for g in str(evidence.get("groups") or "").split(",") if g]
            beyond = [g for g in extra if g != str(ids[0])]
            if beyond:
                why = f"started with supplementary groups {','.join(beyond)}, but the policy"
                return CheckOutcome.ESCAPED, f"{why} says run_as_group: {want} alone"
    return None


def judge_start(
    evidence: Mapping[str, Any],
    *,
    allowed: Iterable[str],
    own: bool,
    process: ProcessPolicy | None = None,
) -> tuple[CheckOutcome, str]:
    """(outcome, detail) of `priv-start`: a start as anyone but the policy's user and
    group, or capabilities beyond Docker's default set (and the runtime entry's
    declared extras) held in the host's initial user namespace, are a violation."""
    if process is not None and (wrong := _started_as(evidence, process)):
        return wrong
    try:
        held = int(str(evidence["cap_eff"]), 16) | int(str(evidence["cap_prm"]), 16)
    except (KeyError, ValueError):
        return CheckOutcome.ERROR, "the probe reported no capabilities"
    names = cap_names(held)
    extra_allowed = sorted(set(names) & (set(allowed) - DOCKER_DEFAULT_CAPS))
    beyond = [n for n in names if n not in DOCKER_DEFAULT_CAPS and n not in extra_allowed]
    audit = f"; allowed by the runtime entry: {', '.join(extra_allowed)}" if extra_allowed else ""
    if own:
        return (
            CheckOutcome.BLOCKED,
            f"{len(names)} capabilities, in the sandbox's own kernel{audit}",
        )
    if not evidence.get("initial_userns", 1):
        return (
            CheckOutcome.BLOCKED,
            f"{len(names)} capabilities, in a child user namespace only{audit}",
        )
    if beyond:
        named = ", ".join(beyond)
        why = f"holds {named} in the initial user namespace (beyond Docker's default set){audit}"
        return CheckOutcome.ESCAPED, why
    return (
        CheckOutcome.BLOCKED,
        f"holds {len(names)} capabilities, none beyond Docker's default set{audit}",
    )
