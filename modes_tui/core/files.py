"""The files modes-tui reads and writes are what they claim to be: regular files, bounded.

Every file the app owns goes through here (a test lists the exceptions):

- **Reading** (`read_bytes`, `read_text`, `open_regular`): opened with `O_NOFOLLOW` and
  `O_NONBLOCK`, then `fstat`ed: a symlink, a FIFO, a device or a folder is a `FileReadError`
  naming the file and what it is, never a hang on a FIFO or an endless read of /dev/zero.
  Reads are bounded: each kind of file has a limit (`LIMITS`), and a larger file is a
  `FileTooLargeError` naming the file, its size and the limit.
- **Appending** (`open_append`): the same checks, created 0600, and an existing file with
  group or other bits (an older version made input_history 0644) is tightened to 0600.
- **Replacing** (`atomic_write`, `atomic_file`): a temp file beside the target (the same
  folder, so `os.replace` is a rename on one file system), optionally fsynced, then renamed
  over the target. A target that is a symlink or not a regular file is refused, never
  followed: `modes-tui mode code` once replaced the file a symlinked state.json pointed at.
  On any failure the temp file is removed and the target is as it was. Files are 0600
  unless the caller asks otherwise (an export the user names is 0644).
- **Folders** (`private_folder`): created 0700, parents included.
- **Read-modify-write** (`locked`): a file that several processes change (the control file,
  config.yaml) is read and replaced while holding a lock on `.<name>.lock` beside it
  (`filelock`), so two writers never both read the old file and one's change is lost.
- **Leftovers** (`is_own_temp`, `remove_stale_temps`): the temp files of a writer killed
  before its rename are recognised by name and removed once older than a minute.

Only the last component of a path is checked: a linked folder (`~/.config` kept in a
dotfiles repository) is followed, so "link the folder instead" is the way to keep a file
elsewhere.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from modes_tui.core.errors import FileReadError, FileTooLargeError, FileWriteError

STALE_TEMP_SECONDS = 60
"""A temp file untouched this long was left by a killed writer (a live one is written to
every few milliseconds, so its modification time stays fresh)."""
LOCK_TIMEOUT_SECONDS = 10.0
"""How long a writer waits for another one's lock (a write holds it for milliseconds)."""
OWN_TEMP_NAMES = (
    re.compile(r"^\.modes-tui-[0-9a-f]{12}\.tmp$"),  # core.edits.changes
    re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$"),  # atomic_file: mkstemp(".<name>.", ".tmp")
)
"""The names of this program's temp files (nothing else is ever swept)."""

MiB = 1024 * 1024

LIMITS: dict[str, int] = {
    "control": 64 * 1024,
    "settings": 4 * MiB,
    "pack": 4 * MiB,
    "summary": 1 * MiB,
    "history": 16 * MiB,
    "corrections": 256 * MiB,
    "session": 1024 * MiB,
    "cache": 512 * MiB,
    "log": 64 * MiB,
}
"""The most the app reads of each kind of file, in bytes. A control file holds one short
key, a session log a whole conversation (a 9 MB answer makes a ~20 MB log); none of them
is worth running out of memory for."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC
_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC
_CHUNK = 1024 * 1024

__all__ = [
    "LIMITS",
    "atomic_file",
    "atomic_write",
    "describe",
    "is_own_temp",
    "locked",
    "open_append",
    "open_bounded",
    "open_regular",
    "private_folder",
    "read_bytes",
    "read_text",
    "remove_stale_temps",
]


# --------------------------------------------------------------------------- reading


def describe(mode: int, path: str | os.PathLike[str] = "") -> str | None:
    """What a file of `mode` (st_mode) is when it is not a regular file, else None."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        try:
            return f"is a symlink (to {os.readlink(path)})"
        except OSError:
            return "is a symlink"
    if stat.S_ISFIFO(mode):
        return "is a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device"
    if stat.S_ISDIR(mode):
        return "is a folder"
    if stat.S_ISSOCK(mode):
        return "is a socket"
    return "is not a regular file"


def _refused(path: str | os.PathLike[str], what: str, fix: str = "") -> FileReadError:
    fix = fix or _fix(what)
    return FileReadError(
        f"{os.fspath(path)} {what}, not a regular file: {fix}", path=os.fspath(path), reason=what
    )


def _fix(what: str) -> str:
    if what.startswith("is a symlink"):
        return (
            "remove the link, or replace it with the file itself (to keep the file "
            "elsewhere, link its folder instead): modes-tui does not follow links"
        )
    # never "remove it": the path may be one the user named (`eval /tmp`, `export -o /tmp`)
    if what == "is a folder":
        return "name a file, or move the folder away if this path must be a file"
    return "name a regular file instead (modes-tui never opens anything else)"


def _check_name(path: str | os.PathLike[str], *, follow: bool = False) -> None:
    """Refuse a link or a special file before opening it (opening a device can act)."""
    try:
        mode = (os.stat if follow else os.lstat)(path).st_mode
    except FileNotFoundError:
        return  # the open says so, or creates it
    what = describe(mode, path)
    if what is not None:
        raise _refused(path, what)


def _checked(fd: int, path: str | os.PathLike[str]) -> int:
    """`fd` if it is a regular file (checked on the open file: no race), else closed and refused."""
    try:
        what = describe(os.fstat(fd).st_mode, path)
    except OSError:
        os.close(fd)
        raise
    if what is not None:
        os.close(fd)
        raise _refused(path, what)
    return fd


def _open(
    path: str | os.PathLike[str], flags: int, mode: int = 0o600, *, follow: bool = False
) -> int:
    _check_name(path, follow=follow)
    try:
        fd = os.open(path, flags & ~_NOFOLLOW if follow else flags, mode)
    except OSError as error:
        # ELOOP (EMLINK on BSD): a link swapped in after the check; ENXIO: a FIFO
        # without a reader, opened to write.
        if error.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO):
            _check_name(path, follow=follow)
        raise
    return _checked(fd, path)


def open_regular(path: str | os.PathLike[str], *, follow: bool = False) -> int:
    """A read-only descriptor of the regular file `path`; FileReadError for anything else.

    `follow`: a link to a regular file is fine (files the user points the app at, such as
    pack files and eval files, which the app never writes). FileNotFoundError (and other
    OSErrors) come through as they are.
    """
    return _open(path, _READ_FLAGS, follow=follow)


def read_bytes(path: str | os.PathLike[str], kind: str, *, follow: bool = False) -> bytes:
    """The content of the regular file `path`, at most `LIMITS[kind]` bytes.

    Raises FileReadError (not a regular file), FileTooLargeError (over the limit; checked
    on the size and again while reading, for a file that grows) or OSError.
    """
    limit = LIMITS[kind]
    fd = open_regular(path, follow=follow)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise _too_large(path, size, limit, kind)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise _too_large(path, total, limit, kind)
    finally:
        os.close(fd)
    return b"".join(chunks)


def open_bounded(path: str | os.PathLike[str], kind: str) -> BinaryIO:
    """A binary handle on the regular file `path`, no larger than `LIMITS[kind]` (for a
    reader that takes a file, such as `numpy.load`). FileTooLargeError when it is larger."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if size > LIMITS[kind]:
            raise _too_large(path, size, LIMITS[kind], kind)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_text(
    path: str | os.PathLike[str], kind: str, *, errors: str = "strict", follow: bool = False
) -> str:
    """`read_bytes` decoded as UTF-8 (UnicodeDecodeError with `errors="strict"`)."""
    return read_bytes(path, kind, follow=follow).decode("utf-8", errors=errors)


def _too_large(path: str | os.PathLike[str], size: int, limit: int, kind: str) -> FileTooLargeError:
    return FileTooLargeError(
        f"{os.fspath(path)} is {size:,} bytes, over the {limit:,}-byte limit for a {kind} "
        "file: it is not what modes-tui wrote there; move it away",
        path=os.fspath(path),
        size=size,
        limit=limit,
    )


# --------------------------------------------------------------------------- appending


def open_append(path: str | os.PathLike[str], mode: int = 0o600, *, read: bool = False) -> int:
    """A descriptor appending to the regular file `path`, created with `mode`.

    `read`: also readable (to look at the last byte before appending). An existing file
    with more permissions than `mode` is tightened to it: a file that holds what the user
    typed was once created 0644.
    """
    flags = (_APPEND_FLAGS & ~os.O_WRONLY) | os.O_RDWR if read else _APPEND_FLAGS
    fd = _open(path, flags, mode)
    try:
        current = stat.S_IMODE(os.fstat(fd).st_mode)
        if current & ~mode:
            os.fchmod(fd, current & mode)
    except OSError:
        pass  # not our file to change (another owner): it still works
    return fd


def private_folder(path: str | os.PathLike[str]) -> Path:
    """Create `path` and missing parents 0700 (a folder already there is tightened); return it."""
    folder = Path(path)
    missing: list[Path] = []
    probe = folder
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for item in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(item, 0o700)
    if not missing:
        with contextlib.suppress(OSError):
            current = stat.S_IMODE(os.stat(folder).st_mode)
            if current & 0o077:
                os.chmod(folder, current & 0o700)
    return folder


# --------------------------------------------------------------------------- replacing


def atomic_write(
    path: str | os.PathLike[str], data: bytes, *, fsync: bool = True, mode: int = 0o600
) -> None:
    """Replace `path` with `data` (file mode `mode`); raise FileWriteError naming the file.

    `fsync=False` suits caches: a power cut may lose the new content, never leave half of it.
    """
    with atomic_file(path, fsync=fsync, mode=mode) as handle:
        handle.write(data)


@contextlib.contextmanager
def atomic_file(
    path: str | os.PathLike[str], *, fsync: bool = True, mode: int = 0o600
) -> Iterator[BinaryIO]:
    """A binary handle whose content replaces `path` when the block ends without an error.

    For content too large to hold in memory at once. An exception in the block removes the
    temp file, leaves `path` as it was and propagates. A target that is a symlink, a FIFO,
    a device or a folder is refused (FileWriteError) before anything is written: the rename
    would replace the link itself, and writing where it points is how a symlinked
    state.json once overwrote another file.
    """
    target = Path(os.path.abspath(path))
    _check_target(target)
    try:
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as error:
        raise _failed(target, error) from error
    try:
        if mode != 0o600:
            os.fchmod(fd, mode)
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


def _check_target(target: Path) -> None:
    try:
        what = describe(os.lstat(target).st_mode, target)
    except OSError:
        return  # missing (created by the rename) or unreachable (mkstemp says why)
    if what is None:
        return
    raise FileWriteError(
        f"cannot write {target}: it {what}, not a regular file; nothing was written. "
        f"{_fix(what)[0].upper()}{_fix(what)[1:]}",
        path=str(target),
        cause=OSError(errno.EEXIST, what),
    )


def is_own_temp(name: str) -> bool:
    """Whether a file called `name` is one of this program's temp files (`OWN_TEMP_NAMES`)."""
    return any(pattern.match(name) for pattern in OWN_TEMP_NAMES)


def remove_stale_temps(path: str | os.PathLike[str], *, now: float | None = None) -> list[Path]:
    """Delete temp files of `path` that a killed writer left behind (older than a minute);
    return what was removed."""
    target = Path(os.path.abspath(path))
    cutoff = (time.time() if now is None else now) - STALE_TEMP_SECONDS
    removed: list[Path] = []
    for leftover in target.parent.glob(f".{glob_escape(target.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            info = leftover.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and info.st_mtime < cutoff:
                leftover.unlink()
                removed.append(leftover)
    return removed


def glob_escape(name: str) -> str:
    """`name` with glob's special characters matching themselves."""
    return re.sub(r"([*?\[])", r"[\1]", name)


@contextlib.contextmanager
def locked(path: str | os.PathLike[str], *, timeout: float | None = None) -> Iterator[Path]:
    """Hold the lock of `path` for a read-modify-write: read it, change it and replace it
    (`atomic_write`) inside the block, and no other writer reads it meanwhile.

    The lock is `.<name>.lock` beside `path` (left there: removing a lock file while
    another process waits on it would let two writers in), taken with `filelock` (flock on
    POSIX, so a killed holder frees it at once). Every process that changes the file takes
    the same lock; readers need none, since the file is only ever replaced whole. A lock not
    had within `timeout` seconds is a FileWriteError naming the lock file; nothing is
    written (default: `LOCK_TIMEOUT_SECONDS`). Yields the lock file's path.
    """
    from filelock import FileLock, Timeout

    timeout = LOCK_TIMEOUT_SECONDS if timeout is None else timeout
    target = Path(os.path.abspath(path))
    lock_path = target.parent / f".{target.name}.lock"
    try:
        private_folder(target.parent)
        _check_name(lock_path)
    except OSError as error:  # FileReadError too: a link or a FIFO at the lock's place
        raise FileWriteError(
            f"cannot lock {target}: {error}; nothing was written",
            path=str(target),
            cause=error,
        ) from error
    lock = FileLock(str(lock_path), timeout=timeout, mode=0o600)
    try:
        lock.acquire()
    except Timeout as error:
        raise FileWriteError(
            f"cannot write {target}: another writer has held its lock {lock_path} for over "
            f"{timeout:g} s; nothing was written. If no modes-tui is running, remove the lock "
            "file and retry",
            path=str(target),
            cause=OSError(errno.EAGAIN, "lock held"),
        ) from error
    except OSError as error:
        raise _failed(target, error) from error
    try:
        yield lock_path
    finally:
        lock.release()


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
