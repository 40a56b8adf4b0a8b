""".gitignore files, as search_files and list_files honour them (like ripgrep does).

A walk skips what the working directory's `.gitignore` files ignore: the ones in the
folders above where it starts (up to the working directory) and every nested one it meets
on the way down, each matched against paths relative to its own folder, with git's rules
(`pathspec`'s gitignore patterns: `build/`, `*.log`, `!keep.log`, `/top-only`). The
deepest file that has a say about a path decides, as in git; an ignored folder is not
entered. What the model names itself is still listed or searched: a file named as the
path is searched whatever ignores it, and a folder named as the path is walked with the
.gitignore files at and below it only when the ones above ignore the folder itself (it
asked for that folder).

The files are read by descriptor under the folder the walk holds open (`O_NOFOLLOW`,
regular files only, at most `MAX_IGNORE_BYTES`): a link named `.gitignore` is not read.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from pathspec import PathSpec

from modes_tui.core.tools.confined import ConfinedRoot, Entry

__all__ = ["MAX_IGNORE_BYTES", "Ignores"]

MAX_IGNORE_BYTES = 256 * 1024
"""A larger .gitignore is not read (no real one is that long)."""

_FILE = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True, slots=True)
class _Level:
    """One .gitignore: the folder it is in (relative to the walk's start) and its rules."""

    base: str
    """The folder's path relative to where the walk started, `` for the start; for a
    folder above the start, the start's path relative to it (`up`)."""
    spec: PathSpec
    """Its patterns."""
    up: str = ""
    """For a .gitignore above the start: the start folder's path relative to it."""

    def decides(self, relative: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included (`!`); None: no pattern names it."""
        if self.up:
            path = f"{self.up}/{relative}"
        elif self.base:
            path = relative.removeprefix(self.base + "/")
        else:
            path = relative
        result = self.spec.check_file(path + "/" if is_dir else path)
        return result.include


@dataclass(frozen=True, slots=True)
class Ignores:
    """The .gitignore files that apply where a walk is; `enter` adds a folder's own."""

    levels: tuple[_Level, ...] = ()
    """Outermost first."""

    @classmethod
    def above(cls, root: ConfinedRoot, start: str) -> Ignores:
        """The .gitignore files of the working directory and the folders down to `start`
        (its real path under the root); dropped when they ignore `start` itself."""
        parts = [] if start == "." else start.split("/")
        levels: list[_Level] = []
        fd = os.dup(root.fd)
        try:
            for depth in range(len(parts)):
                spec = _read(fd)
                if spec is not None:
                    levels.append(_Level("", spec, "/".join(parts[depth:])))
                child = os.open(parts[depth], _DIR, dir_fd=fd)
                os.close(fd)
                fd = child
        except OSError:
            return cls()
        finally:
            os.close(fd)
        found = cls(tuple(levels))
        if parts and found.ignores_start():
            return cls()  # named by the model: walked with its own .gitignore files only
        return found

    def ignores_start(self) -> bool:
        """Whether the levels above ignore the folder the walk starts in."""
        for level in reversed(self.levels):
            verdict = level.spec.check_file(level.up + "/").include
            if verdict is not None:
                return verdict
        return False

    def enter(self, fd: int, prefix: str) -> Ignores:
        """These rules plus the .gitignore of the folder open as `fd` (`prefix`: its path
        relative to the start, ending in `/`, or `` for the start)."""
        spec = _read(fd)
        if spec is None:
            return self
        return Ignores((*self.levels, _Level(prefix.rstrip("/"), spec)))

    def keeps(self, entry: Entry) -> bool:
        """Whether a walk lists (and enters) `entry`."""
        is_dir = entry.kind == "dir"
        for level in reversed(self.levels):
            verdict = level.decides(entry.relative, is_dir)
            if verdict is not None:
                return not verdict
        return True


def _read(fd: int) -> PathSpec | None:
    """The patterns of the `.gitignore` in the folder open as `fd`, or None."""
    try:
        handle = os.open(".gitignore", _FILE, dir_fd=fd)
    except OSError:
        return None
    try:
        status = os.fstat(handle)
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_IGNORE_BYTES:
            return None
        data = os.read(handle, MAX_IGNORE_BYTES)
    except OSError:
        return None
    finally:
        os.close(handle)
    lines = data.decode("utf-8", "replace").splitlines()
    spec = PathSpec.from_lines("gitignore", lines)
    return spec if len(spec) else None
