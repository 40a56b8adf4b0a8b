"""Replay: a recorded session as the live engine's event stream, and re-routing it.

`replay(session)` turns the records of a loaded session into, per turn, the same events
`Engine.run_turn` yields (`RouteDecided`, `ModeChanged`, `RequestBuilt`, `ReasoningDelta`,
`TextDelta`, `ToolCallRequested`, `ToolCallFinished`, `Usage`, then one of `TurnFinished`,
`TurnCancelled`, `TurnFailed`), so any UI shows a past session through the widgets it
uses for a live one, without calling a model. Text arrives as one delta per answer.
It also rebuilds the `Conversation`, so a session can be resumed.

Rules the live stream cannot teach a log reader:
- A turn's mode is the route's (`off` setting: no mode); without a route record, the
  first request's. `ModeChanged` comes when it differs from the previous turn's mode (the
  first's is None), right after `RouteDecided`, and after a hand-off (`decided_by: model`).
- An `assistant` record with `"partial": true` is a checkpoint of a streaming answer; a
  later assistant record of the same turn replaces it. A turn that ends on a checkpoint,
  or with no answer at all, is the turn a crash interrupted: it ends in `TurnFailed`
  (kind `interrupted`) carrying the partial text, or `TurnCancelled` after a cancel.
- A `ui_event` `clear` empties the rebuilt conversation, as `/clear` did live; a
  `ui_event` `supersede` (the user edited and resent their last message) takes the turn it
  names back out of it. The superseded turn still replays, with that event on it.
- A `ui_event` `correction` becomes `TurnCorrected` where it was recorded. With `rerun`, the
  turn's earlier answer was superseded: the events after it answer the turn again (with
  their own route and mode), and the rebuilt conversation drops the superseded answer, as
  the live history did; a `retry` drops the failed answer the same way.
- A `summary` record becomes `ConversationCompacted`, and the rebuilt conversation carries
  its compaction: a resumed session gives the model the summary, not the turns it replaced.
- A record that cannot be turned into an event is reported (file and line) and skipped.

`store.reroute` runs today's router over the same turns.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from modes_tui.core.control_setting import OFF
from modes_tui.core.errors import RecordError
from modes_tui.core.history import events as ev
from modes_tui.core.history.conversation import Conversation, Message
from modes_tui.core.history.records import (
    AssistantRecord,
    MetaRecord,
    RequestRecord,
    RouteRecord,
    SessionRecord,
    SummaryRecord,
    ToolResultRecord,
    UiEventRecord,
    UserRecord,
    parse_record,
)
from modes_tui.core.model.wire import ModelRequest, ToolSpec
from modes_tui.core.values.correction import Correction
from modes_tui.core.values.route import Route
from modes_tui.store.session_reader import LoadedSession, SessionProblem, gc_paused

INTERRUPTED = "interrupted"
INTERRUPTED_TEXT = (
    "the log ends before this turn finished (the app stopped or crashed, or is still answering)"
)


@dataclass(frozen=True, slots=True)
class ReplayedTurn:
    """One recorded turn, as events."""

    turn: int
    """The turn number (1-based)."""
    user: str | None
    """What the user typed (None when the user record is missing)."""
    mode: str | None
    """The mode that took the turn (None: `off`, or not recorded)."""
    route: Route | None
    """The recorded route, if any."""
    events: tuple[ev.TurnEvent, ...]
    """The events a live turn would have yielded, in order."""
    ui_events: tuple[Mapping[str, Any], ...] = ()
    """The turn's `ui_event` records (forced modes, cancels, ...)."""
    interrupted: bool = False
    """The log ends before the turn finished."""


@dataclass(frozen=True, slots=True)
class Replay:
    """A whole session, replayed."""

    session: LoadedSession
    """What was loaded."""
    turns: tuple[ReplayedTurn, ...]
    """Every turn, in order."""
    conversation: Conversation
    """The shared history as it stood at the end (for resuming)."""
    problems: tuple[SessionProblem, ...]
    """The session's load problems plus records that could not be replayed."""
    ui_events: tuple[Mapping[str, Any], ...] = ()
    """`ui_event` records outside any turn (turn 0, or a turn number with nothing else)."""

    def events(self) -> Iterator[ev.TurnEvent]:
        """Every event of every turn, in order."""
        for turn in self.turns:
            yield from turn.events


def request_from_dict(data: Mapping[str, Any]) -> ModelRequest:
    """A recorded request (`ModelRequest.to_dict()`) as a ModelRequest again."""
    rest = dict(data)
    functions = (tool["function"] for tool in rest.pop("tools", None) or ())
    tools = tuple(
        ToolSpec(str(f["name"]), str(f.get("description") or ""), dict(f.get("parameters") or {}))
        for f in functions
    )
    return ModelRequest(
        model=str(rest.pop("model", "")),
        messages=tuple(rest.pop("messages", None) or ()),
        tools=tools,
        temperature=rest.pop("temperature", None),
        max_tokens=rest.pop("max_tokens", None),
        reasoning_effort=rest.pop("reasoning_effort", None),
        extra=rest,
    )


class _TurnBuilder:
    """Collects one turn's events while its records go by."""

    def __init__(self, turn: int, previous_mode: str | None) -> None:
        self.turn = turn
        self.previous_mode = previous_mode
        self.mode: str | None = None
        self.mode_known = False
        self.user: str | None = None
        self.route: Route | None = None
        self.events: list[ev.TurnEvent] = []
        self.ui_events: list[Mapping[str, Any]] = []
        self.partial: AssistantRecord | None = None
        self.finished = False
        self.cancel_seen = False
        self.substantive = False
        """Something besides ui events happened: this group is a turn."""

    def settle_mode(self, mode: str | None) -> None:
        if self.mode_known:
            return
        self.mode_known = True
        self.mode = mode
        if mode != self.previous_mode:
            self.events.append(ev.ModeChanged(self.previous_mode, mode))

    def add(self, record: SessionRecord, raw: Mapping[str, Any], line: int) -> None:
        if not isinstance(record, (UiEventRecord, MetaRecord)):
            self.substantive = True
        if isinstance(record, UserRecord):
            if self.user is None:
                self.user = record.content
        elif isinstance(record, RouteRecord):
            self._routed(record)
        elif isinstance(record, RequestRecord):
            self.settle_mode(record.mode)
            request, fit = request_from_dict(record.request), record.context
            built = ev.RequestBuilt(
                request, record.mode, record.round, record.notes, record.role, fit
            )
            self.events.append(built)
        elif isinstance(record, SummaryRecord):
            self.events.append(ev.ConversationCompacted(record.compaction))
        elif isinstance(record, AssistantRecord):
            if record.partial:
                self.partial = record  # shown only if no complete answer replaces it
                return
            self.partial = None
            self.settle_mode(record.message.mode)
            self._answer(record)
        elif isinstance(record, ToolResultRecord):
            self.events.append(
                ev.ToolCallFinished(record.call, record.outcome, record.result, record.duration_ms)
            )
        elif isinstance(record, UiEventRecord):
            self.ui_events.append(raw)
            self.cancel_seen = self.cancel_seen or record.event == "cancel"
            if record.event == "correction":
                self._corrected(record)

    def _routed(self, record: RouteRecord) -> None:
        route = record.route
        if route is not None:
            self.events.append(ev.RouteDecided(route, record.setting, record.warnings))
            if route.decided_by == "model" and self.mode_known:  # a hand-off mid-turn
                self.previous_mode, self.mode_known = self.mode, False
            else:
                self.route = route
        self.settle_mode(None if record.setting == OFF or route is None else route.mode_name)

    def _corrected(self, record: UiEventRecord) -> None:
        data = record.get("correction")
        corrected_mode = record.get("corrected_mode")
        if corrected_mode is None:
            raise RecordError("ui_event", "corrected_mode", "is missing")
        event = ev.TurnCorrected(
            int(record.get("of") or self.turn),
            _str_or_none(record.get("answered_mode")),
            str(corrected_mode),
            bool(record.get("rerun")),
            Correction.from_dict(data) if isinstance(data, Mapping) else None,
            str(record.get("note") or ""),
        )
        self.events.append(event)
        if event.rerun:
            # what follows answers the turn again: its own route, mode and ending
            self.substantive = True
            self.previous_mode, self.mode_known = self.mode, False
            self.finished = self.cancel_seen = False
            self.partial = None

    def _answer(self, record: AssistantRecord, *, final: bool = True) -> None:
        message = record.message
        if message.reasoning:
            self.events.append(ev.ReasoningDelta(message.reasoning))
        if message.content:
            self.events.append(ev.TextDelta(message.content))
        for call in message.tool_calls:
            self.events.append(ev.ToolCallRequested(call))
        usage = record.usage
        if usage is not None:
            self.events.append(
                ev.Usage(
                    str(usage.get("model") or message.model or ""),
                    int(usage.get("prompt_tokens") or 0),
                    int(usage.get("completion_tokens") or 0),
                    usage.get("cost"),
                )
            )
        if not final:
            return
        if record.error:
            self.finished = True
            self.events.append(
                ev.TurnFailed(
                    record.error,
                    record.failure_kind,
                    record.hint,
                    message.content,
                    record.retryable,
                )
            )
        elif message.cancelled:
            self.finished = True
            self.events.append(ev.TurnCancelled(message.content))
        elif not message.tool_calls:
            self.finished = True
            self.events.append(ev.TurnFinished(message))

    def close(self) -> ReplayedTurn:
        interrupted = False
        if not self.finished:
            partial_text = ""
            if self.partial is not None:
                self.settle_mode(self.partial.message.mode)
                self._answer(self.partial, final=False)
                partial_text = self.partial.message.content
            if self.cancel_seen:
                self.events.append(ev.TurnCancelled(partial_text))
            else:
                interrupted = True
                self.events.append(
                    ev.TurnFailed(INTERRUPTED_TEXT, INTERRUPTED, "", partial_text, retryable=True)
                )
        return ReplayedTurn(
            turn=self.turn,
            user=self.user,
            mode=self.mode,
            route=self.route,
            events=tuple(self.events),
            ui_events=tuple(self.ui_events),
            interrupted=interrupted,
        )


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def replay(session: LoadedSession) -> Replay:
    """The session as events per turn, plus the rebuilt conversation."""
    with gc_paused():
        return _replay(session)


class _Entry(NamedTuple):
    """One stored record, typed (or why it could not be)."""

    raw: Mapping[str, Any]
    """The record as stored."""
    line: int
    """Its line in the file."""
    record: SessionRecord | None
    """The typed record (None: a type this version does not know, or a broken one)."""
    error: Exception | None = None
    """Why it could not be typed."""

    def problem(self, path: Path, doing: str, then: str = "") -> SessionProblem:
        error = self.error
        if isinstance(error, RecordError):
            why = f"field {error.field!r} {error.reason}"
        else:
            why = f"{type(error).__name__}: {error}"
        kind = self.raw.get("type")
        return SessionProblem(path, self.line, f"{kind} record {doing} ({why}){then}")


def _typed(session: LoadedSession) -> list[_Entry]:
    """Every record of the session, typed once for the event and the history passes."""
    entries = []
    for raw, line in zip(session.records, session.lines, strict=True):
        try:
            entries.append(_Entry(raw, line, parse_record(raw)))
        except (RecordError, KeyError, TypeError, ValueError, AttributeError) as error:
            entries.append(_Entry(raw, line, None, error))
    return entries


def _replay(session: LoadedSession) -> Replay:
    problems = list(session.problems)
    turns: list[ReplayedTurn] = []
    loose: list[Mapping[str, Any]] = []
    builder: _TurnBuilder | None = None
    previous_mode: str | None = None

    def close(builder: _TurnBuilder) -> None:
        if not builder.substantive:
            loose.extend(builder.ui_events)
            return
        turns.append(builder.close())

    entries = _typed(session)
    for entry in entries:
        raw = entry.raw
        turn = raw.get("turn")
        if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
            if raw.get("type") == "ui_event":
                loose.append(raw)
            continue  # meta, and session-level ui events
        if builder is None or turn != builder.turn:
            if builder is not None:
                close(builder)
                if builder.mode_known:  # a turn that never got a mode leaves it as it was
                    previous_mode = builder.mode
            builder = _TurnBuilder(turn, previous_mode)
        if entry.error is not None:
            problems.append(entry.problem(session.path, "could not be replayed", "; skipped"))
            continue
        if entry.record is None:
            continue  # a type from a newer modes-tui: reported when loaded
        try:
            builder.add(entry.record, raw, entry.line)
        except (RecordError, KeyError, TypeError, ValueError, AttributeError) as error:
            failed = _Entry(raw, entry.line, entry.record, error)
            problems.append(failed.problem(session.path, "could not be replayed", "; skipped"))
    if builder is not None:
        close(builder)
    conversation, more, _ = _walk(session, entries, with_history=False)
    problems.extend(more)
    problems.sort(key=lambda p: (p.line is None, p.line or 0))
    return Replay(session, tuple(turns), conversation, tuple(problems), tuple(loose))


def conversation_of(session: LoadedSession) -> Conversation:
    """The shared history as the session left it (to resume it)."""
    return _walk(session, _typed(session), with_history=False)[0]


def history_points(session: LoadedSession) -> list[tuple[int, str, list[Message]]]:
    """Each user turn with the history the router saw then: (turn, text, messages)."""
    return _walk(session, _typed(session))[2]


def _walk(
    session: LoadedSession, entries: list[_Entry], *, with_history: bool = True
) -> tuple[Conversation, list[SessionProblem], list[tuple[int, str, list[Message]]]]:
    """One pass: the final conversation, problems, and each user turn with its history."""
    walk = _HistoryWalk(with_history)
    problems: list[SessionProblem] = []
    for entry in entries:
        record = entry.record
        if entry.error is not None:
            if entry.raw.get("type") in ("user", "assistant", "tool_result", "ui_event", "summary"):
                problems.append(entry.problem(session.path, "left out of the conversation"))
            continue
        if isinstance(record, UserRecord):
            walk.user(record)
        elif isinstance(record, AssistantRecord):
            walk.assistant(record)
        elif isinstance(record, ToolResultRecord):
            walk.tool_result(record)
        elif isinstance(record, SummaryRecord) and record.compaction.upto <= len(walk.conversation):
            walk.conversation.compaction = record.compaction  # the model saw it from here on
        elif isinstance(record, UiEventRecord):
            walk.ui_event(record)
    walk.flush()
    return walk.conversation, problems, walk.points


class _HistoryWalk:
    """The shared history rebuilt record by record, as the live engine kept it."""

    def __init__(self, with_history: bool) -> None:
        self.conversation = Conversation()
        self.points: list[tuple[int, str, list[Message]]] = []
        """Each user turn with the history the router saw then (when `with_history`)."""
        self._with_history = with_history
        self._pending: Message | None = None
        """A checkpoint that no complete answer has replaced (yet)."""
        self._starts: dict[int, int] = {}
        """Where each turn's user message sits, so a `supersede` (an edited last message)
        can take that turn back out of the history."""

    def flush(self) -> None:
        """A checkpoint left pending was cut short by a crash: kept, and marked like an
        answer the user cut short."""
        if self._pending is not None:
            self.conversation.append(replace(self._pending, cancelled=True))
            self._pending = None

    def user(self, record: UserRecord) -> None:
        self.flush()
        self._starts[record.turn] = len(self.conversation)
        self.conversation.append(Message("user", record.content))
        if self._with_history:
            self.points.append((record.turn, record.content, list(self.conversation)))

    def assistant(self, record: AssistantRecord) -> None:
        if record.partial:
            self._pending = record.message
            return
        self._pending = None
        if record.message.content or record.message.tool_calls:
            self.conversation.append(record.message)

    def tool_result(self, record: ToolResultRecord) -> None:
        self.flush()
        call = record.call
        self.conversation.append(
            Message("tool", record.result, tool_call_id=call.id, name=call.name)
        )

    def ui_event(self, record: UiEventRecord) -> None:
        conversation = self.conversation
        if record.event == "clear":
            self._pending = None
            self._starts.clear()
            conversation.clear()
        elif record.event == "cancel":
            self.flush()
            _mark_tool_round_cancelled(conversation)
        elif record.event == "supersede":
            self._pending = None
            superseded = record.get("superseded")
            start = self._starts.pop(superseded if isinstance(superseded, int) else 0, None)
            if start is not None and start <= len(conversation):
                del conversation.messages[start:]
        elif record.reruns:
            # the live engine dropped what followed the user message before answering again
            self._pending = None
            _drop_after_last_user(conversation)


def _mark_tool_round_cancelled(conversation: Conversation) -> None:
    """A cancel during a round's tool calls marks that round's answer cut short, as the
    engine does in memory (it writes no new assistant record for it)."""
    for index in range(len(conversation) - 1, -1, -1):
        message = conversation.messages[index]
        if message.role == "user":
            return
        if message.role == "assistant":
            if message.tool_calls and not message.cancelled:
                conversation.messages[index] = replace(message, cancelled=True)
            return


def _drop_after_last_user(conversation: Conversation) -> None:
    messages = conversation.messages
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            del messages[index + 1 :]
            return
