"""What the core needs to read the control setting: the store's control file, or a
fixed reading in tests (the value itself is `core.control_setting.ControlReading`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from modes_tui.core.control_setting import ControlReading

__all__ = ["ControlSource"]


class ControlSource(Protocol):
    """Anything that can say what the control setting is."""

    def read(self) -> ControlReading:
        """The setting now; never raises for a missing or invalid file."""
        ...
