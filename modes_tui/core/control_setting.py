"""The control setting as a value: `auto`, `off`, or a mode name that forces every turn.

The value lives in the control file (`store.control.ControlFile`, one entry per pack); the
engine reads it before every turn through a `ControlSource` (`core/config/ports.py`), so
another process can change the mode. Each reading says where its setting comes from
(`source`): this pack's own entry, the file-wide setting (a file from before settings were
per pack), this run only (a piped REPL's `/mode`), or nothing set at all.

It sits at core's top level, not in `values/`, because the terminal UI draws it in its first
frame: this module imports only the standard library, where `values/` or `config/` would load
every value or every setting with it (4-5 ms of start-up, `bench/tui_startup.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

AUTO = "auto"
OFF = "off"

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
