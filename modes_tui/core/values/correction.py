"""Corrections: a user saying "this turn belonged to mode Y", as values the router learns from.

A correction fixes one routed turn. It is recorded with what the router saw (the message and
the routed history window) so that every backend can learn from it: the embedding backend
adds it to the corrected mode's examples, the chat and judge backends show the most similar
ones as labelled examples in the routing prompt's data section.

This module holds the value; routing owns the `CorrectionSource` protocol the classifiers
read through (`core.routing.ports`) and `MemoryCorrections` (`core.routing.corrections`), and
`modes_tui.store.corrections` persists them (append-only JSONL per pack).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from modes_tui.core.values.entry import HistoryEntry


def new_correction_id() -> str:
    """A short id that is unique enough for one pack's store (12 hex digits)."""
    return uuid.uuid4().hex[:12]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True, slots=True)
class Correction:
    """One routed turn the user corrected."""

    text: str
    """The routed message, as the classifier saw it."""
    corrected_mode: str
    """The mode the user says should have answered."""
    routed_mode: str | None = None
    """The mode the router picked (None: forced, off, or unknown)."""
    history: tuple[HistoryEntry, ...] = ()
    """The routed history window the classifier saw with the message."""
    pack: str = ""
    """The pack the turn was routed in."""
    classifier: str = ""
    """The classifier that routed the turn (`embedding`, `chat`, ...)."""
    encoder: str | None = None
    """The encoder behind an embedding classifier, if any."""
    created_at: str = field(default_factory=_now)
    """When the correction was made, UTC ISO 8601."""
    session_id: str | None = None
    """The session the turn belongs to (None for an evaluation)."""
    turn: int | None = None
    """The 1-based user turn in that session."""
    id: str = field(default_factory=new_correction_id)
    """Stable id, for `corrections remove ID`."""
    source: str = "user"
    """Who made it: `user` (picker, /wrong, force-and-resend) or `eval` (eval --learn)."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the store and for `--json` output."""
        return {
            "id": self.id,
            "text": self.text,
            "history": [entry.to_dict() for entry in self.history],
            "routed_mode": self.routed_mode,
            "corrected_mode": self.corrected_mode,
            "pack": self.pack,
            "classifier": self.classifier,
            "encoder": self.encoder,
            "created_at": self.created_at,
            "session_id": self.session_id,
            "turn": self.turn,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Correction:
        """The inverse of `to_dict`; raises `KeyError`/`TypeError`/`ValueError` on bad data."""
        text = data["text"]
        corrected = data["corrected_mode"]
        if not isinstance(text, str) or not isinstance(corrected, str) or not corrected:
            raise ValueError("a correction needs a text and a corrected_mode (strings)")
        history = tuple(
            HistoryEntry(entry.get("role"), str(entry.get("content", "")))
            for entry in data.get("history") or ()
            if isinstance(entry, Mapping)
        )
        turn = data.get("turn")
        return cls(
            text=text,
            corrected_mode=corrected,
            routed_mode=data.get("routed_mode"),
            history=history,
            pack=str(data.get("pack") or ""),
            classifier=str(data.get("classifier") or ""),
            encoder=data.get("encoder"),
            created_at=str(data.get("created_at") or ""),
            session_id=data.get("session_id"),
            turn=int(turn) if isinstance(turn, int) else None,
            id=str(data.get("id") or new_correction_id()),
            source=str(data.get("source") or "user"),
        )
