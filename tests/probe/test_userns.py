"""The probe as root of a user namespace an unprivileged user made (rootless: only
that user's uid mapped, setgroups denied): a mount in its own mount namespace is no
gain, and the unprivileged attempts, with no other id to drop to, are made as the
unprivileged uid of a user namespace of the probe's own (root needed, to start as
nobody)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.probe.copies import runnable_copy

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("unshare"),
    reason="needs root, setpriv and unshare",
)


def test_a_rootless_namespace_drops_into_one_of_its_own(open_folder: Path) -> None:
    probe = runnable_copy(open_folder)
    argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    argv += ["unshare", "--user", "--map-root-user", "--", str(probe), "run", "--tag", "t"]
    argv += ["--setuid-helper", "/bin/true", "--setgid-helper", "/bin/true"]
    done = subprocess.run([*argv, "privilege-floor"], capture_output=True, text=True)
    if "unshare failed" in done.stderr:
        pytest.skip(f"no unprivileged user namespaces here: {done.stderr.strip()}")
    lines = {row.get("id"): row for row in map(json.loads, done.stdout.splitlines())}
    # No second id to become: a user namespace of its own maps the unprivileged uid to
    # the one id there is, every capability dropped, and the attempts are made as it.
    for check in ("priv-setuid0", "priv-capset", "priv-ambient"):
        row = lines[check]
        assert row["outcome"] == "blocked", row
        assert row["evidence"]["own_userns"] == 1 and row["evidence"]["uid"] == 65534, row
    # Its own mount namespace is its user namespace's: a mount there is no gain.
    mount = lines["priv-root-mount"]
    assert mount["outcome"] == "blocked", mount
    assert mount["detail"].endswith("only in a mount namespace of a child user namespace"), mount
