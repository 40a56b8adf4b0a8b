"""Changing one file under the working directory: look at it, then write it, confined.

`look` reads a file the way the read tools do (walked under the working directory's
descriptor, links followed only inside it, special files refused) and says where it really
is. `commit` writes by descriptor too: it walks the real path's folders with `O_NOFOLLOW`
(creating missing ones), checks that the file still holds what was looked at (its SHA-256;
absent stays absent), writes a temp file beside it and renames it over the file, so a
reader sees the old content or the new, never half; the file keeps its permission bits.
A link where the file or a folder should be (swapped in since the look) is refused, never
followed. Both judge the file by the mode's `paths:` rules (`core.tools.access`) at its
real path: `look` on the descriptor it read, `commit` on the descriptor of the file it is
about to replace (a hard link swapped in since is refused too), and the rename replaces the
name, never writing through it. Only UTF-8 text up to `MAX_TEXT_BYTES` is changed: the old content is kept as a
checkpoint, and these are text tools.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import posixpath
import secrets
import stat
from dataclasses import dataclass

from modes_tui.core.errors import ToolError
from modes_tui.core.files import describe
from modes_tui.core.tools.access import FileRules, check
from modes_tui.core.tools.confined import ConfinedRoot, MissingError, shown_path
from modes_tui.core.tools.resolver import missing_real

__all__ = ["MAX_TEXT_BYTES", "ChangedOnDisk", "FileState", "commit", "digest", "look"]

MAX_TEXT_BYTES = 4 * 1024 * 1024
"""The largest file the edit tools change (its old content is kept with the session)."""

_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class ChangedOnDisk(ToolError):
    """The file no longer holds what it held when the change was made (or shown)."""


@dataclass(frozen=True, slots=True)
class FileState:
    """A file as it was looked at."""

    given: str
    """The path as the model gave it."""
    relative: str
    """Where it really is under the working directory (links inside followed)."""
    content: str | None
    """Its text; None when it does not exist."""
    digest: str | None
    """SHA-256 of its bytes; None when it does not exist."""

    @property
    def shown(self) -> str:
        """The path for messages (control characters escaped)."""
        return shown_path(self.relative)


def digest(data: bytes) -> str:
    """SHA-256 of `data`, in hex."""
    return hashlib.sha256(data).hexdigest()


def look(root: ConfinedRoot, path: str, rules: FileRules | None = None) -> FileState:
    """What `path` holds now; ToolError for a folder, a special file, binary or huge content,
    or a file `rules` (the mode's `paths:`) refuse at its real path (None: no rules)."""
    parts = root.parts(path)
    if not parts or parts[-1] == "..":
        raise ToolError(f"`{shown_path(path)}` is a folder, not a file; name a file in it")
    try:
        opened = root.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except MissingError:
        state = FileState(path, missing_real(root, path, parts), None, None)
        _refuse(rules, root, state.relative, None, _given(parts))
        return state
    try:
        if not opened.is_regular:
            raise _not_regular(opened.relative, opened.status.st_mode)
        _refuse(rules, root, opened.relative, opened.status, _given(parts))
        data = _read(opened.fd, opened.relative)
    finally:
        os.close(opened.fd)
    return FileState(path, opened.relative, _text(data, opened.relative), digest(data))


def _given(parts: list[str]) -> str:
    return posixpath.normpath("/".join(parts)) if parts else "."


def _refuse(
    rules: FileRules | None,
    root: ConfinedRoot,
    relative: str,
    status: os.stat_result | None,
    given: str | None = None,
) -> None:
    """ToolError when the mode's rules refuse writing the file at its real path."""
    if rules is None:
        return
    refusal = check(rules, root, relative, status, writing=True, given=given)
    if refusal is not None:
        raise ToolError(refusal.reason)


def _read(fd: int, relative: str) -> bytes:
    size = os.fstat(fd).st_size
    if size > MAX_TEXT_BYTES:
        raise _too_large(relative, size)
    with os.fdopen(os.dup(fd), "rb") as handle:
        data = handle.read(MAX_TEXT_BYTES + 1)
    if len(data) > MAX_TEXT_BYTES:
        raise _too_large(relative, len(data))
    return data


def _text(data: bytes, relative: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = "\0"
    if "\0" in text:
        raise ToolError(
            f"`{shown_path(relative)}` is not a UTF-8 text file; write_file and edit_file "
            "change text files only"
        )
    return text


def _too_large(relative: str, size: int) -> ToolError:
    return ToolError(
        f"`{shown_path(relative)}` is {size:,} bytes; the edit tools change files up to "
        f"{MAX_TEXT_BYTES:,} bytes (use run_command for larger ones)"
    )


def _not_regular(relative: str, mode: int) -> ToolError:
    what = "is a folder" if stat.S_ISDIR(mode) else describe(mode) or "is not a regular file"
    return ToolError(
        f"`{shown_path(relative)}` {what}; only regular files can be written (nothing was)"
    )


def commit(
    root: ConfinedRoot, state: FileState, content: str | None, rules: FileRules | None = None
) -> str | None:
    """Make `state.relative` hold `content` (None: remove it) if it still holds what `state`
    saw; the new digest. ChangedOnDisk when it does not; ToolError when it cannot be done
    or when `rules` refuse the file now there (judged on its descriptor's fstat)."""
    parts = state.relative.split("/")
    folder = _folder(root, parts[:-1], state, create=content is not None)
    try:
        now, mode, status = _current(folder, parts[-1], state.relative)
        _refuse(rules, root, state.relative, status)
        if now != state.digest:
            raise ChangedOnDisk(
                f"`{state.shown}` changed on disk since it was read; nothing was written. "
                "Read it again and redo the change"
            )
        if content is None:
            if now is not None:
                os.unlink(parts[-1], dir_fd=folder)
            return None
        data = content.encode("utf-8")
        _replace(folder, parts[-1], data, mode, state.relative)
        return digest(data)
    except OSError as error:
        raise _failed(state.relative, error) from None
    finally:
        os.close(folder)


def _folder(root: ConfinedRoot, names: list[str], state: FileState, *, create: bool) -> int:
    """The descriptor of the folder that holds the file, walked without following links;
    missing folders are created when `create`."""
    fd = os.dup(root.fd)
    for index, name in enumerate(names):
        try:
            try:
                child = os.open(name, _DIR, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(name, 0o777, dir_fd=fd)
                child = os.open(name, _DIR, dir_fd=fd)
        except OSError as error:
            os.close(fd)
            where = "/".join(names[: index + 1])
            if error.errno in (errno.ELOOP, errno.ENOTDIR):
                raise ChangedOnDisk(
                    f"`{state.shown}`: `{shown_path(where)}` is no longer a folder (a link or "
                    "a file took its place); nothing was written"
                ) from None
            raise _failed(where, error) from None
        os.close(fd)
        fd = child
    return fd


def _current(
    folder: int, name: str, relative: str
) -> tuple[str | None, int | None, os.stat_result | None]:
    """(digest, permission bits, fstat) of the file now; all None when there is none."""
    try:
        status = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None, None, None
    if not stat.S_ISREG(status.st_mode):
        raise _not_regular(relative, status.st_mode)
    fd = os.open(name, _READ, dir_fd=folder)
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise _not_regular(relative, opened.st_mode)
        return digest(_read(fd, relative)), stat.S_IMODE(opened.st_mode), opened
    finally:
        os.close(fd)


def _replace(folder: int, name: str, data: bytes, mode: int | None, relative: str) -> None:
    """Write `data` to a temp file in `folder`, then rename it over `name`."""
    temp = f".modes-tui-{secrets.token_hex(6)}.tmp"  # short: `name` may be 255 bytes long
    fd = os.open(temp, _NEW, 0o666 if mode is None else 0o600, dir_fd=folder)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        os.close(fd)
        fd = -1
        # the NAME is replaced, never written through: a link or a second hard link put
        # there since the check keeps its own file untouched
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise
    with contextlib.suppress(OSError):
        os.fsync(folder)  # the rename itself survives a power cut


def _failed(relative: str, error: OSError) -> ToolError:
    reason = error.strerror or str(error)
    return ToolError(
        f"`{shown_path(relative)}` could not be written: {reason}; nothing was changed"
    )
