"""A policy that grants much stays judgeable (issue 37): `/` read-only, the whole host
visible and nothing writable but the workspace, started as root. Real bwrap, real
sentinels on this machine."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import harness_cli
from tests.e2e.helpers import verdicts_of
from tests.lab import require_tool

POLICY = """version: 1
filesystem_policy:
  include_workdir: true
  read_only:
    - /
  read_write:
    - /dev/null
process:
  run_as_user: root
  run_as_group: root
"""

BWRAP = """
[runtimes.{name}]
kind = "command"
argv = [
  "bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup",
  "--die-with-parent", "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
  "--ro-bind", "/", "/", "--bind", "{{allowed}}", "{{allowed}}", {extra}
  "--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev",
  "--", "{{probe}}", "{{args}}",
]
policy = "root-ro.yaml"
expect = {{ filesystem_confinement = "enforced", privilege_floor = "enforced" }}
"""


def test_a_policy_granting_the_root_read_only_is_judged_on_everything_but_reads(
    tmp_path: Path,
) -> None:
    """Every sentinel is the workload's to read, so no read is judged; every write,
    metadata change and privilege attempt still is: the correct sandbox is enforced
    (its reason says reads were not judged), one that also binds the host's /var/tmp
    read-write is violated by its write. (Before, both cells were refused.)"""
    require_tool("bwrap")
    (tmp_path / "root-ro.yaml").write_text(POLICY)
    (tmp_path / "inv.toml").write_text(
        f'[hosts.localhost]\ntransport = "local"\nworkdir = "{tmp_path}/work"\n'
    )
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        'name = "root-ro"\ninventory = "inv.toml"\n'
        'scenarios = ["filesystem-confinement", "privilege-floor"]\n'
        '[canary]\nmode = "netns"\n[runtimes.host]\nkind = "host"\n'
        + BWRAP.format(name="root-ro", extra="")
        + BWRAP.format(name="root-ro-var-tmp", extra='"--bind", "/var/tmp", "/var/tmp",')
    )
    result = harness_cli("run", matrix, "--out", tmp_path / "out")
    assert result.code == 1, result.stdout + result.stderr
    v = verdicts_of(tmp_path / "out")
    fs = v[("localhost", "root-ro", "filesystem_confinement")]
    assert (fs["observed"], fs["verdict"]) == ("enforced", "pass"), fs
    assert "reads not judged" in str(fs["reason"])
    asked = {c["id"] for c in fs["checks"]}
    assert "fs-read-outside" not in asked and "fs-write-reach" in asked
    assert v[("localhost", "root-ro", "privilege_floor")]["observed"] == "enforced"
    leak = v[("localhost", "root-ro-var-tmp", "filesystem_confinement")]
    assert leak["observed"] == "violated", leak
    assert "/var/tmp" in str(leak["reason"]) and "beyond the write grants" in str(leak["reason"])
