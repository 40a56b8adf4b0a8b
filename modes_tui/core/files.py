"""Replacing a file atomically: a reader sees the old file or the new one, never half.

The one way modes-tui writes a whole file (the control file, config.yaml, session summaries
and titles, the embedding cache, the assembled local model): a temp file beside the target
(the same folder, so `os.replace` is a rename on one file system), optionally fsynced, then
renamed over the target. On any failure the temp file is removed and the target is as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from modes_tui.core.errors import FileWriteError

STALE_TEMP_SECONDS = 600
"""A temp file untouched this long was left by a killed writer (a live one is seconds old)."""

__all__ = ["atomic_file", "atomic_write", "remove_stale_temps"]


def atomic_write(path: str | os.PathLike[str], data: bytes, *, fsync: bool = True) -> None:
    """Replace `path` with `data` (file mode 0600); raise FileWriteError naming the file.

    `fsync=False` suits caches: a power cut may lose the new content, never leave half of it.
    """
    with atomic_file(path, fsync=fsync) as handle:
        handle.write(data)


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str], *, fsync: bool = True) -> Iterator[BinaryIO]:
    """A binary handle whose content replaces `path` when the block ends without an error.

    For content too large to hold in memory at once. An exception in the block removes the
    temp file, leaves `path` as it was and propagates. A symlinked target (a state.json kept
    with dotfiles) is written where it points, so the link stays; a looping link becomes a file.
    """
    target = Path(os.path.realpath(path))
    try:
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as error:
        raise _failed(target, error) from error
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(error, OSError) and not isinstance(error, FileWriteError):
            raise _failed(target, error) from error
        raise
    if fsync:
        _fsync_folder(target.parent)


def remove_stale_temps(path: str | os.PathLike[str]) -> None:
    """Delete temp files of `path` that a killed writer left behind (older than ten minutes)."""
    target = Path(os.path.realpath(path))
    cutoff = time.time() - STALE_TEMP_SECONDS
    for leftover in target.parent.glob(f".{target.name}.*.tmp"):
        with contextlib.suppress(OSError):
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()


def _failed(target: Path, error: OSError) -> FileWriteError:
    reason = error.strerror or str(error) or type(error).__name__
    return FileWriteError(
        f"cannot write {target}: {reason}; the previous file is unchanged. Check that "
        f"{target.parent} exists, is writable and has free space",
        path=str(target),
        cause=error,
    )


def _fsync_folder(folder: Path) -> None:
    # Makes the rename itself durable; some platforms cannot open a folder, which is fine.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
