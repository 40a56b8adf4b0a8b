"""Opening paths under the working directory by descriptor, never following a link out of it.

Checking a path and then opening it by name is a race: between the two, a folder can be
swapped for a symbolic link to anywhere. So nothing here opens a path by name from `/`.
`ConfinedRoot` holds the working directory open and walks a path one component at a time
with `openat(dir_fd, name, O_NOFOLLOW)`: each step is opened under the folder the previous
step returned, and a link is never followed by the kernel. A link met on the way is read
(`readlinkat`) and its target walked the same way, from the root for an absolute target
inside the working directory, from the folder that holds it for a relative one. `..` pops
the walk's own stack of folders and never opens `..`, so it cannot climb above the root.
A link that leads out, more than `MAX_LINK_HOPS` links (a loop), an over-long path or a NUL
are refused with a `ToolError` naming the path and what to do.

Links that stay inside are followed because real projects hold them (`docs/README.md ->
../README.md`, `current -> releases/2`) and the tools followed them before; following them
component by component under the root's descriptor keeps that safe.

`open()` takes the `os.open` flags of the last component, so a writing tool can open for
writing (`O_WRONLY | O_CREAT | O_EXCL`) through the same walk; the folders on the way are
always opened read-only with `O_DIRECTORY`.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import Protocol

from modes_tui.core.errors import ToolError

__all__ = [
    "MAX_LINK_HOPS",
    "MAX_PATH_CHARS",
    "MAX_WALK_DEPTH",
    "ConfinedRoot",
    "Entry",
    "MissingError",
    "Opened",
    "OutsideError",
    "WalkFilter",
    "shown_path",
]

MAX_PATH_CHARS = 4096
"""A longer path is refused before any system call (Linux's PATH_MAX)."""
MAX_LINK_HOPS = 40
"""More links than this on one path is a loop (the kernel's own limit is 40 too)."""
MAX_WALK_DEPTH = 64
"""A listing walk enters no deeper: each level holds a descriptor and a Python frame."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def shown_path(raw: str, limit: int = 120) -> str:
    """`raw` as an error message shows it: control characters escaped, long ones cut."""
    text = raw.encode("unicode_escape").decode("ascii") if not raw.isprintable() else raw
    if len(text) > limit:
        return f"{text[:limit]}… ({len(raw)} characters)"
    return text


class OutsideError(ToolError):
    """A path, or a link on it, leads outside the working directory."""


class MissingError(ToolError):
    """A name on the path does not exist (a writing tool may create it)."""


@dataclass(frozen=True, slots=True)
class Opened:
    """A file descriptor opened under the root, and where it turned out to be."""

    fd: int
    """The descriptor; the caller closes it."""
    relative: str
    """Its path under the root after following links inside (`.` for the root)."""
    status: os.stat_result
    """fstat of the descriptor (what was opened, not what the name says now)."""

    @property
    def is_dir(self) -> bool:
        """Whether it is a folder."""
        return stat.S_ISDIR(self.status.st_mode)

    @property
    def is_regular(self) -> bool:
        """Whether it is a regular file (not a FIFO, device or socket)."""
        return stat.S_ISREG(self.status.st_mode)


@dataclass(frozen=True, slots=True)
class Entry:
    """One name in a folder, as a listing walk met it (links not followed)."""

    relative: str
    """Path under the folder the walk started from."""
    name: str
    """The last component."""
    kind: str
    """`dir`, `file`, `link` or `other` (FIFO, device, socket)."""
    size: int
    """Size in bytes for a file, 0 otherwise."""


class ConfinedRoot:
    """The working directory held open by descriptor; paths are walked from it.

    Use as a context manager: `with ConfinedRoot(path) as root: opened = root.open("a/b")`.
    """

    def __init__(self, root: Path) -> None:
        self.real = root.resolve()
        """The working directory's real path (absolute link targets are compared with it)."""
        self.fd = -1
        """Its descriptor while open."""

    def __enter__(self) -> ConfinedRoot:
        try:
            self.fd = os.open(self.real, _DIR_FLAGS & ~os.O_NOFOLLOW)
        except OSError as error:
            raise ToolError(
                f"the working directory {self.real} cannot be opened: {error.strerror or error}"
            ) from None
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    # ------------------------------------------------------------------ paths

    def parts(self, raw: str) -> list[str]:
        """The components of `raw` under the root; ToolError for a path that cannot be one."""
        if "\0" in raw:
            raise ToolError(f"`{shown_path(raw)}` contains a NUL character; no file name can")
        try:
            os.fsencode(raw)
        except UnicodeEncodeError:  # a lone surrogate from JSON ("\ud800"): os.open would raise
            raise ToolError(
                f"`{shown_path(raw)}` holds a character that cannot be a file name "
                "(a lone surrogate); give the name as it is listed"
            ) from None
        if len(raw) > MAX_PATH_CHARS:
            raise ToolError(
                f"the path `{shown_path(raw, 60)}` is {len(raw)} characters long; paths "
                f"longer than {MAX_PATH_CHARS} cannot be opened (give a shorter one)"
            )
        path = PurePosixPath(os.path.expanduser(raw.strip() or "."))
        if path.is_absolute():
            inside = self.inside(path)
            if inside is None:
                raise _outside(raw, self.real)
            path = inside
        depth = 0
        for part in path.parts:
            depth += -1 if part == ".." else 0 if part == "." else 1
            if depth < 0:
                raise _outside(raw, self.real)
        return [part for part in path.parts if part != "."]

    def inside(self, absolute: PurePosixPath) -> PurePosixPath | None:
        """`absolute` relative to the root, or None when it names a place outside it.

        Lexically first; then with its links resolved by name, for a root reached through a
        link (`ln -s "$PWD/notes.md"` in a symlinked home, macOS's /tmp). Resolving by name
        can race, but its result only says where the walk starts: that path is walked under
        the root's descriptor like any other, so a race can change which file inside is
        named, never open one outside.
        """
        lexical = PurePosixPath(os.path.normpath(absolute))
        if lexical.is_relative_to(self.real):
            return lexical.relative_to(self.real)
        resolved = PurePosixPath(os.path.realpath(absolute))
        if resolved.is_relative_to(self.real):
            return resolved.relative_to(self.real)
        return None

    def open(self, raw: str, flags: int = os.O_RDONLY, mode: int = 0o600) -> Opened:
        """Open `raw` under the root with `flags` for its last component; ToolError if not.

        O_NOFOLLOW and O_CLOEXEC are always added. Reading callers add O_NONBLOCK so that a
        FIFO opens at once (and is then refused by its type) instead of waiting for a writer.
        """
        walk = _Walk(self, raw)
        try:
            return walk.run(self.parts(raw), flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
        finally:
            walk.close()

    # ------------------------------------------------------------------ listing

    def entries(
        self,
        folder: Opened,
        *,
        recursive: bool,
        skip: frozenset[str],
        only: WalkFilter | None = None,
    ) -> Iterator[Entry]:
        """Names under the open `folder`, sorted, depth first; links are not followed.

        Sub-folders are opened by descriptor under their parent, so a folder swapped for a
        link during the walk is seen as the link it now is (or gives up on that folder).
        `only` drops names (and does not enter folders) it does not keep: .gitignore rules.
        """
        depth = MAX_WALK_DEPTH if recursive else 0
        yield from _entries(folder.fd, "", depth, skip, only)


class _Walk:
    """One path walked component by component; holds the folders it opened."""

    def __init__(self, root: ConfinedRoot, raw: str) -> None:
        self.root = root
        self.raw = raw
        self.stack: list[tuple[int, str]] = []
        self.hops = 0
        self.last_link = ".."

    def current(self) -> int:
        return self.stack[-1][0] if self.stack else self.root.fd

    def relative(self, name: str | None = None) -> str:
        names = [n for _, n in self.stack] + ([name] if name else [])
        return "/".join(names) or "."

    def close(self) -> None:
        for fd, _ in self.stack:
            os.close(fd)
        self.stack.clear()

    def run(self, parts: list[str], flags: int, mode: int) -> Opened:
        pending = list(reversed(parts))  # a stack: the next component is last
        while pending:
            name = pending.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if not self.stack:
                    raise _link_outside(self.raw, self.root.real, self.last_link)
                os.close(self.stack.pop()[0])
                continue
            last = not any(p not in ("", ".") for p in pending)
            fd = self.step(name, flags if last else _DIR_FLAGS, mode, pending)
            if fd is None:
                continue  # a link: its target's components are now pending
            if last:
                return Opened(fd, self.relative(name), os.fstat(fd))
            self.stack.append((fd, name))
        fd = self.reopen_current(flags)
        return Opened(fd, self.relative(), os.fstat(fd))

    def step(self, name: str, flags: int, mode: int, pending: list[str]) -> int | None:
        """Open `name` under the current folder, or queue a link's target (None)."""
        try:
            return os.open(name, flags, mode, dir_fd=self.current())
        except OSError as error:
            if error.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise _refused(self.raw, self.relative(name), error) from None
            target = self.link_target(name)
            if target is None:
                raise _refused(self.raw, self.relative(name), error) from None
        self.hops += 1
        if self.hops > MAX_LINK_HOPS:
            raise ToolError(
                f"`{shown_path(self.raw)}` goes through more than {MAX_LINK_HOPS} symbolic "
                f"links (a link loop at `{self.relative(name)}`); it cannot be opened"
            )
        self.last_link = target
        link = PurePosixPath(target)
        if link.is_absolute():
            inside = self.root.inside(link)
            if inside is None:
                raise _link_outside(self.raw, self.root.real, target)
            self.close()  # an absolute target inside starts again from the root
            link = inside
        pending.extend(reversed(link.parts))
        return None

    def link_target(self, name: str) -> str | None:
        try:
            return os.readlink(name, dir_fd=self.current())
        except OSError:
            return None  # not a link: the open's own error stands

    def reopen_current(self, flags: int) -> int:
        """The folder the walk ended in, opened with the caller's flags (`.`, `a/..`)."""
        try:
            return os.open(".", flags & ~os.O_CREAT, dir_fd=self.current())
        except OSError as error:
            raise _refused(self.raw, self.relative(), error) from None


class WalkFilter(Protocol):
    """What a listing walk keeps (`core.tools.ignores.Ignores`: .gitignore files)."""

    def enter(self, fd: int, prefix: str) -> WalkFilter:
        """The filter for the names in the folder open as `fd` (`prefix`: its path)."""
        ...

    def keeps(self, entry: Entry) -> bool:
        """Whether the walk yields (and, for a folder, enters) `entry`."""
        ...


def _entries(
    fd: int, prefix: str, depth: int, skip: frozenset[str], only: WalkFilter | None
) -> Iterator[Entry]:
    try:
        with os.scandir(fd) as scan:
            found = sorted((_describe(entry, prefix) for entry in scan), key=_by_name)
    except OSError:
        return
    if only is not None:
        only = only.enter(fd, prefix)
        found = [entry for entry in found if only.keeps(entry)]
    for entry in found:
        yield entry
        if depth <= 0 or entry.kind != "dir" or entry.name in skip:
            continue
        try:
            child = os.open(entry.name, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            continue  # gone, or swapped for a link since the scan: not followed
        try:
            yield from _entries(child, entry.relative + "/", depth - 1, skip, only)
        finally:
            os.close(child)


def _describe(entry: os.DirEntry[str], prefix: str) -> Entry:
    try:
        if entry.is_symlink():
            kind, size = "link", 0
        elif entry.is_dir(follow_symlinks=False):
            kind, size = "dir", 0
        elif entry.is_file(follow_symlinks=False):
            kind, size = "file", entry.stat(follow_symlinks=False).st_size
        else:
            kind, size = "other", 0
    except OSError:
        kind, size = "other", 0
    return Entry(prefix + entry.name, entry.name, kind, size)


def _outside(raw: str, real: Path) -> OutsideError:
    return OutsideError(
        f"`{shown_path(raw)}` is outside the working directory {real}; only paths inside it "
        "can be used (give a path relative to it)"
    )


def _link_outside(raw: str, real: Path, target: str) -> OutsideError:
    return OutsideError(
        f"`{shown_path(raw)}` goes through a symbolic link that leads outside the working "
        f"directory ({shown_path(target)}); links out of {real} are not followed"
    )


_REASONS = {
    errno.ENOENT: "does not exist; use list_files to see what is there",
    errno.ENOTDIR: "is not a directory",
    errno.ENAMETOOLONG: "has a name longer than the file system allows (255 bytes)",
    errno.EACCES: "cannot be opened: permission denied",
    errno.EPERM: "cannot be opened: permission denied",
    errno.EISDIR: "is a directory",
    errno.ENXIO: "is a FIFO or socket nobody is reading; only regular files can be used",
    errno.EEXIST: "already exists",
}


def _refused(raw: str, where: str, error: OSError) -> ToolError:
    reason = _REASONS.get(error.errno or 0) or f"cannot be opened: {error.strerror or error}"
    at = "" if where in (raw.strip("/"), ".") else f" (at `{shown_path(where)}`)"
    kind = MissingError if error.errno == errno.ENOENT else ToolError
    return kind(f"`{shown_path(raw)}`{at} {reason}")


def _by_name(entry: Entry) -> str:
    return entry.name
