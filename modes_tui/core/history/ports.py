"""Where the engine writes what happened: the session log (`store.session_log`), or a
list of records in tests."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from modes_tui.core.history.record_fields import RecordType

__all__ = ["SessionWriter"]


class SessionWriter(Protocol):
    """Where the engine writes what happened, one record at a time."""

    def record(self, type: RecordType, turn: int, **fields: Any) -> None:
        """Append one record; it is on disk (flushed) when this returns."""
        ...
