"""Hostile values never execute: names, paths, flags and argv templates full of
shell syntax go through a real run over real SSH, and a marker file that any
of them would create if a shell ever interpreted it must never appear."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Lab, harness_cli
from tests.lab import require_tool


def _payloads(mark: Path) -> list[str]:
    return [
        f"$(touch {mark})",
        f"`touch {mark}`",
        f"; touch {mark}",
        f"| touch {mark}",
        f"&& touch {mark} &&",
        f"'\"; touch {mark}; echo \"'",
        f"\ntouch {mark}\n",
        "[bold red]markup[/]",
        "é🙂 ünïcödé",
    ]


def _toml(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # valid as a TOML basic string


def test_hostile_values_over_ssh_never_execute(lab: Lab, tmp_path: Path) -> None:
    """Every hostile value is carried as data: the marker is never created."""
    require_tool("runsc")
    mark = tmp_path / "MARK"
    payloads = _payloads(mark)
    hosts = "".join(
        f"[hosts.{_toml('h' + p)}]\naddress = {_toml(lab.trusted.address)}\n"
        f"port = {lab.trusted.port}\ntags = [{_toml('t' + p)}]\n"
        f"workdir = {_toml(str(tmp_path / 'work') + p.replace(chr(10), '_'))}\n"
        for p in payloads[:3]
    )
    (tmp_path / "inv.toml").write_text(
        f'[defaults]\nuser = "root"\nidentity_file = "{lab.client_key}"\n'
        f'known_hosts = "{lab.known_hosts}"\n{hosts}'
    )
    runtimes = "".join(
        f'[runtimes.{_toml("rt" + p)}]\nkind = "command"\n'
        f'argv = ["env", {_toml("X=" + p)}, "{{probe}}", "{{args}}"]\n'
        for p in payloads
    )
    runtimes += (
        '[runtimes.runsc-hostile-flags]\nkind = "runsc"\n'
        f'flags = ["--network=none", {_toml(payloads[0])}]\n'
    )
    (tmp_path / "m.toml").write_text(
        f'name = {_toml("hostile" + payloads[0])}\ninventory = "inv.toml"\n'
        'scenarios = ["mechanisms"]\n' + runtimes
    )
    result = harness_cli("run", tmp_path / "m.toml", "--out", tmp_path / "out")
    # No expectations, so every fact of the env-wrapped probe is skipped; runsc refuses
    # the hostile flag, so its cells are inconclusive: exit 3, no mismatch.
    assert result.code == 3, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert not mark.exists()
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert set(manifest["runtimes"]) >= {"rt" + p for p in payloads}
    rows = [
        json.loads(line) for line in (tmp_path / "out" / "cells.jsonl").read_text().splitlines()
    ]
    complete = [r for r in rows if r["runtime"].startswith("rt") and r["status"] == "complete"]
    assert len(complete) == 3 * len(payloads)  # the env wrapper ran the probe, literally
    hostile_flags = [r for r in rows if r["runtime"] == "runsc-hostile-flags"]
    assert hostile_flags and all(r["status"] != "complete" for r in hostile_flags)
    verdicts = [
        json.loads(line) for line in (tmp_path / "out" / "verdicts.jsonl").read_text().splitlines()
    ]
    by_runtime: dict[str, set[str]] = {}
    for v in verdicts:
        kind = "flags" if v["runtime"] == "runsc-hostile-flags" else "wrapped"
        by_runtime.setdefault(kind, set()).add(v["verdict"])
    assert by_runtime == {"wrapped": {"skipped"}, "flags": {"inconclusive"}}


def test_hostile_canary_address_is_refused_at_load(tmp_path: Path) -> None:
    """An address or name that is not one is rejected before anything runs."""
    (tmp_path / "inv.toml").write_text('[hosts.l]\ntransport = "local"\n')
    for key, value in (("address", "127.0.0.1; touch /tmp/x"), ("denied_name", "a b;c")):
        (tmp_path / "m.toml").write_text(
            f'name = "m"\ninventory = "inv.toml"\n[canary]\n{key} = {_toml(value)}\n'
            '[runtimes.h]\nkind = "host"\n'
        )
        result = harness_cli("validate", tmp_path / "m.toml")
        assert result.code == 2
        assert f"canary.{key}:" in result.stderr
