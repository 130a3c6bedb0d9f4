"""Writing into harness's own folders of a user's output folder (harness/files.py)."""

from __future__ import annotations

import os
from pathlib import Path

from harness.files import own_folder, write_atomic


def test_a_folder_swapped_for_a_symlink_after_it_was_opened_is_not_followed(
    tmp_path: Path,
) -> None:
    """Once harness holds its folder open, a symlink swapped in for it by name sends
    nothing elsewhere: the file lands in the folder harness made."""
    fd = own_folder(tmp_path / "run", ["evidence", "openshell"])
    try:
        made = tmp_path / "run" / "evidence"
        made.rename(tmp_path / "moved")
        elsewhere = tmp_path / "elsewhere" / "openshell"
        elsewhere.mkdir(parents=True)
        made.symlink_to(elsewhere.parent)
        write_atomic(made / "openshell" / "doc.json", "{}\n", folder=fd)
    finally:
        os.close(fd)
    assert (tmp_path / "moved" / "openshell" / "doc.json").read_text() == "{}\n"
    assert list(elsewhere.iterdir()) == []
