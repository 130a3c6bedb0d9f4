"""`fs-write-reach`'s links on the real probe: a file of the allowed folder that is
hard-linked to one outside every write grant (a launcher's `cp -al` from a host
template) is found by its link count, nothing written; a file whose links all lie
within the write grants, or one the workload may not write, is not. As nobody
(root needed to make the links)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.probe.copies import probe_for_nobody

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv"
)
OPENED = "opened a file for writing"
CONTENT = "host template: never changed by a sandbox\n"


@pytest.fixture(scope="module")
def probe() -> Iterator[Path]:
    """The probe, built once, where nobody can reach it (pytest's folders are 0700)."""
    with probe_for_nobody("harness-test-links-probe-") as path:
        yield path


@pytest.fixture
def top() -> Iterator[Path]:
    """An allowed folder and a template folder beside it, each anyone's to write."""
    top = Path(tempfile.mkdtemp(prefix="harness-test-links-", dir="/tmp"))
    top.chmod(0o755)
    for name in ("allowed", "template", "other-grant"):
        (top / name).mkdir()
        (top / name).chmod(0o777)
    yield top
    shutil.rmtree(top)


def _seed(src: Path, dst: Path, mode: int = 0o666) -> None:
    src.write_text(CONTENT)
    src.chmod(mode)
    os.link(src, dst)


def _links(probe: Path, top: Path, *grants: Path) -> dict[str, Any]:
    """fs-write-reach's evidence as nobody, the allowed folder and `grants` its write
    grants (`--write-skip`)."""
    allowed = top / "allowed"
    skip = "\n".join(str(g) for g in (allowed, *grants))
    argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", str(probe), "run"]
    argv += ["--tag", "t", "--check-timeout-ms", "20000", "--allowed-dir", str(allowed)]
    argv += ["--write-skip", skip, "filesystem-confinement"]
    out = subprocess.run(argv, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        row = json.loads(line)
        if row.get("id") == "fs-write-reach":
            evidence: dict[str, Any] = row["evidence"]
            return evidence
    raise AssertionError(out.stdout + out.stderr)


def test_a_file_seeded_by_a_hard_link_from_outside_the_grants_is_found(
    probe: Path, top: Path
) -> None:
    _seed(top / "template" / "config.toml", top / "allowed" / "config.toml")
    evidence = _links(probe, top)
    assert evidence["links_cut"] == ""
    found = [(row[2], row[3], row[4], row[5]) for row in evidence["links"]]
    assert found == [(str(top / "allowed" / "config.toml"), "2", "1", OPENED)]
    assert (top / "template" / "config.toml").read_text() == CONTENT  # nothing written


def test_two_links_both_within_the_grant_are_no_way_out(probe: Path, top: Path) -> None:
    (top / "allowed" / "sub").mkdir(mode=0o777)
    _seed(top / "allowed" / "config.toml", top / "allowed" / "sub" / "copy.toml")
    evidence = _links(probe, top)
    assert (evidence["links"], evidence["links_cut"]) == ([], "")


def test_a_link_in_another_write_grant_is_counted(probe: Path, top: Path) -> None:
    _seed(top / "other-grant" / "config.toml", top / "allowed" / "config.toml")
    evidence = _links(probe, top, top / "other-grant")
    assert (evidence["links"], evidence["links_cut"]) == ([], "")
    assert _links(probe, top)["links"] != []  # without that grant, it lies outside


def test_a_linked_file_the_workload_may_not_write_is_no_way_out(probe: Path, top: Path) -> None:
    _seed(top / "template" / "config.toml", top / "allowed" / "config.toml", mode=0o644)
    evidence = _links(probe, top)
    assert (evidence["links"], evidence["links_cut"]) == ([], "")


def test_a_folder_it_may_enter_but_not_list_leaves_the_links_untold(probe: Path, top: Path) -> None:
    (top / "allowed" / "shut").mkdir(mode=0o711)
    (top / "allowed" / "shut").chmod(0o711)
    evidence = _links(probe, top)
    assert evidence["links"] == []
    assert "cannot be listed" in evidence["links_cut"]


def test_the_probes_own_link_is_left_to_fs_hardlink_in(probe: Path, top: Path) -> None:
    _seed(top / "template" / "sentinel", top / "allowed" / "hardlink-t")
    assert _links(probe, top)["links"] == []
