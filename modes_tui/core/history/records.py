"""What a session log holds: record types, their fields, and the schema version.

Each record type is a frozen dataclass (`SessionRecord` is their closed union) with
`to_dict()` (exactly the JSON object on disk) and `from_dict()` (raises `RecordError`
naming the field). The engine writes them (`write_record`) through a `SessionWriter`;
`modes_tui.store.sessions` is the real one (append-only JSONL), tests may use a list.
Readers (replay, resume) turn stored objects back with `parse_record`, which returns None
for a type this version does not know (a newer modes-tui wrote it: skipped, not an error)
and ignores fields it does not know, so old apps read new logs as far as they can. Every record is a JSON object with
`v` (schema version), `type`, `at` (UTC ISO 8601) and `turn` (1-based user turn; 0 for meta).

| type        | fields besides v, type, at, turn                                         |
|-------------|--------------------------------------------------------------------------|
| meta        | id, created, pack, cwd, app_version, model, title; a fork's parent        |
|             | {id, turn}. A later meta record updates these (a rename: title,          |
|             | title_source "user")                                                     |
| user        | content                                                                  |
| route       | route (Route.to_dict()), setting (auto/off/mode), warnings               |
| request     | request (ModelRequest.to_dict(), secrets redacted), mode, round, notes,  |
|             | fallback {from, kind, error} (when a fallback model took over), role     |
|             | (the role that gave the model: fast, strong; when one did)               |
| assistant   | message (Message.to_dict()), usage {prompt_tokens, completion_tokens,   |
|             | cost}, error (str, when the turn failed), cost (the turn's ledger entry: |
|             | models, tokens, cost, baseline_cost, baseline_model; also on a cancel);  |
|             | a checkpoint: partial; later ones continues (AssistantRecord.continues)  |
| tool_result | call (ToolCall.to_dict()), outcome, result, duration_ms                  |
| checkpoint  | path, before (the file's text, null: it did not exist), after_sha256,    |
|             | diff, tool, call_id: written before a tool changes a file (`/undo`)     |
| ui_event    | event (forced_mode, cancel, clear, retry, resumed, forked, ...), plus    |
|             | its own fields; `correction`: of (turn), answered_mode, corrected_mode,  |
|             | rerun, correction (Correction.to_dict() or null), note;                  |
|             | `correction_undone`: id; `policy`: call_id, tool, permission, source,   |
|             | reason, asked, answer; `undo`: turns, restored, removed, kept, failed    |
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast, get_args

from modes_tui.core.edits.checkpoints import CheckpointRecord
from modes_tui.core.errors import RecordError, cut_repr
from modes_tui.core.history.conversation import Message, ToolCall
from modes_tui.core.history.events import ToolOutcome
from modes_tui.core.routing.router import Route

if TYPE_CHECKING:
    from modes_tui.core.history.ports import SessionWriter

SCHEMA_VERSION = 1

RecordType = Literal[
    "meta", "user", "route", "request", "assistant", "tool_result", "checkpoint", "ui_event"
]
RECORD_TYPES: tuple[RecordType, ...] = get_args(RecordType)
RESERVED_FIELDS = frozenset({"v", "type", "at", "turn"})
"""Set by the writer on every record; a record's own fields never use these names."""

__all__ = [
    "RECORD_TYPES",
    "SCHEMA_VERSION",
    "AssistantRecord",
    "CheckpointRecord",
    "MetaRecord",
    "RecordType",
    "RequestRecord",
    "RouteRecord",
    "SessionRecord",
    "ToolResultRecord",
    "UiEventRecord",
    "UserRecord",
    "parse_record",
    "write_record",
]


# --------------------------------------------------------------------------- records


class _OnDisk:
    """What every record shares: its JSON object is v, type, at, turn, then its own fields."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON object on disk."""
        record = cast("SessionRecord", self)
        return {
            "v": SCHEMA_VERSION,
            "type": record.kind,
            "at": record.at,
            "turn": record.turn,
            **record.fields(),
        }


@dataclass(frozen=True, slots=True)
class MetaRecord(_OnDisk):
    """The session's facts (first line); a later one updates them (a rename, a resume)."""

    details: Mapping[str, Any]
    """id, created, pack, cwd, app_version, model, title, title_source, parent, ..."""
    turn: int = 0
    """Always 0: meta belongs to no turn."""
    at: str = ""
    """When it was written (UTC ISO 8601; set by the writer)."""
    kind: ClassVar[Literal["meta"]] = "meta"
    """The record type."""

    def fields(self) -> dict[str, Any]:
        """The record's own fields, as written after v, type, at and turn."""
        return dict(self.details)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetaRecord:
        """A stored meta object; raises RecordError naming a bad field."""
        details = {k: v for k, v in data.items() if k not in RESERVED_FIELDS}
        return cls(details, _turn(data, "meta"), _at(data))


@dataclass(frozen=True, slots=True)
class UserRecord(_OnDisk):
    """What the user typed; it opens turn `turn`."""

    turn: int
    """The turn it opens (1-based)."""
    content: str
    """The message as typed."""
    at: str = ""
    """When it was written (UTC ISO 8601; set by the writer)."""
    kind: ClassVar[Literal["user"]] = "user"
    """The record type."""

    def fields(self) -> dict[str, Any]:
        """The record's own fields, as written after v, type, at and turn."""
        return {"content": self.content}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UserRecord:
        """A stored user object; raises RecordError naming a bad field."""
        return cls(_turn(data, "user"), str(data.get("content") or ""), _at(data))


@dataclass(frozen=True, slots=True)
class RouteRecord(_OnDisk):
    """Which mode took the turn, and why."""

    turn: int
    """The turn routed."""
    route: Route | None
    """The router's decision (None only in a damaged log)."""
    setting: str
    """The control setting then: auto, off, or a forced mode."""
    warnings: tuple[str, ...] = ()
    """What the user was warned about while routing (a bad control file, ...)."""
    at: str = ""
    """When it was written (UTC ISO 8601; set by the writer)."""
    kind: ClassVar[Literal["route"]] = "route"
    """The record type."""

    def fields(self) -> dict[str, Any]:
        """The record's own fields, as written after v, type, at and turn."""
        route = self.route.to_dict() if self.route is not None else None
        return {"route": route, "setting": self.setting, "warnings": list(self.warnings)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RouteRecord:
        """A stored route object; raises RecordError naming a bad field."""
        raw = data.get("route")
        if raw and not isinstance(raw, Mapping):
            raise _wrong("route", "route", "an object", raw)
        try:
            route = Route.from_dict(raw) if raw else None
        except (KeyError, TypeError, ValueError) as error:
            raise RecordError("route", "route", _inner(error)) from error
        return cls(
            _turn(data, "route"),
            route,
            str(data.get("setting") or "auto"),
            _strings(data, "route", "warnings"),
            _at(data),
        )


@dataclass(frozen=True, slots=True)
class RequestRecord(_OnDisk):
    """What was sent to a model for one round of the turn."""

    turn: int
    """The turn it belongs to."""
    request: Mapping[str, Any]
    """ModelRequest.to_dict(); the writer redacts secrets in it."""
    mode: str | None
    """The mode that answers (None: no mode, the `off` setting)."""
    round: int = 1
    """Which model call of the turn (1-based)."""
    notes: tuple[str, ...] = ()
    """What the mode could not have here (thinking n/a, tools n/a, a fallback model)."""
    fallback: Mapping[str, Any] | None = None
    """{from, kind, error} when a fallback model took over from a failed one."""
    at: str = ""
    """When it was written (UTC ISO 8601; set by the writer)."""
    role: str | None = None
    """The role (`fast`, `strong`) that gave the request's model; None for a plain name."""
    kind: ClassVar[Literal["request"]] = "request"
    """The record type."""

    def fields(self) -> dict[str, Any]:
        """The record's own fields, as written after v, type, at and turn."""
        written: dict[str, Any] = {
            "request": self.request,
            "mode": self.mode,
            "round": self.round,
            "notes": list(self.notes),
        }
        if self.fallback is not None:
            written["fallback"] = self.fallback
        if self.role is not None:
            written["role"] = self.role
        return written

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RequestRecord:
        """A stored request object; raises RecordError naming a bad field."""
        fallback = data.get("fallback")
        mode = data.get("mode")
        return cls(
            _turn(data, "request"),
            _mapping(data, "request", "request"),
            None if mode is None else str(mode),
            int(_number(data, "request", "round", 1)),
            _strings(data, "request", "notes"),
            fallback if isinstance(fallback, Mapping) else None,
            _at(data),
            data["role"] if isinstance(data.get("role"), str) else None,
        )


@dataclass(frozen=True, slots=True)
class AssistantRecord(_OnDisk):
    """A model's answer: a round that asked for tools, a checkpoint, or the turn's end."""

    turn: int
    """The turn it answers."""
    message: Message
    """The answer as stored in the history (mode, model, thinking, tool calls)."""
    usage: Mapping[str, Any] | None = None
    """This call's {prompt_tokens, completion_tokens, cost}, when the model reported it."""
    closes_turn: bool = False
    """The turn ends here (answered or failed): `turn_usage` and `cost` are written."""
    turn_usage: Mapping[str, Any] | None = None
    """The whole turn's tokens, cost and number of calls (when `closes_turn`)."""
    cost: Mapping[str, Any] | None = None
    """The turn's cost ledger entry (when `closes_turn`; None: nothing priced)."""
    partial: bool = False
    """A checkpoint of a streaming answer; a later assistant record of the turn replaces it."""
    continues: Mapping[str, int] | None = None
    """A later checkpoint of its round: the message holds what came after `content` (and
    `reasoning`) characters; loading (`store.session_reader`) joins it to the ones before."""
    error: str | None = None
    """Why the turn failed, when it did."""
    failure_kind: str = "unknown"
    """What kind of failure (`kind` on disk): auth, budget, round_limit, internal, ..."""
    hint: str = ""
    """What the user can do about the failure."""
    retryable: bool = True
    """Retrying the failed turn may work."""
    at: str = ""
    """When it was written (UTC ISO 8601; set by the writer)."""
    kind: ClassVar[Literal["assistant"]] = "assistant"
    """The record type."""

    def fields(self) -> dict[str, Any]:
        """The record's own fields, as written after v, type, at and turn."""
        written: dict[str, Any] = {"message": self.message.to_dict(), "usage": self.usage}
        if self.closes_turn:
            written["turn_usage"] = self.turn_usage
            written["cost"] = self.cost
        if self.partial:
            written["partial"] = True
        if self.continues is not None:
            written["continues"] = dict(self.continues)
        if self.error is not None:
            written["error"] = self.error
            written["kind"] = self.failure_kind
            written["hint"] = self.hint
            written["retryable"] = self.retryable
        return written

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AssistantRecord:
        """A stored assistant object; raises RecordError naming a bad field."""
        raw = _mapping(data, "assistant", "message")
        try:
            message = Message.from_dict(raw)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise RecordError("assistant", "message", _inner(error)) from error
        usage, turn_usage, cost = data.get("usage"), data.get("turn_usage"), data.get("cost")
        error_text, continues = data.get("error"), data.get("continues")
        return cls(
            turn=_turn(data, "assistant"),
            message=message,
            usage=usage if isinstance(usage, Mapping) else None,
            closes_turn="turn_usage" in data or "cost" in data,
            turn_usage=turn_usage if isinstance(turn_usage, Mapping) else None,
            cost=cost if isinstance(cost, Mapping) else None,
            partial=bool(data.get("partial")),
            continues=continues if isinstance(continues, Mapping) else None,
            error=str(error_text) if error_text else None,
            failure_kind=str(data.get("kind") or "unknown"),
            hint=str(data.get("hint") or ""),
            retryable=bool(data.get("retryable", True)),
            at=_at(data),
        )


@dataclass(frozen=True, slots=True)
class ToolResultRecord(_OnDisk):
    """What one tool call returned to the model, and how it went."""

    turn: int
    """The turn it belongs to."""
    call: ToolCall
    """The call the model made."""
    outcome: ToolOutcome
    """ok, error, blocked, cancelled or answered (a guard answered for the tool)."""
    result: str
    """What the model read back."""
    duration_ms: float = 0.0
    """How long the tool ran."""
    at: str = ""
    """When it was written (UTC ISO 8601; set by the writer)."""
    kind: ClassVar[Literal["tool_result"]] = "tool_result"
    """The record type."""

    def fields(self) -> dict[str, Any]:
        """The record's own fields, as written after v, type, at and turn."""
        return {
            "call": self.call.to_dict(),
            "outcome": self.outcome,
            "result": self.result,
            "duration_ms": self.duration_ms,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolResultRecord:
        """A stored tool_result object; raises RecordError naming a bad field."""
        raw = _mapping(data, "tool_result", "call")
        try:
            call = ToolCall.from_dict(raw)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise RecordError("tool_result", "call", _inner(error)) from error
        result = data.get("result")
        # early logs kept a tool's JSON value as is; the model read it as JSON text
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        return cls(
            _turn(data, "tool_result"),
            call,
            _outcome(data),
            text,
            float(_number(data, "tool_result", "duration_ms", 0.0)),
            _at(data),
        )


@dataclass(frozen=True, slots=True)
class UiEventRecord(_OnDisk):
    """Something the user or the app did around the turns: clear, retry, cancel, correction.

    `event` names it; `details` are its own fields (a cancel: partial, turn_usage, cost,
    reason; a correction: of, answered_mode, corrected_mode, rerun, correction, note;
    supersede: superseded; correction_undone: id, of; resumed/forked: their sources).
    """

    turn: int
    """The turn it happened in (0: before any)."""
    event: str
    """What happened."""
    details: Mapping[str, Any] = field(default_factory=dict)
    """The event's own fields, in the order written."""
    at: str = ""
    """When it was written (UTC ISO 8601; set by the writer)."""
    kind: ClassVar[Literal["ui_event"]] = "ui_event"
    """The record type."""

    def fields(self) -> dict[str, Any]:
        """The record's own fields, as written after v, type, at and turn."""
        return {"event": self.event, **self.details}

    def get(self, name: str, default: Any = None) -> Any:
        """One of the event's own fields."""
        return self.details.get(name, default)

    @property
    def reruns(self) -> bool:
        """The turn is answered again after this (a retry, or a correction with a re-run)."""
        return self.event == "retry" or (self.event == "correction" and bool(self.get("rerun")))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> UiEventRecord:
        """A stored ui_event object; raises RecordError naming a bad field."""
        details = {k: v for k, v in data.items() if k not in RESERVED_FIELDS and k != "event"}
        return cls(_turn(data, "ui_event"), str(data.get("event") or ""), details, _at(data))


SessionRecord = (
    MetaRecord
    | UserRecord
    | RouteRecord
    | RequestRecord
    | AssistantRecord
    | ToolResultRecord
    | CheckpointRecord
    | UiEventRecord
)
"""Every record a session log holds (closed: a new type is a new schema entry here)."""

_BY_TYPE: dict[str, Any] = {record.kind: record for record in get_args(SessionRecord)}


def parse_record(data: Mapping[str, Any]) -> SessionRecord | None:
    """A stored object as its record; None for a type this version does not know.

    Raises RecordError (a ValueError) naming the field that a known type cannot do without.
    """
    kind = data.get("type")
    parser = _BY_TYPE.get(kind) if isinstance(kind, str) else None
    if parser is None:
        return None
    record: SessionRecord = parser.from_dict(data)
    return record


def write_record(writer: SessionWriter, record: SessionRecord) -> None:
    """Hand `record` to `writer`, which adds v, type, at (now) and turn."""
    writer.record(record.kind, record.turn, **record.fields())


# --------------------------------------------------------------------------- reading


def _turn(data: Mapping[str, Any], kind: str) -> int:
    turn = data.get("turn", 0)
    if isinstance(turn, bool) or not isinstance(turn, int):
        raise _wrong(kind, "turn", "a whole number", turn)
    return turn


def _at(data: Mapping[str, Any]) -> str:
    at = data.get("at")
    return at if isinstance(at, str) else ""


def _mapping(data: Mapping[str, Any], kind: str, name: str) -> Mapping[str, Any]:
    if name not in data:
        raise RecordError(kind, name, "is missing")
    value = data[name]
    if not isinstance(value, Mapping):
        raise _wrong(kind, name, "an object", value)
    return value


def _strings(data: Mapping[str, Any], kind: str, name: str) -> tuple[str, ...]:
    value = data.get(name) or ()
    if isinstance(value, str | Mapping) or not hasattr(value, "__iter__"):
        raise _wrong(kind, name, "a list of strings", value)
    return tuple(map(str, value))


def _number(data: Mapping[str, Any], kind: str, name: str, default: float) -> float:
    value = data.get(name) or default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _wrong(kind, name, "a number", value)
    return value


def _outcome(data: Mapping[str, Any]) -> ToolOutcome:
    value = data.get("outcome") or "ok"
    for known in get_args(ToolOutcome):
        if value == known:
            outcome: ToolOutcome = known
            return outcome
    raise _wrong("tool_result", "outcome", f"one of {', '.join(get_args(ToolOutcome))}", value)


def _inner(error: Exception) -> str:
    """What a nested value (a route, a message, a call) lacks or gets wrong."""
    if isinstance(error, KeyError):
        return f"lacks {error}"
    return f"is not valid ({type(error).__name__}: {error})"


def _wrong(kind: str, name: str, expected: str, value: Any) -> RecordError:
    shown = cut_repr(value)
    return RecordError(kind, name, f"must be {expected}, not {type(value).__name__} {shown}")
