"""Keys typed before a REPL question appears are not its answer; they are kept instead.

While a turn streams, the terminal keeps what the user types (the next message, "yes" to
something the model said) until a prompt reads it, and prompt-toolkit hands keys read past
the last Enter to the next prompt. Without care the next prompt is a confirmation, and that
text becomes its answer. So before a question reads its answer, everything pending is
taken: prompt-toolkit's leftover keys, then the bytes waiting on the terminal (read in
non-canonical mode, so a half-typed line comes too; then the terminal's input is flushed).
The text is not thrown away: it is named on screen and set aside for the next message.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
from typing import Any

from modes_tui.core.terminal_text import terminal_safe

__all__ = ["QUIET_WAITS_AT_MOST", "SetAside", "as_typed", "take_pending"]

QUIET_WAITS_AT_MOST = 20
"""A question waits for a pause in typing at most this many arming times (then asks: what
is typed into its prompt that is not y or n is set aside too)."""

READ_AT_MOST = 64 * 1024
"""Bytes taken from the terminal per question: more than anyone types ahead, and bounded."""

_ERASE = ("\x7f", "\x08")
_KEY_SEQUENCE = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|O.|.)?", re.DOTALL
)
"""Arrow and function keys (and a terminal's replies): escape sequences, never text."""


def take_pending(input: Any) -> str:
    """Everything typed that no prompt has read yet on `input` (a prompt-toolkit Input),
    as raw keys (`as_typed` makes them text); the terminal's pending input is empty after."""
    from prompt_toolkit.input.typeahead import get_typeahead

    keys = "".join(press.data for press in get_typeahead(input))
    with contextlib.suppress(Exception):  # a closed or odd input has nothing waiting
        keys += "".join(press.data for press in input.flush_keys())
    try:
        fd = input.fileno()
    except (AttributeError, OSError, ValueError):
        return keys
    return keys + _read_waiting(fd).decode("utf-8", errors="replace")


def _read_waiting(fd: int) -> bytes:
    """The bytes waiting on `fd`, without blocking; a terminal is flushed after."""
    if not os.isatty(fd):
        return _read_ready(fd)
    import termios

    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        return b""
    raw = list(saved)
    raw[3] &= ~(termios.ICANON | termios.ECHO)  # a half-typed line becomes readable
    raw[6] = list(saved[6])
    raw[6][termios.VMIN], raw[6][termios.VTIME] = 0, 0
    try:
        termios.tcsetattr(fd, termios.TCSANOW, raw)
        return _read_ready(fd)
    finally:
        termios.tcflush(fd, termios.TCIFLUSH)  # past the cap, or arrived meanwhile: gone
        termios.tcsetattr(fd, termios.TCSANOW, saved)


def _read_ready(fd: int) -> bytes:
    taken = b""
    while len(taken) < READ_AT_MOST:
        ready, _, _ = select.select([fd], [], [], 0)
        if not ready:
            break
        try:
            chunk = os.read(fd, READ_AT_MOST - len(taken))
        except (BlockingIOError, InterruptedError):
            break
        if not chunk:
            break
        taken += chunk
    return taken


def as_typed(keys: str) -> str:
    """Raw keys as the text they make: Enter is a line break, backspace erases, arrows and
    other escape sequences are dropped, as are controls; trailing line breaks go."""
    text: list[str] = []
    for char in _KEY_SEQUENCE.sub("", keys.replace("\r\n", "\n").replace("\r", "\n")):
        if char in _ERASE:
            if text:
                text.pop()
        else:
            text.append(char)
    return terminal_safe("".join(text)).rstrip("\n")


class SetAside:
    """Text typed before a question: shown by the REPL, then put in the next prompt."""

    def __init__(self) -> None:
        self._parts: list[str] = []

    def add(self, text: str) -> None:
        """Keep `text` (blank text is nothing to keep)."""
        if text.strip():
            self._parts.append(text)

    def take(self) -> str:
        """All text kept so far, one piece a line, and forget it."""
        text, self._parts = "\n".join(self._parts), []
        return text
