"""Unified diffs of a file change, safe to put on a terminal.

`unified_diff` is what the confirmation, the tool's result, replay and `/export` show.
File content is untrusted (a model wrote the new text; the old text may be anything), so
`visible` escapes what a terminal would obey (ESC, other controls, bidi overrides, hiding
invisible characters) as `\\x1b`-style text instead of removing it: the user sees that the
file would hold an escape sequence, and the terminal does not act on it. Registered secret
values are redacted like everywhere else (`core.terminal_text`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from modes_tui.core.terminal_text import terminal_safe

__all__ = ["DiffLine", "LineKind", "diff_lines", "diff_stats", "unified_diff", "visible"]

NO_NEWLINE = "\\ No newline at end of file"

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
    "\u200b\u2060-\u2064\ufeff\u180e\ufff9-\ufffb\U000e0000-\U000e007f]"
)
"""What `visible` escapes: the characters `terminal_safe` would remove (CR included)."""

LineKind = Literal["file", "hunk", "add", "remove", "context", "note"]


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a diff and what it is (for colouring)."""

    kind: LineKind
    """file (---/+++), hunk (@@), add (+), remove (-), context ( ), note (\\ ...)."""
    text: str
    """The line as shown, without its line break."""


def visible(text: str) -> str:
    """`text` with every character a terminal would act on written out (`\\x1b`, `\\u202e`)."""
    escaped = _UNSAFE.sub(_escape, text)
    return terminal_safe(escaped)  # secrets; joiners that only hide a boundary


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def unified_diff(path: str, before: str | None, after: str | None, *, context: int = 3) -> str:
    """The change of `path` from `before` to `after` (None: the file does not exist) as a
    unified diff, terminal-safe (`visible`); empty when nothing changes."""
    if before == after:
        return ""
    old = "/dev/null" if before is None else f"a/{path}"
    new = "/dev/null" if after is None else f"b/{path}"
    lines = difflib.unified_diff(
        _keep_lines(before or ""),
        _keep_lines(after or ""),
        old,
        new,
        n=context,
        lineterm="\n",
    )
    return "\n".join(visible(line) for line in _noted(lines))


def _keep_lines(text: str) -> list[str]:
    """Lines with their breaks; only `\\n` breaks a line (`str.splitlines` would also break
    at form feeds and other controls, which `visible` shows instead)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1].removesuffix("\n")
    return lines if lines[-1] else lines[:-1]


def _noted(lines: Iterator[str]) -> Iterator[str]:
    """Lines without their breaks; a last line that had none gets difflib's own note."""
    for index, line in enumerate(lines):
        if index < 2 or line.startswith("@@") or line.endswith("\n"):
            yield line.removesuffix("\n")
        else:
            yield line
            yield NO_NEWLINE


def diff_lines(diff: str) -> list[DiffLine]:
    """The lines of a unified diff, each with its kind."""
    found: list[DiffLine] = []
    for index, line in enumerate(diff.split("\n") if diff else ()):
        found.append(DiffLine("file" if index < 2 else _kind(line), line))
    return found


def _kind(line: str) -> LineKind:
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "remove"
    if line.startswith("\\"):
        return "note"
    return "context"


def diff_stats(diff: str) -> tuple[int, int]:
    """(lines added, lines removed) of a unified diff."""
    kinds = [line.kind for line in diff_lines(diff)]
    return kinds.count("add"), kinds.count("remove")
