"""The control setting: `auto`, `off`, or a mode name that forces every turn, per pack.

The value lives in the control file (`store.control.ControlFile`); the engine reads it
before every turn through a `ControlSource` (`core/config/ports.py`), so another process can
change the mode.
Each reading says where its setting comes from (`source`): this pack's own entry, the
file-wide setting (a file from before settings were per pack), this run only (a piped REPL's
`/mode`), or nothing set at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

AUTO = "auto"
OFF = "off"

PACK_NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""A pack name: a folder's name (never a path) and a key of the control file."""
PACK_NAME_RULE = (
    "a pack name is a name, not a path: letters, digits, '_', '-' and '.', starting with a "
    "letter or a digit, at most 64 characters (e.g. default, support)"
)


def pack_name_problem(name: object) -> str | None:
    """Why `name` is not a pack name (`is empty`, `is a path`, ...), or None when it is one."""
    if not isinstance(name, str):
        return "is not text"
    if not name:
        return f"is empty; {PACK_NAME_RULE}"
    if name in (".", "..") or "/" in name or "\\" in name:
        return f"is a path; {PACK_NAME_RULE}"
    if not PACK_NAME_PATTERN.fullmatch(name):
        return f"is not a pack name; {PACK_NAME_RULE}"
    return None


Source = Literal["default", "pack", "file", "run"]
"""Where a setting comes from: nothing set, this pack's entry, the file-wide `mode`, this run."""

_WHERE: dict[str, str] = {
    "pack": "this pack",
    "file": "all packs",
    "run": "this run only",
    "default": "default",
}


@dataclass(frozen=True, slots=True)
class ControlReading:
    """What the control file says right now, for one pack."""

    mode: str
    """auto, off, or a mode name."""
    warning: str | None = None
    """Why the file was ignored (missing is not a warning; invalid is), if it was."""
    source: Source = "default"
    """Where the setting comes from (see `Source`); a warning's auto is `default`."""
    since: str | None = field(default=None, compare=False)
    """When the setting was made (ISO 8601, UTC), when the file says (files written before
    the time was kept, and `auto` by default, do not). Not compared: the same setting is the
    same setting whenever it was made."""

    @property
    def forced(self) -> str | None:
        """The forced mode name, or None for auto and off."""
        return None if self.mode in (AUTO, OFF) else self.mode

    @property
    def where(self) -> str:
        """`this pack`, `all packs`, `this run only` or `default`: for the header and the CLI."""
        return _WHERE[self.source]
