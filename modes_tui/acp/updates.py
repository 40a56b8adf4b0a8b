"""The engine's turn events as ACP session updates: what the editor shows of a turn.

    RouteDecided        current_mode_update (the mode that answers), then a one-line note
                        with the decision as an agent message chunk (mode, who decided,
                        confidence, runner-up, reason), so the user sees why
    ReasoningDelta      agent_thought_chunk
    TextDelta           agent_message_chunk
    ToolCallRequested   tool_call (pending, its kind, title and arguments)
    ToolCallFinished    tool_call_update (completed or failed, the output as text)
    TurnFailed          an agent message saying what went wrong and what to do
    RequestBuilt notes, corrections, compactions   agent_thought_chunk

The route note carries the decision as data too, in `_meta["modes-tui"]["route"]`, so a
client can tell it from the answer. Every text is the engine's own (the ACP client renders
it; nothing here writes to a terminal). `translate` is pure: one event in, updates out.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, assert_never

from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_current_mode,
    update_tool_call,
)
from acp.schema import AgentMessageChunk

from modes_tui.acp.permissions import call_title, tool_kind
from modes_tui.core.history import events as ev
from modes_tui.core.values.route import Route
from modes_tui.route_format import confidence_words, marks

__all__ = ["META_KEY", "NO_MODE", "route_note", "translate"]

META_KEY = "modes-tui"
"""The `_meta` key under which updates carry modes-tui's own data."""
NO_MODE = "off"
"""The session mode id shown when a turn runs with no mode (the `off` setting)."""
RESULT_CHARS = 20_000
"""A tool's output shown to the editor is cut to this many characters (the log keeps it all)."""


def translate(event: ev.TurnEvent) -> Iterator[Any]:
    """The session updates that show `event` (none for events the editor has no place for)."""
    match event:
        case ev.RouteDecided():
            yield update_current_mode(event.route.mode_name or NO_MODE)
            yield _route_message(event)
        case ev.ReasoningDelta():
            yield update_agent_thought_text(event.text)
        case ev.TextDelta():
            yield update_agent_message_text(event.text)
        case ev.ToolCallRequested():
            yield start_tool_call(
                event.call.id,
                call_title(event.call),
                kind=tool_kind(event.call.name),
                status="pending",
                raw_input=dict(event.call.arguments),
            )
        case ev.ToolCallFinished():
            yield update_tool_call(
                event.call.id,
                status="completed" if event.outcome in ("ok", "answered") else "failed",
                content=[tool_content(text_block(_cut(event.result)))],
                raw_output={"outcome": event.outcome, "result": _cut(event.result)},
            )
        case ev.RequestBuilt() if event.round == 1:  # later rounds repeat the same notes
            for note in event.notes:
                yield update_agent_thought_text(f"({note})\n")
        case ev.TurnFailed():
            hint = f" {event.hint}" if event.hint else ""
            yield update_agent_message_text(f"\n\n**The turn failed:** {event.error}.{hint}\n")
        case ev.TurnCorrected():
            yield update_agent_thought_text(
                f"(turn {event.turn} corrected to {event.corrected_mode})\n"
            )
        case ev.ConversationCompacted():
            yield update_agent_thought_text("(older turns were summarised for the model)\n")
        case (
            ev.ModeChanged()
            | ev.RequestBuilt()
            | ev.Usage()
            | ev.TurnFinished()
            | ev.TurnCancelled()
        ):
            return
        case _:
            assert_never(event)


def route_note(route: Route, setting: str = "auto") -> str:
    """One line: `→ code · by classifier 0.82 · runner-up shell · because ...`."""
    parts = [f"→ {route.mode_name or 'no mode'}", f"by {route.decided_by}"]
    confidence = confidence_words(route)
    if confidence is not None:
        parts[-1] += f" {confidence}"
    if route.runner_up:
        parts.append(f"runner-up {route.runner_up}")
    shown = [mark for mark in marks(route) if mark != "fallback"]
    if shown:
        parts.append(", ".join(shown))
    if route.forced and setting not in ("auto", "off"):
        parts.append(f"mode set to {setting}")
    if route.reason:
        parts.append(" ".join(route.reason.split()))
    unsure = route.unsure  # what else it nearly was (asked first when the editor can)
    if unsure is not None and unsure.line() not in (route.reason or ""):
        parts.append(unsure.line())
    return " · ".join(parts)


def _route_message(event: ev.RouteDecided) -> AgentMessageChunk:
    note = route_note(event.route, event.setting)
    warnings = "".join(f"\n> ⚠ {warning}" for warning in event.warnings)
    update = update_agent_message_text(f"> {note}{warnings}\n\n")
    update.field_meta = {META_KEY: {"route": event.route.to_dict(), "setting": event.setting}}
    return update


def _cut(text: str) -> str:
    if len(text) <= RESULT_CHARS:
        return text
    return text[:RESULT_CHARS] + f"\n… ({len(text) - RESULT_CHARS} more characters in the log)"
