"""The control setting: `auto`, `off`, or a mode name that forces every turn.

The value lives in the control file (`store.control.ControlFile`); the engine reads it
before every turn through a `core.ports.ControlSource`, so another process can change the mode.
"""

from __future__ import annotations

from dataclasses import dataclass

AUTO = "auto"
OFF = "off"


@dataclass(frozen=True, slots=True)
class ControlReading:
    """What the control file says right now."""

    mode: str
    """auto, off, or a mode name."""
    warning: str | None = None
    """Why the file was ignored (missing is not a warning; invalid is), if it was."""

    @property
    def forced(self) -> str | None:
        """The forced mode name, or None for auto and off."""
        return None if self.mode in (AUTO, OFF) else self.mode
