"""`harness hosts`: one line per host, with what a first fleet run needs to know."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import Lab, harness_cli

MATRIX = """
name = "hosts"
inventory = "inventory.toml"
[runtimes.host]
kind = "host"
[runtimes.ghost]
kind = "runsc"
binary = "/nonexistent/runsc"
"""


def test_one_line_per_host_and_exit_3_when_one_is_unusable(lab: Lab, tmp_path: Path) -> None:
    """A reachable host shows its key, kernel, runtimes and canary; an untrusted and a
    dead host, and a missing runtime, each make the verb exit 3, one line per host."""
    lab.inventory(tmp_path / "inventory.toml")
    (tmp_path / "m.toml").write_text(MATRIX)
    done = harness_cli("hosts", tmp_path / "m.toml")
    assert done.code == 3, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 4, done.stdout  # three hosts and the count
    trusted = next(line for line in lines if "trusted (" in line)
    assert "key ssh-ed25519 SHA256:" in trusted
    assert "canary can be made (root, ip netns)" in trusted
    assert "ghost: unusable: /nonexistent/runsc" in trusted
    assert f"{lab.trusted.address}:{lab.trusted.port}" in trusted
    assert "host key not verifiable" in next(line for line in lines if "stranger (" in line)
    assert "unreachable: " in next(line for line in lines if "dead (" in line)
    assert lines[-1] == "0/3 hosts usable"


def test_json_and_a_usable_host_exit_0(lab: Lab, tmp_path: Path) -> None:
    """--format json per host; a host whose runtimes all work exits 0."""
    lab.inventory(tmp_path / "inventory.toml")
    (tmp_path / "m.toml").write_text(MATRIX.split("[runtimes.ghost]")[0])
    done = harness_cli("hosts", tmp_path / "m.toml", "--host", "trusted", "--format", "json")
    assert done.code == 0, done.stdout + done.stderr
    (entry,) = json.loads(done.stdout)
    assert entry["usable"] is True and entry["runtimes"] == {"host": "available"}
    assert entry["machine"] and entry["kernel"]


def test_a_supervised_runtime_is_usable_where_its_supervisor_can_run(
    lab: Lab, tmp_path: Path
) -> None:
    """A runtime behind the reference supervisor is usable on a host with python3 and
    nsenter (this machine has both); its line carries no complaint."""
    lab.inventory(tmp_path / "inventory.toml")
    (tmp_path / "m.toml").write_text(
        MATRIX.split("[runtimes.ghost]")[0]
        + '[runtimes.sup]\nkind = "command"\nargv = ["sh", "-c", "exec \\"$@\\"", "x",'
        ' "{probe}", "{args}"]\nsupervisor = "reference"\n'
    )
    done = harness_cli("hosts", tmp_path / "m.toml", "--host", "trusted", "--format", "json")
    assert done.code == 0, done.stdout + done.stderr
    (entry,) = json.loads(done.stdout)
    assert entry["usable"] is True and entry["unusable"] == [], entry
    assert "supervisor" not in entry["runtimes"]["sup"]


def test_two_entries_on_one_machine_with_one_work_folder_are_refused(
    lab: Lab, tmp_path: Path
) -> None:
    """The same sshd twice under two names and one work folder would share a canary
    and cells: the second entry is refused, naming the first and the fix; with its
    own work folder it is usable."""
    lab.inventory(
        tmp_path / "inventory.toml",
        extra=f"""
[hosts.again]
address = "{lab.trusted.address}"
port = {lab.trusted.port}
workdir = "{tmp_path}/work-trusted"
""",
    )
    (tmp_path / "m.toml").write_text(MATRIX.split("[runtimes.ghost]")[0])
    done = harness_cli("hosts", tmp_path / "m.toml", "--host", "trusted", "--host", "again")
    assert done.code == 3, done.stdout + done.stderr
    again = next(line for line in done.stdout.splitlines() if line.startswith("? again ("))
    assert f"work folder {tmp_path}/work-trusted as host 'trusted'" in again, again
    assert "give one of them its own `workdir` in the inventory" in again
    assert "✓ trusted (" in done.stdout
    text = (tmp_path / "inventory.toml").read_text()
    (tmp_path / "inventory.toml").write_text(
        text.replace(f'workdir = "{tmp_path}/work-trusted"\n', "", 1)
    )
    done = harness_cli("hosts", tmp_path / "m.toml", "--host", "trusted", "--host", "again")
    assert done.code == 0, done.stdout + done.stderr


# Drops to nobody, then execs the probe, failing as unshare or setpriv would (126).
AS_NOBODY = (
    "import os, sys\\n"
    "os.setgroups([]); os.setgid(65534); os.setuid(65534)\\n"
    "try:\\n    os.execv(sys.argv[1], sys.argv[1:])\\n"
    "except OSError as exc:\\n"
    "    print(f'nobody: execv: {exc.strerror}', file=sys.stderr); sys.exit(126)\\n"
)


def _hosts_as_nobody(lab: Lab, tmp_path: Path, wrapper: str) -> dict[str, Any]:
    """`harness hosts` (JSON) for a runtime `nobody` whose argv is python running
    `wrapper` before the probe; exit 3 (a runtime unusable)."""
    lab.inventory(tmp_path / "inventory.toml")
    (tmp_path / "m.toml").write_text(
        MATRIX.split("[runtimes.ghost]")[0]
        + '[runtimes.nobody]\nkind = "command"\n'
        + f'argv = ["python3", "-c", "{wrapper}", "{{probe}}", "{{args}}"]\n'
    )
    done = harness_cli("hosts", tmp_path / "m.toml", "--host", "trusted", "--format", "json")
    assert done.code == 3, done.stdout + done.stderr
    (entry,) = json.loads(done.stdout)
    return dict(entry)


def test_a_sandbox_user_that_cannot_reach_the_work_folder_is_caught(
    lab: Lab, tmp_path: Path
) -> None:
    """A runtime whose user (nobody) cannot traverse the work folder (under pytest's
    0700 folder) is unusable, with the reason and the fix; one in /var/tmp is not."""
    assert tmp_path.parent.parent.stat().st_mode & 0o001 == 0  # pytest-of-root is 0700
    entry = _hosts_as_nobody(lab, tmp_path, AS_NOBODY)
    assert entry["unusable"] == ["nobody"], entry
    assert entry["runtimes"]["nobody"] == (
        "unusable: nobody could not execute the probe (exit 126: nobody: execv: Permission"
        " denied): the sandbox's user must be able to traverse every folder above the work"
        f" folder {tmp_path}/work-trusted; set `workdir` in the inventory to one it can"
        " (e.g. /var/tmp/harness)"
    )
    reachable = Path("/var/tmp") / f"harness-test-{tmp_path.name}-{os.getpid()}"
    inventory = (tmp_path / "inventory.toml").read_text()
    (tmp_path / "inventory.toml").write_text(
        inventory.replace(f'"{tmp_path}/work-trusted"', f'"{reachable}"')
    )
    try:
        done = harness_cli("hosts", tmp_path / "m.toml", "--host", "trusted")
        assert done.code == 0, done.stdout + done.stderr
    finally:
        shutil.rmtree(reachable, ignore_errors=True)


def test_a_silent_wrapper_that_cannot_reach_the_probe_gets_the_hint(
    lab: Lab, tmp_path: Path
) -> None:
    """A wrapper that drops to nobody and then exits 2 saying nothing (as a shell
    script's failed exec can): the hint names the work folder all the same."""
    silent = AS_NOBODY.replace(
        "print(f'nobody: execv: {exc.strerror}', file=sys.stderr); sys.exit(126)", "sys.exit(2)"
    )
    said = _hosts_as_nobody(lab, tmp_path, silent)["runtimes"]["nobody"]
    assert said.startswith("unusable: nobody exited 2 before the probe ran: (no stderr)"), said
    assert f"traverse every folder above the work folder {tmp_path}/work-trusted" in said, said
