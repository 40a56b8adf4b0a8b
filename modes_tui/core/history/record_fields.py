"""What every session record shares: the schema version, the shape on disk, and reading a
stored record's fields with errors that name the record type and the field.

`core.history.records` defines the record types over these; nothing here knows a particular
record type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from modes_tui.core.errors import RecordError, cut_repr
from modes_tui.core.history.compaction import ContextReport
from modes_tui.core.history.events import ToolOutcome

RecordType = Literal[
    "meta",
    "user",
    "route",
    "request",
    "assistant",
    "tool_result",
    "checkpoint",
    "ui_event",
    "summary",
]
"""The kinds of session record, as a writer takes them (`SessionWriter.record`)."""

__all__ = [
    "RESERVED_FIELDS",
    "SCHEMA_VERSION",
    "OnDisk",
    "at_of",
    "context_of",
    "inner",
    "mapping_of",
    "number_of",
    "outcome_of",
    "strings_of",
    "turn_of",
    "wrong",
]

SCHEMA_VERSION = 1

RESERVED_FIELDS = frozenset({"v", "type", "at", "turn"})
"""Set by the writer on every record; a record's own fields never use these names."""


class OnDisk:
    """What every record shares: its JSON object is v, type, at, turn, then its own fields."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON object on disk."""
        record: Any = self  # every record type has kind, at, turn and fields()
        return {
            "v": SCHEMA_VERSION,
            "type": record.kind,
            "at": record.at,
            "turn": record.turn,
            **record.fields(),
        }


def turn_of(data: Mapping[str, Any], kind: str) -> int:
    turn = data.get("turn", 0)
    if isinstance(turn, bool) or not isinstance(turn, int):
        raise wrong(kind, "turn", "a whole number", turn)
    return turn


def at_of(data: Mapping[str, Any]) -> str:
    at = data.get("at")
    return at if isinstance(at, str) else ""


def mapping_of(data: Mapping[str, Any], kind: str, name: str) -> Mapping[str, Any]:
    if name not in data:
        raise RecordError(kind, name, "is missing")
    value = data[name]
    if not isinstance(value, Mapping):
        raise wrong(kind, name, "an object", value)
    return value


def context_of(data: Mapping[str, Any]) -> ContextReport | None:
    raw = data.get("context")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise wrong("request", "context", "an object", raw)
    try:
        return ContextReport.from_dict(raw)
    except (KeyError, TypeError, ValueError) as error:
        raise RecordError("request", "context", inner(error)) from error


def strings_of(data: Mapping[str, Any], kind: str, name: str) -> tuple[str, ...]:
    value = data.get(name) or ()
    if isinstance(value, str | Mapping) or not hasattr(value, "__iter__"):
        raise wrong(kind, name, "a list of strings", value)
    return tuple(map(str, value))


def number_of(data: Mapping[str, Any], kind: str, name: str, default: float) -> float:
    value = data.get(name) or default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise wrong(kind, name, "a number", value)
    return value


def outcome_of(data: Mapping[str, Any]) -> ToolOutcome:
    value = data.get("outcome") or "ok"
    for known in get_args(ToolOutcome):
        if value == known:
            outcome: ToolOutcome = known
            return outcome
    raise wrong("tool_result", "outcome", f"one of {', '.join(get_args(ToolOutcome))}", value)


def inner(error: Exception) -> str:
    """What a nested value (a route, a message, a call) lacks or gets wrong."""
    if isinstance(error, KeyError):
        return f"lacks {error}"
    return f"is not valid ({type(error).__name__}: {error})"


def wrong(kind: str, name: str, expected: str, value: Any) -> RecordError:
    shown = cut_repr(value)
    return RecordError(kind, name, f"must be {expected}, not {type(value).__name__} {shown}")
