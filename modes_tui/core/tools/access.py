"""The answering mode's file rules, applied to the file a tool actually opened.

`FileRules` is what a mode's `paths:` says (core.edits.policy builds it): which real paths
are denied, where it may write, and whether it may touch hard-linked files. `check` judges
one file by its REAL path under the working directory (links inside followed, see
`resolver.py`) and by the `fstat` of the descriptor a tool reads or writes through, so a
name swapped for a link after the policy looked cannot lead a read or a write elsewhere.

Hard links: a second name of a file is the same file; a link `notes.txt` to `.env` made
with `ln` is not a symbolic link the walk could see through. So a regular file with more
than one name (`st_nlink > 1`) is refused unless the mode allows hard-linked files
(`paths: {hard_links: allow}`: package stores such as pnpm's use them), and even then a
file that is the same one (st_dev, st_ino) as a path a deny rule names literally (`.env`,
`config/secrets.yml`) stays refused. Globs such as `**/*.pem` cannot be turned into files
without walking the tree, so only literal deny paths (no `*`, `?`, `[`) are compared.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field

from modes_tui.core.tools.confined import ConfinedRoot, shown_path

__all__ = ["HARD_LINKS_KEY", "FileRules", "Refusal", "check", "denied_refusal", "literal_globs"]

HARD_LINKS_KEY = "paths.hard_links"
"""The rule a refusal of a hard-linked file names."""


def _nothing(path: str) -> str | None:
    return None


@dataclass(frozen=True, slots=True)
class FileRules:
    """What a mode may read and write, as the file tools apply it."""

    denied: Callable[[str], str | None] = _nothing
    """Real path -> the `paths: deny:` glob that covers it, or None."""
    write_globs: tuple[str, ...] = ()
    """`paths: write:` (empty: anywhere in the working directory)."""
    writable: Callable[[str], bool] | None = None
    """Real path -> whether `paths: write:` covers it (None: anywhere)."""
    hard_links: bool = False
    """`paths: hard_links: allow`: hard-linked files may be read and written."""
    deny_literals: tuple[str, ...] = field(default=())
    """The deny globs that name one path (`.env`): a hard link to it stays refused."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a file may not be used, for the model and the session log."""

    source: str
    """The rule: `paths.deny`, `paths.write` or `paths.hard_links`."""
    reason: str
    """What the model reads."""


def denied_refusal(shown: str, glob: str, via: str = "") -> Refusal:
    """The refusal of a path `paths: deny:` covers (`shown` as messages show it)."""
    return Refusal(
        "paths.deny",
        f"`{shown}`{via} is off limits (paths.deny: {glob}); nobody may read or write it "
        "here. Do not retry it; work without it or ask the user",
    )


def literal_globs(globs: tuple[str, ...]) -> tuple[str, ...]:
    """The globs that name one path (no wildcard, no negation), without a trailing `/`."""
    return tuple(
        glob.strip().removeprefix("./").rstrip("/")
        for glob in globs
        if glob.strip() and not any(char in glob for char in "*?[!\\")
    )


def check(
    rules: FileRules,
    root: ConfinedRoot,
    real: str,
    status: os.stat_result | None,
    *,
    writing: bool,
    given: str | None = None,
) -> Refusal | None:
    """Why the file at `real` (with `status`, None when missing) may not be read (or
    written, `writing`) under `rules`; None when it may. `given`: the path as written,
    named in the message when a link made it differ."""
    shown = shown_path(real)
    via = ""
    if given is not None and given != real:
        via = f" (`{shown_path(given)}` leads there through a symbolic link)"
    glob = rules.denied(real)
    if glob is not None:
        return denied_refusal(shown, glob, via)
    if writing and rules.writable is not None and not rules.writable(real):
        return Refusal(
            "paths.write",
            f"this mode may write only {', '.join(rules.write_globs)} (paths.write); "
            f"`{shown}`{via} is not one of them. Do not retry it; say what you would change",
        )
    if status is None or not stat.S_ISREG(status.st_mode) or status.st_nlink < 2:
        return None
    return _hard_link(rules, root, shown, status, writing)


def _hard_link(
    rules: FileRules, root: ConfinedRoot, shown: str, status: os.stat_result, writing: bool
) -> Refusal | None:
    verb = "written" if writing else "read"
    if not rules.hard_links:
        return Refusal(
            HARD_LINKS_KEY,
            f"`{shown}` is a hard link (the same file has {status.st_nlink} names), so it may "
            f"be another name of a file this mode may not touch; it was not {verb}. A mode "
            "that works with hard-linked files (package stores such as pnpm's use them) "
            "allows them with `paths: {hard_links: allow}` in its profile",
        )
    for literal in rules.deny_literals:
        if _same_file(root, literal, status):
            return Refusal(
                "paths.deny",
                f"`{shown}` is the same file as `{shown_path(literal)}` (a hard link), which "
                f"is off limits (paths.deny: {literal}); it was not {verb}. Do not retry it",
            )
    return None


def _same_file(root: ConfinedRoot, literal: str, status: os.stat_result) -> bool:
    """Whether the literal deny path names the file `status` describes (links followed:
    a denied name that is itself a link denies its target too)."""
    try:
        other = os.stat(literal, dir_fd=root.fd)
    except (OSError, ValueError):
        return False
    return (other.st_dev, other.st_ino) == (status.st_dev, status.st_ino)
