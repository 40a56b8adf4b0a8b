"""One line of history as a classifier sees it (`HistoryEntry`): a role and a text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One line of history as a classifier sees it."""

    role: str | None
    """user, assistant, or None for a plain string."""
    content: str
    """The text, possibly cut."""

    def to_dict(self) -> dict[str, Any]:
        """`{"role": ..., "content": ...}`."""
        return {"role": self.role, "content": self.content}
