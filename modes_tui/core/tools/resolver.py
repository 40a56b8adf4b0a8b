"""Where a path really is: its real path under the working directory, walked by descriptor.

A policy decides on the file that is opened, not on the name that was written: `notes ->
.env`, `g -> .git` or `src/out -> ..` must be judged as `.env`, `.git/...` and the working
directory's top. `resolve` walks the path the way every file tool opens it
(`ConfinedRoot.open`: one component at a time under a folder descriptor, `O_NOFOLLOW`,
links read with `readlinkat` and followed only inside the working directory) and gives
the real path with the `fstat` of what it opened. A file that does not exist yet (a write
creates it) gets its nearest existing folder's real path plus the names still missing,
so `g/hooks/pre-commit` with `g -> .git` is `.git/hooks/pre-commit` before anything is
created. A link that leads out, a loop or a NUL raise the walk's own `ToolError`.

What the resolver says is only what the policy checks first (before anyone is asked);
the tools check again on the descriptor they read or write through (`access.check`), so
a swap after this look changes nothing.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass

from modes_tui.core.errors import ToolError
from modes_tui.core.tools.confined import ConfinedRoot, MissingError, shown_path

__all__ = ["Resolved", "given_path", "missing_real", "resolve"]

_LOOK = os.O_RDONLY | os.O_NONBLOCK


@dataclass(frozen=True, slots=True)
class Resolved:
    """A path as written and where it really is."""

    given: str
    """The path as written, normalised (`a/./b/../c` is `a/c`); `.` for the top."""
    real: str
    """Its real path under the working directory, links inside followed (`.` for the top)."""
    status: os.stat_result | None
    """fstat of what the walk opened; None when it does not exist (yet)."""

    @property
    def exists(self) -> bool:
        """Whether the path names something now."""
        return self.status is not None

    @property
    def through_link(self) -> bool:
        """Whether a link made the real path differ from the one written."""
        return self.given != self.real


def given_path(root: ConfinedRoot, raw: str) -> str:
    """`raw` as written, relative to the root and normalised (`.` for the top)."""
    parts = root.parts(raw)
    return posixpath.normpath("/".join(parts)) if parts else "."


def resolve(root: ConfinedRoot, raw: str) -> Resolved:
    """Where `raw` really is under `root`; ToolError when it cannot be inside it."""
    parts = root.parts(raw)
    given = posixpath.normpath("/".join(parts)) if parts else "."
    try:
        opened = root.open(raw, _LOOK)
    except MissingError:
        return Resolved(given, missing_real(root, raw, parts), None)
    os.close(opened.fd)
    return Resolved(given, opened.relative, opened.status)


def missing_real(root: ConfinedRoot, raw: str, parts: list[str]) -> str:
    """The real path of a file that does not exist yet: its nearest existing folder's real
    path plus the names still missing (ToolError for `..` after a missing name)."""
    if ".." in parts:
        raise ToolError(
            f"`{shown_path(raw)}` does not exist; to create it, give its path without `..`"
        )
    for depth in range(len(parts) - 1, -1, -1):
        try:
            folder = root.open("/".join(parts[:depth]) or ".", os.O_RDONLY | os.O_DIRECTORY)
        except MissingError:
            continue
        os.close(folder.fd)
        base = [] if folder.relative == "." else [folder.relative]
        return "/".join(base + parts[depth:])
    return "/".join(parts)
