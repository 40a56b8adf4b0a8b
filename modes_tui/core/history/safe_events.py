"""A turn's events made safe for the screen: the text each one shows goes through
`terminal_safe` (see `terminal_text`), and streamed deltas through a `TerminalStream`.

Apart from `terminal_text` so that the string functions, which the command line needs at
every start, do not load the event types.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from modes_tui.core.history.events import (
    ConversationCompacted,
    ReasoningDelta,
    RequestBuilt,
    RouteDecided,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    TurnCancelled,
    TurnEvent,
    TurnFailed,
    TurnFinished,
)
from modes_tui.core.terminal_text import TerminalStream, terminal_safe


def safe_event(event: TurnEvent) -> TurnEvent:
    """`event` with the text it shows made `terminal_safe` (the same object when clean).

    For the screen only: the engine and the session keep the text as the model sent it.
    """
    if isinstance(event, TextDelta | ReasoningDelta):
        text = terminal_safe(event.text)
        return event if text == event.text else replace(event, text=text)
    if isinstance(event, ToolCallRequested):
        call = _safe_call(event.call)
        return event if call is event.call else replace(event, call=call)
    if isinstance(event, ToolCallFinished):
        return replace(event, call=_safe_call(event.call), result=terminal_safe(event.result))
    if isinstance(event, TurnFinished):
        message = event.message
        content, reasoning = terminal_safe(message.content), terminal_safe(message.reasoning)
        if content == message.content and reasoning == message.reasoning:
            return event
        return replace(event, message=replace(message, content=content, reasoning=reasoning))
    if isinstance(event, TurnFailed):
        return replace(
            event,
            error=terminal_safe(event.error),
            hint=terminal_safe(event.hint),
            partial=terminal_safe(event.partial),
        )
    if isinstance(event, TurnCancelled):
        return replace(event, partial=terminal_safe(event.partial))
    if isinstance(event, RouteDecided):
        route = event.route
        if route.reason and terminal_safe(route.reason) != route.reason:
            route = replace(route, reason=terminal_safe(route.reason))
        return replace(event, route=route, warnings=tuple(terminal_safe(w) for w in event.warnings))
    if isinstance(event, ConversationCompacted):
        # a model wrote the summary: it is model output like any answer
        compaction = event.compaction
        return replace(
            event,
            compaction=replace(
                compaction,
                summary=terminal_safe(compaction.summary),
                note=terminal_safe(compaction.note),
                model=terminal_safe(compaction.model) if compaction.model else None,
            ),
        )
    if isinstance(event, RequestBuilt):
        request = event.request
        messages = tuple(_safe_value(m) for m in request.messages)
        return replace(
            event,
            request=replace(request, messages=messages),
            notes=tuple(terminal_safe(n) for n in event.notes),
        )
    return event


class TerminalEvents:
    """A turn's events made safe for the screen, in order (`safe_event` for each), with the
    streamed text and reasoning going through a `TerminalStream`: what a delta held back is
    sent as one more delta before the next other event, or by `finish()`."""

    def __init__(self) -> None:
        self._text = TerminalStream()
        self._reasoning = TerminalStream()

    def take(self, event: TurnEvent) -> list[TurnEvent]:
        """The events to show for `event` (none while a cut sequence is held back)."""
        if isinstance(event, TextDelta):
            text = self._text.feed(event.text)
            return [TextDelta(text)] if text else []
        if isinstance(event, ReasoningDelta):
            text = self._reasoning.feed(event.text)
            return [ReasoningDelta(text)] if text else []
        return [*self.finish(), safe_event(event)]

    def finish(self) -> list[TurnEvent]:
        """Deltas for whatever is still held back."""
        held: list[TurnEvent] = []
        if text := self._reasoning.flush():
            held.append(ReasoningDelta(text))
        if text := self._text.flush():
            held.append(TextDelta(text))
        return held


async def safe_events(events: AsyncIterator[TurnEvent]) -> AsyncIterator[TurnEvent]:
    """`TerminalEvents` over a live stream: `async for event in safe_events(run_turn(...))`."""
    screen = TerminalEvents()
    async for event in events:
        for shown in screen.take(event):
            yield shown
    for shown in screen.finish():
        yield shown


def _safe_call(call: Any) -> Any:
    arguments = _safe_value(dict(call.arguments))
    name = terminal_safe(call.name)
    if arguments == dict(call.arguments) and name == call.name:
        return call
    return replace(call, name=name, arguments=arguments)


def _safe_value(value: Any) -> Any:
    """Strings anywhere inside JSON-like data made `terminal_safe`."""
    if isinstance(value, str):
        return terminal_safe(value)
    if isinstance(value, dict):
        return {terminal_safe(str(k)): _safe_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_safe_value(v) for v in value)
    return value
