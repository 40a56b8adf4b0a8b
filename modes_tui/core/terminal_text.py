"""Text from outside (model answers, tool output, provider errors, session files) made safe
to put on a terminal.

Such text can carry control characters and escape sequences that a terminal would obey:
clear the screen (`ESC[2J`), set the window title (OSC 0), write the clipboard (OSC 52),
ring the bell, move the cursor back over what was shown (backspace, a lone carriage
return), or reorder what is displayed (Unicode bidi overrides, as in "Trojan Source").
`terminal_safe` removes all of them and keeps everything else, newlines and tabs included.
The REPL prints, and the TUI renders, nothing from outside without it; the session log and
JSON output keep the text as it came (JSON escapes what a terminal would act on).

Rules:
- complete escape sequences (CSI, OSC, DCS, SOS, PM, APC, two-character ESC forms, and their
  8-bit C1 forms) are removed whole, so no `[2J` residue is left;
- a sequence that is not complete (e.g. split across two streamed chunks) loses only its
  introducer, so it cannot swallow the text after it; what remains is plain text;
- other C0 controls except `\\n` and `\\t`, DEL, and C1 controls (U+0080-U+009F) are removed;
  CRLF becomes LF and a lone CR is removed (it would let later text overwrite a line);
- the bidi embedding, override and isolate controls (U+202A-U+202E, U+2066-U+2069) are
  removed; the plain direction marks (U+200E, U+200F) that right-to-left text needs stay.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from modes_tui.core.events import (
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

_BIDI_CONTROLS = "\u202a-\u202e\u2066-\u2069"

# The string controls (OSC, DCS, SOS, PM, APC) end with BEL or ST (ESC \ or 8-bit 0x9c).
_STRING_BODY = r"[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
_SEQUENCE = re.compile(
    "|".join(
        (
            r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]",  # CSI: parameters, intermediates, final
            rf"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]){_STRING_BODY}",  # OSC, DCS, SOS, PM, APC
            r"\x1b[ -/]*[0-~]",  # two-character forms (ESC c resets, ESC 7 saves the cursor)
        )
    )
)
_CONTROL = re.compile(rf"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI_CONTROLS}]")
"""Every character `terminal_safe` acts on; most text has none and is returned as it is."""
_JSON_UNSAFE = re.compile(rf"[\x7f-\x9f{_BIDI_CONTROLS}]")


def terminal_safe(text: str) -> str:
    """`text` with every control character and escape sequence a terminal obeys removed."""
    if _CONTROL.search(text) is None:
        return text
    text = text.replace("\r\n", "\n")
    text = _SEQUENCE.sub("", text)
    return _CONTROL.sub("", text)


_CUT_SEQUENCE = re.compile(
    "(?:"
    + "|".join(
        (
            r"(?:\x1b\[|\x9b)[0-?]*[ -/]*",  # CSI without its final byte yet
            r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*\x1b?",  # string, no end yet
            r"\x1b[ -/]*",  # a lone ESC, or ESC and intermediates
        )
    )
    + r")\Z"
)
HELD_AT_MOST = 1024
"""The longest cut sequence a stream holds back; beyond it the text is released (inert)."""


class TerminalStream:
    """`terminal_safe` for text that arrives in chunks.

    A sequence cut at a chunk's end is held back until the next chunk completes it, so it
    is removed whole instead of leaving its body (`0;title`) on screen. Call `flush()` when
    the stream ends.
    """

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> str:
        """The safe part of what is held plus `text` that can be shown now."""
        data = self._held + text
        cut = _CUT_SEQUENCE.search(data)
        if cut is not None and len(data) - cut.start() <= HELD_AT_MOST:
            self._held = data[cut.start() :]
            data = data[: cut.start()]
        else:
            self._held = ""
        return terminal_safe(data)

    def flush(self) -> str:
        """What was held back, made safe (an unfinished sequence loses its introducer)."""
        held, self._held = self._held, ""
        return terminal_safe(held)


def decode_typed(raw: bytes, where: str) -> tuple[str, list[str]]:
    """Bytes the user piped in (a stdin line) as text, and what had to change to make it so.

    Nothing is dropped silently: bytes that are not UTF-8 become U+FFFD (the rest of the
    line stays), NUL bytes are removed (no model API takes them), and each change is named
    with `where` (e.g. `stdin line 3`) so the user can fix the input.
    """
    notes: list[str] = []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        text = raw.decode("utf-8", errors="replace")
        notes.append(
            f"{where} is not valid UTF-8 (byte 0x{raw[error.start]:02x} at offset "
            f"{error.start}); the bytes that are not were read as \ufffd"
        )
    if "\0" in text:
        notes.append(f"{where} holds {text.count(chr(0))} NUL byte(s); they were removed")
        text = text.replace("\0", "")
    return text, notes


def json_terminal_safe(line: str) -> str:
    """A line of JSON (C0 already escaped by `json.dumps`) with DEL, C1 and bidi controls
    escaped as `\\uXXXX` too: the same value for a parser, inert on a terminal."""
    return _JSON_UNSAFE.sub(lambda found: f"\\u{ord(found.group()):04x}", line)


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


def dumps_terminal_safe(value: Any) -> str:
    """`json.dumps` for a terminal: Unicode kept readable, anything a terminal obeys escaped."""
    return json_terminal_safe(json.dumps(value, ensure_ascii=False, default=str))
