"""Which files search_files reads, each opened confined and judged by the mode's rules.

A search over a folder walks it by descriptor (`ConfinedRoot.entries`), skipping the
version-control and cache folders and what the .gitignore files ignore (`ignores.py`),
then opens each candidate under the working directory's descriptor and judges the file it
opened at its real path: a file the mode's `paths: deny:` covers, or a hard-linked file it
may not use (`access.py`), is skipped (and the hard-linked ones are counted, so the answer
can say that they were not searched); binary, special and oversized files are skipped too.
A file named as the search's path is searched whatever .gitignore says, and refused with
a message when it cannot be (too large, binary, denied, hard-linked).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from dataclasses import dataclass

from modes_tui.core.errors import ToolError
from modes_tui.core.tools.access import HARD_LINKS_KEY, FileRules, check
from modes_tui.core.tools.confined import ConfinedRoot, Opened, shown_path
from modes_tui.core.tools.ignores import Ignores
from modes_tui.core.tools.regex_search import RegexSearch

__all__ = ["Fed", "SearchLimits", "feed", "looks_binary", "size_text"]

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK


def looks_binary(head: bytes) -> bool:
    """Whether the first bytes of a file say it is not text (a NUL)."""
    return b"\0" in head


def size_text(size_bytes: int) -> str:
    """`1.5 KB`, `12 B`: a size for people."""
    size = float(size_bytes)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


@dataclass(frozen=True, slots=True)
class SearchLimits:
    """What a search may read, and the rules it reads by."""

    max_files: int
    """Files looked at, at most."""
    max_bytes: int
    """Larger files are skipped."""
    rules: FileRules
    """The answering mode's `paths:` rules."""
    skip: frozenset[str]
    """Folder names never entered (.git, node_modules, ...)."""


@dataclass(frozen=True, slots=True)
class Fed:
    """How feeding a search went."""

    stopped: bool
    """The cap on files stopped it: the rest was not searched."""
    hard_linked: int = 0
    """Hard-linked files skipped because the mode may not use them."""


def feed(
    root: ConfinedRoot, folder: Opened, search: RegexSearch, glob: str | None, limits: SearchLimits
) -> Fed:
    """Send every searchable file under `folder` to `search`."""
    if folder.is_regular:
        _check_named_file(root, folder, limits)
        candidates: Iterator[str] = iter([folder.relative])
    elif folder.is_dir:
        only = Ignores.above(root, folder.relative)
        candidates = (
            _under(folder, entry.relative)
            for entry in root.entries(folder, recursive=True, skip=limits.skip, only=only)
            if entry.kind in ("file", "link")
        )
    else:
        raise ToolError(f"`{folder.relative}` is neither a directory nor a regular file")
    scanned = 0
    hard_linked = 0
    for relative in candidates:
        if glob and not fnmatch.fnmatch(relative.rsplit("/", 1)[-1], glob):
            continue
        # counted before it is opened: a binary or oversized file costs an open and a read
        scanned += 1
        if scanned > limits.max_files:
            return Fed(True, hard_linked)
        data, refused = _searchable(root, relative, limits)
        hard_linked += refused == HARD_LINKS_KEY
        if data is None:
            continue
        if not search.add(relative, data):
            break  # full or out of time
    return Fed(False, hard_linked)


def _under(folder: Opened, relative: str) -> str:
    """An entry's path under the root (opening it re-checks it from the root)."""
    return relative if folder.relative == "." else f"{folder.relative}/{relative}"


def _check_named_file(root: ConfinedRoot, opened: Opened, limits: SearchLimits) -> None:
    """ToolError when a file named as the search's path would be skipped: "no matches"
    would say the text is not in it, yet it was never looked at."""
    refusal = check(limits.rules, root, opened.relative, opened.status, writing=False)
    if refusal is not None:
        raise ToolError(refusal.reason)
    size = opened.status.st_size
    shown = shown_path(opened.relative)
    if size > limits.max_bytes:
        raise ToolError(
            f"`{shown}` is {size_text(size)}; search_files looks in files up to "
            f"{size_text(limits.max_bytes)}: read it in parts with read_file (start_line, "
            "end_line)"
        )
    head = os.pread(opened.fd, 8192, 0)
    if looks_binary(head):
        raise ToolError(f"`{shown}` is a binary file; search_files looks in text files only")


def _searchable(
    root: ConfinedRoot, relative: str, limits: SearchLimits
) -> tuple[bytes | None, str | None]:
    """(the content of a regular text file of at most `max_bytes` the rules let the mode
    read, else None: skipped; the rule that refused it, if one did)."""
    if limits.rules.denied(relative) is not None:
        return None, "paths.deny"  # the name itself is denied, wherever it leads
    try:
        opened = root.open(relative, _READ_FLAGS)
    except ToolError:
        return None, None  # gone, a link out, a loop: not searched
    try:
        # judged on the descriptor: a link into a denied place is its real path there
        refusal = check(limits.rules, root, opened.relative, opened.status, writing=False)
        if refusal is not None:
            return None, refusal.source
        if not opened.is_regular or opened.status.st_size > limits.max_bytes:
            return None, None
        with os.fdopen(os.dup(opened.fd), "rb") as handle:
            data = handle.read(limits.max_bytes + 1)
    finally:
        os.close(opened.fd)
    if len(data) > limits.max_bytes or looks_binary(data[:8192]):
        return None, None
    return data, None
