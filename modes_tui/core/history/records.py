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
|             | fallback {from, kind, error} (when a fallback model took over), context  |
|             | (ContextReport.to_dict(), when the model's window is known)              |
| assistant   | message (Message.to_dict()), usage {prompt_tokens, completion_tokens,   |
|             | cost}, error (str, when the turn failed), cost (the turn's ledger entry: |
|             | models, tokens, cost, baseline_cost, baseline_model; also on a cancel);  |
|             | a checkpoint: partial; later ones continues (AssistantRecord.continues)  |
| tool_result | call (ToolCall.to_dict()), outcome, result, duration_ms                  |
| checkpoint  | path, before (the file's text, null: it did not exist), after_sha256,    |
|             | diff, tool, call_id: written before a tool changes a file (`/undo`)     |
| summary     | summary, upto (messages it stands for), turns, model (None: no model     |
|             | wrote it), trigger (auto, command, context_error), tokens_before,        |
|             | tokens_after, note, usage (Compaction.to_dict() plus usage)               |
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
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

from modes_tui.core.edits.checkpoints import CheckpointRecord
from modes_tui.core.errors import RecordError
from modes_tui.core.history.compaction import Compaction, ContextReport
from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import ToolOutcome
from modes_tui.core.history.record_fields import (
    RESERVED_FIELDS,
    SCHEMA_VERSION,
    OnDisk,
    RecordType,
    at_of,
    context_of,
    inner,
    mapping_of,
    number_of,
    outcome_of,
    strings_of,
    turn_of,
    wrong,
)
from modes_tui.core.model.wire import ToolCall
from modes_tui.core.values.route import Route

if TYPE_CHECKING:
    from modes_tui.core.history.ports import SessionWriter

RECORD_TYPES: tuple[RecordType, ...] = get_args(RecordType)

__all__ = [
    "RECORD_TYPES",
    "RESERVED_FIELDS",
    "SCHEMA_VERSION",
    "AssistantRecord",
    "CheckpointRecord",
    "MetaRecord",
    "RecordType",
    "RequestRecord",
    "RouteRecord",
    "SessionRecord",
    "SummaryRecord",
    "ToolResultRecord",
    "UiEventRecord",
    "UserRecord",
    "parse_record",
    "write_record",
]


# --------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class MetaRecord(OnDisk):
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
        return cls(details, turn_of(data, "meta"), at_of(data))


@dataclass(frozen=True, slots=True)
class UserRecord(OnDisk):
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
        return cls(turn_of(data, "user"), str(data.get("content") or ""), at_of(data))


@dataclass(frozen=True, slots=True)
class RouteRecord(OnDisk):
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
            raise wrong("route", "route", "an object", raw)
        try:
            route = Route.from_dict(raw) if raw else None
        except (KeyError, TypeError, ValueError) as error:
            raise RecordError("route", "route", inner(error)) from error
        return cls(
            turn_of(data, "route"),
            route,
            str(data.get("setting") or "auto"),
            strings_of(data, "route", "warnings"),
            at_of(data),
        )


@dataclass(frozen=True, slots=True)
class RequestRecord(OnDisk):
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
    context: ContextReport | None = None
    """How the request was fitted into the model's window (None: the window is unknown)."""
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
        if self.context is not None:
            written["context"] = self.context.to_dict()
        return written

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RequestRecord:
        """A stored request object; raises RecordError naming a bad field."""
        fallback = data.get("fallback")
        mode = data.get("mode")
        return cls(
            turn_of(data, "request"),
            mapping_of(data, "request", "request"),
            None if mode is None else str(mode),
            int(number_of(data, "request", "round", 1)),
            strings_of(data, "request", "notes"),
            fallback if isinstance(fallback, Mapping) else None,
            context_of(data),
            at_of(data),
            data["role"] if isinstance(data.get("role"), str) else None,
        )


@dataclass(frozen=True, slots=True)
class AssistantRecord(OnDisk):
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
        raw = mapping_of(data, "assistant", "message")
        try:
            message = Message.from_dict(raw)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise RecordError("assistant", "message", inner(error)) from error
        usage, turn_usage, cost = data.get("usage"), data.get("turn_usage"), data.get("cost")
        error_text, continues = data.get("error"), data.get("continues")
        return cls(
            turn=turn_of(data, "assistant"),
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
            at=at_of(data),
        )


@dataclass(frozen=True, slots=True)
class ToolResultRecord(OnDisk):
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
        raw = mapping_of(data, "tool_result", "call")
        try:
            call = ToolCall.from_dict(raw)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise RecordError("tool_result", "call", inner(error)) from error
        result = data.get("result")
        # early logs kept a tool's JSON value as is; the model read it as JSON text
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        return cls(
            turn_of(data, "tool_result"),
            call,
            outcome_of(data),
            text,
            float(number_of(data, "tool_result", "duration_ms", 0.0)),
            at_of(data),
        )


@dataclass(frozen=True, slots=True)
class UiEventRecord(OnDisk):
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
        return cls(turn_of(data, "ui_event"), str(data.get("event") or ""), details, at_of(data))


@dataclass(frozen=True, slots=True)
class SummaryRecord(OnDisk):
    """Older turns compacted into a summary for the model (the messages stay in the log)."""

    turn: int
    """The turn it happened in (the latest turn, for `/compact` between turns)."""
    compaction: Compaction
    """The summary and what it stands for."""
    usage: Mapping[str, Any] | None = None
    """The summary model's {prompt_tokens, completion_tokens, cost}, when it reported them."""
    at: str = ""
    """When it was written (UTC ISO 8601; set by the writer)."""
    kind: ClassVar[Literal["summary"]] = "summary"
    """The record type."""

    def fields(self) -> dict[str, Any]:
        """The record's own fields, as written after v, type, at and turn."""
        return {**self.compaction.to_dict(), "usage": self.usage}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SummaryRecord:
        """A stored summary object; raises RecordError naming a bad field."""
        for name in ("summary", "upto"):
            if name not in data:
                raise RecordError("summary", name, "is missing")
        if not isinstance(data["summary"], str):
            raise wrong("summary", "summary", "a string", data["summary"])
        upto = data["upto"]
        if isinstance(upto, bool) or not isinstance(upto, int) or upto < 0:
            raise wrong("summary", "upto", "a whole number of messages", upto)
        try:
            compaction = Compaction.from_dict(data)
        except (KeyError, TypeError, ValueError) as error:
            raise RecordError("summary", "summary", inner(error)) from error
        usage = data.get("usage")
        return cls(
            turn_of(data, "summary"),
            compaction,
            usage if isinstance(usage, Mapping) else None,
            at_of(data),
        )


SessionRecord = (
    MetaRecord
    | UserRecord
    | RouteRecord
    | RequestRecord
    | AssistantRecord
    | ToolResultRecord
    | CheckpointRecord
    | UiEventRecord
    | SummaryRecord
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
