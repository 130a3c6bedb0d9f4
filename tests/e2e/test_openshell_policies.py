"""OpenShell's co-located shape under harness's own policies of OpenShell's example
shapes (matrices/openshell.toml), each launcher derived from its policy file
(`probe confine {policy}`): a correct sandbox under each is enforced, and the same
sandbox kept at root under a policy without `process` breaks the privilege floor.
Real Landlock, seccomp and the reference supervisor, on this host."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.matrix import load_matrix
from harness.runtimes.command import policy_confine
from tests.conftest import ROOT, harness_cli
from tests.e2e.helpers import verdicts_of
from tests.evidence.test_confirmation import SESSION
from tests.lab import require_tool


@pytest.fixture(scope="module")
def openshell_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_tool("unshare")
    require_tool("ip")
    out = tmp_path_factory.mktemp("openshell") / "results"
    done = harness_cli("run", ROOT / "matrices/openshell.toml", "--out", out)
    assert done.code == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def test_a_launcher_derived_from_each_policy_is_enforced(openshell_run: Path) -> None:
    verdicts = verdicts_of(openshell_run)
    for runtime in ("sandbox-user", "default-user"):
        for prop in ("egress_confinement", "filesystem_confinement", "privilege_floor"):
            row = verdicts[("localhost", runtime, prop)]
            assert (row["observed"], row["verdict"]) == ("enforced", "pass"), row
        assert verdicts[("localhost", runtime, "attribution")]["observed"] == "enforced"
    root = verdicts[("localhost", "default-user-as-root", "privilege_floor")]
    assert root["observed"] == "violated", root
    assert "the policy names no run_as_user: OpenShell's default" in root["reason"], root


def test_the_confirmation_holds_the_identity_by_openshells_rules(openshell_run: Path) -> None:
    """The derived launcher's workload is nobody: an OpenShell identity; the one kept at
    root is none, and its privilege_floor is false in the confirmation."""
    done = harness_cli(
        "evidence", openshell_run, "--format", "openshell-confirmation", "--stdout",
        "--generation", "1", "--session-id", SESSION,
    )  # fmt: skip
    assert done.code == 1, done.stderr  # the host control and the root one fail it
    docs = {d["backend_audit"]["harness"]["runtime"]: d for d in json.loads(done.stdout)}
    user = docs["sandbox-user"]
    assert (user["identity"]["uid"], user["identity"]["gid"]) == (65534, 65534)
    assert user["identity"]["source"] == "policy"
    assert all(p["enforced"] for p in user["properties"].values()), user["properties"]
    # Its PID namespace ends with it: the probe's lingerer does not outlive the runtime.
    assert user["runtime_exit_terminates_workload"] is True
    assert "sandbox-user:" not in done.stderr  # a confirmation upstream's check passes
    assert docs["default-user"]["identity"]["source"] == "image"
    assert docs["default-user-as-root"]["properties"]["privilege_floor"]["enforced"] is False


def test_the_launcher_options_follow_the_policy() -> None:
    """{policy} becomes confine's options: the policy's reads and writes (paths this
    host lacks skipped), its user and group (nobody where it names none), and what
    harness needs (the probe and helpers readable, the allowed folder writable)."""
    matrix = load_matrix(ROOT / "matrices/openshell.toml")
    values = {"{probe}": "/w/probe", "{helpers}": "/w/helpers", "{allowed}": "/w/allowed"}
    named = policy_confine(matrix.runtimes["sandbox-user"].policy, values)
    head = ["--skip-missing", "--user", "nobody", "--group", "nogroup", "--read", "/usr"]
    assert named[:7] == head, named
    at = named.index("/sandbox")
    assert named[at - 1 : at + 1] == ["--write", "/sandbox"], named
    tail = ["--read", "/w/probe", "--read", "/w/helpers", "--write", "/w/allowed"]
    assert named[-8:] == [*tail, "--write", "/dev/null"], named
    default = policy_confine(matrix.runtimes["default-user"].policy, values)
    assert default[:5] == ["--skip-missing", "--user", "65534", "--group", "65534"], default
