"""The newc cpio writers: Python's (per-cell part) and the host's shell one agree."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.runtimes import initramfs
from harness.runtimes.initramfs import CHR, DIR, LNK, REG, Entry, newc, read_newc


def _shell(script: str, cwd: Path) -> bytes:
    """Run the shell writer's functions, then `script`; return what they printed."""
    done = subprocess.run(
        ["sh", "-c", "set -eu\nexport LC_ALL=C\n" + initramfs.SH_WRITER + script],
        cwd=cwd,
        capture_output=True,
        check=True,
    )
    return done.stdout


def test_python_archive_round_trips() -> None:
    """Folders, a device node and files of every length come back as written."""
    entries = [
        initramfs.folder("dev"),
        Entry("dev/console", CHR | 0o600, rdev=(5, 1)),
        *(initramfs.file(f"f{n}", bytes(range(n))) for n in range(6)),
    ]
    data = newc(entries)
    assert len(data) % 4 == 0
    assert data.rstrip(b"\0").endswith(b"TRAILER!!!")
    assert read_newc(data) == entries


def test_shell_writer_matches_the_python_writer(tmp_path: Path) -> None:
    """Members appended on the host are byte-identical to the Python writer's."""
    for n in range(5):
        (tmp_path / f"f{n}").write_bytes(b"x" * n)
    script = "".join(f"member f{n} 33188 f{n}\n" for n in range(5))
    script += "symlink link /some/where/else\nhdr d 16877 0\ntrailer\n"
    from_shell = _shell(script, tmp_path)
    expected = [
        *(initramfs.file(f"f{n}", b"x" * n) for n in range(5)),
        Entry("link", LNK | 0o777, b"/some/where/else"),
        Entry("d", DIR | 0o755),
    ]
    assert read_newc(from_shell) == expected
    assert from_shell == newc(expected, first_ino=100001)


def test_concatenated_archives_read_as_one() -> None:
    """The kernel unpacks archives back to back; so does the reader."""
    first = newc([initramfs.folder("harness")])
    second = newc([initramfs.file("harness/args", b"run\0mechanisms\0")])
    names = [e.name for e in read_newc(first + b"\0" * 8 + second)]
    assert names == ["harness", "harness/args"]
    assert read_newc(second)[0].mode == REG | 0o644


def test_truncated_archive_is_refused() -> None:
    """A member that runs past the end is an error, not a short file."""
    data = newc([initramfs.file("big", b"y" * 100)])
    with pytest.raises(ValueError, match="runs past the end"):
        read_newc(data[:150])
