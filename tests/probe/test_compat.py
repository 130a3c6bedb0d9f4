"""The probe's i386 syscall numbers (harness/probe/compat.h) are the kernel's own
(asm/unistd_32.h), and the ways the catalogue names are the calls the probe makes."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from harness.catalogue.table import all_rows

PROBE = Path(__file__).resolve().parents[2] / "harness" / "probe"
HEADER = Path("/usr/include/x86_64-linux-gnu/asm/unistd_32.h")


def _ours() -> dict[str, int]:
    text = (PROBE / "compat.h").read_text()
    return {m[1]: int(m[2]) for m in re.finditer(r"#define I386_NR_(\w+) (\d+)", text)}


@pytest.mark.skipif(not HEADER.exists() and not os.environ.get("CI"), reason="no i386 header")
def test_the_i386_numbers_are_the_kernels() -> None:
    """Each I386_NR_* is the number the kernel's i386 table gives that call: a wrong one
    would make another call than the one a verdict names."""
    theirs = {m[1]: int(m[2]) for m in re.finditer(r"#define __NR_(\w+) (\d+)", HEADER.read_text())}
    ours = _ours()
    assert ours
    native = {
        m[1]: int(m[2])
        for m in re.finditer(r"#define SYS_(\w+) (\d+)", (PROBE / "compat.h").read_text())
    }
    for name, number in ours.items():
        if name not in theirs:  # newer than the header: from 424 on, every ABI's number is alike
            assert number >= 424 and native.get(name) == number, name
            continue
        assert theirs[name] == number, name


NET_H = Path("/usr/include/linux/net.h")


@pytest.mark.skipif(not NET_H.exists() and not os.environ.get("CI"), reason="no linux/net.h")
def test_the_socketcall_numbers_are_the_kernels() -> None:
    """Each I386_SYS_* is the call number socketcall(2) takes for it (linux/net.h): a
    wrong one makes another socket call than the one an i386-* line names."""
    theirs = {m[1]: int(m[2]) for m in re.finditer(r"#define SYS_(\w+)\s+(\d+)", NET_H.read_text())}
    text = (PROBE / "compat.h").read_text()
    ours = {m[1]: int(m[2]) for m in re.finditer(r"#define I386_SYS_(\w+) (\d+)", text)}
    assert {"SOCKET", "CONNECT", "SENDTO", "SENDMSG"} <= set(ours)
    for name, number in ours.items():
        assert theirs[name] == number, name


def test_every_i386_way_the_catalogue_names_is_made() -> None:
    """A row's `i386: ...` way names calls the probe makes through that entry, each with
    its number in compat.h and used by the probe's C (a write kind's compat calls, the
    ways to id 0, capset and prctl)."""
    sources = "".join(p.read_text() for p in PROBE.glob("*.c"))
    named = set(re.findall(r"\bI386_NR_(\w+)\b", sources))
    ways = [w for r in all_rows() for w in r.ways if w.startswith("i386: ")]
    assert ways
    for way in ways:
        for call in way.removeprefix("i386: ").split(", "):
            assert call in _ours() and call in named, (way, call)
