"""The one atomic write: the new content or the old, never half, and no temp file left."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.errors import FileWriteError, ModesError
from modes_tui.core.files import atomic_file, atomic_write


@pytest.fixture
def here(tmp_path: Path) -> Path:
    """A folder of its own (the suite's tmp_path also holds the test's home folder)."""
    folder = tmp_path / "files"
    folder.mkdir()
    return folder


def test_a_write_replaces_the_file_with_private_permissions(here: Path) -> None:
    target = here / "state.json"
    target.write_bytes(b"old")
    atomic_write(target, b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in here.iterdir()) == ["state.json"]


def test_a_write_without_fsync_writes_the_same_bytes(here: Path) -> None:
    target = here / "cache.json"
    atomic_write(target, b"\x00\xffdata", fsync=False)
    assert target.read_bytes() == b"\x00\xffdata"


def test_an_unwritable_folder_is_a_clear_error_and_the_old_file_stays(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = here / "locked"
    folder.mkdir()
    target = folder / "state.json"
    target.write_bytes(b"old")
    folder.chmod(0o500)
    if os.geteuid() == 0:  # root writes anywhere: refuse the way the kernel would
        real_mkstemp = tempfile.mkstemp

        def refused(*args: Any, **kwargs: Any) -> tuple[int, str]:
            if Path(kwargs["dir"]) == folder:
                raise PermissionError(errno.EACCES, "Permission denied", str(folder))
            return real_mkstemp(*args, **kwargs)

        monkeypatch.setattr(tempfile, "mkstemp", refused)
    try:
        with pytest.raises(FileWriteError) as caught:
            atomic_write(target, b"new")
    finally:
        folder.chmod(0o700)
    error = caught.value
    assert isinstance(error, ModesError) and isinstance(error, OSError)
    assert str(target) in str(error) and "Permission denied" in str(error)
    assert "unchanged" in str(error)
    assert error.strerror == "Permission denied"
    assert target.read_bytes() == b"old"
    assert [p.name for p in folder.iterdir()] == ["state.json"]


def test_a_full_disk_keeps_the_old_file_and_leaves_no_temp_file(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = here / "state.json"
    target.write_bytes(b"old")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(FileWriteError, match="No space left on device"):
        atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in here.iterdir()] == ["state.json"]


def test_a_missing_folder_is_a_clear_error(here: Path) -> None:
    target = here / "nowhere" / "state.json"
    with pytest.raises(FileWriteError, match=r"nowhere.*exists, is writable"):
        atomic_write(target, b"new")
    assert not target.parent.exists()


def test_a_failure_inside_the_block_removes_the_temp_file_and_keeps_the_old_one(
    here: Path,
) -> None:
    target = here / "model.gguf"
    target.write_bytes(b"old")
    with pytest.raises(ValueError, match="checksum"), atomic_file(target) as handle:
        handle.write(b"half of the new")
        raise ValueError("checksum does not match")
    assert target.read_bytes() == b"old"
    assert [p.name for p in here.iterdir()] == ["model.gguf"]


def test_a_failing_rename_removes_the_temp_file(here: Path) -> None:
    target = here / "taken"
    target.mkdir()  # a folder where the file should go: os.replace refuses
    (target / "inside").write_bytes(b"x")
    with pytest.raises(FileWriteError, match="taken"):
        atomic_write(target, b"new")
    assert sorted(p.name for p in here.iterdir()) == ["taken"]
    assert [p.name for p in target.iterdir()] == ["inside"]


def test_a_symlinked_file_is_refused_and_what_it_points_to_is_untouched(here: Path) -> None:
    # Writing where the link pointed is how `modes-tui mode code` replaced another file.
    real = here / "dotfiles" / "state.json"
    real.parent.mkdir()
    real.write_bytes(b"precious")
    link = here / "state.json"
    link.symlink_to(real)
    with pytest.raises(FileWriteError, match=r"state\.json: it is a symlink .*nothing was written"):
        atomic_write(link, b"new")
    assert link.is_symlink()
    assert real.read_bytes() == b"precious"
    assert sorted(p.name for p in here.iterdir()) == ["dotfiles", "state.json"]
