"""The probe's stdout left non-blocking (a runtime sharing its open file description,
as runsc does) with a reader that is behind (a loaded host): every line still arrives
whole. Before, write() answering EAGAIN dropped the rest of a line, and the next line
ran into it: "probe output line N unusable", or a done line counting lines it never
saw (issue 40's load flake)."""

from __future__ import annotations

import fcntl
import os
import secrets
import subprocess
import time
from pathlib import Path

from harness.probe.protocol import parse_output
from tests.probe.copies import runnable_copy

F_SETPIPE_SZ = 1031


def test_a_slow_reader_of_a_non_blocking_stdout_loses_no_byte(tmp_path: Path) -> None:
    probe = runnable_copy(tmp_path)
    r, w = os.pipe()
    os.set_blocking(w, False)
    fcntl.fcntl(w, F_SETPIPE_SZ, 4096)  # the smallest pipe: it is full at once
    nonce = secrets.token_hex(16)
    proc = subprocess.Popen(
        [str(probe), "run", "--tag", "nb", "--cell-nonce", nonce, "--check-timeout-ms", "5000",
         "--deadline-ms", "60000", "mechanisms", "privilege-floor"],
        stdout=w, stderr=subprocess.DEVNULL, cwd=tmp_path,
    )  # fmt: skip
    os.close(w)
    time.sleep(0.5)  # the reader falls behind
    chunks = []
    while chunk := os.read(r, 1024):
        chunks.append(chunk)
        time.sleep(0.001)
    os.close(r)
    proc.wait(timeout=120)
    out = parse_output(b"".join(chunks).decode(), cell_nonce=nonce)
    assert out.complete, out.problems[:3]
    assert not out.problems
