"""The REPL's yes/no questions, and why keys typed before one appears are not its answer.

While a turn streams, the terminal keeps what the user types (the next message, "yes" to
something the model said) until a prompt reads it, and prompt-toolkit hands keys read past
the last Enter to the next prompt. Without care the next prompt is a confirmation, and that
text becomes its answer. So before a question reads its answer, everything pending is
taken: prompt-toolkit's leftover keys, then the bytes waiting on the terminal (read in
non-canonical mode, so a half-typed line comes too; then the terminal's input is flushed).
The text is not thrown away: it is named on screen and set aside for the next message.
A line typed at `[y/N]` that is not y, yes, n, no or Enter alone is no answer either: it is
named ("not y or n"), set aside the same way, and the question is asked again. A question
shows what will happen (a command verbatim, one line each behind a bar; an edit's diff) and
the rule that asked; a call a rule lets run unasked gets a line saying so.
`PromptConfirmer` asks (tool calls, entering a mode, the budget); `repl.pipe.PipeConfirmer` is
the pipe's answer (always no).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import select
from typing import Any

from modes_tui.core.edits.editor import Change
from modes_tui.core.engine.questions import ANSWER_ARMING_SECONDS, Question, RuleNote, verbatim
from modes_tui.core.model.wire import ToolCall
from modes_tui.core.terminal_text import json_terminal_safe, terminal_safe

__all__ = ["PromptConfirmer", "SetAside", "as_typed", "call_question", "take_pending"]

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


def call_question(call: ToolCall, preview: Change | None, rule: RuleNote | None) -> str:
    """The question before a tool call: the diff of an edit, a command verbatim (one line
    each, behind a bar), or the tool's arguments; then the rule that asks."""
    asked = f" ({rule.line()})" if rule is not None else ""
    if preview is not None:
        # plain -/+ lines, made terminal-safe by core.edits.diffs (escapes shown as text)
        return f"{preview.diff}\nApply this change? {preview.summary}{terminal_safe(asked)}"
    command = call.arguments.get("command")
    if call.name == "run_command" and isinstance(command, str):
        lines = verbatim(command).splitlines() or [""]
        shown = "\n".join(f"  │ {line}" for line in lines)
        return f"Run this command?{terminal_safe(asked)}\n{shown}"
    # escaped, not removed: the user sees exactly what would run, and it stays inert
    args = json_terminal_safe(json.dumps(dict(call.arguments), ensure_ascii=False))
    return f"Run {terminal_safe(call.name)}({args})?{terminal_safe(asked)}"


ANSWERS = {"y": True, "yes": True, "n": False, "no": False, "": False}
"""What answers a REPL question; Enter alone is no (the default). Any other text is not an
answer: it is set aside for the next message and the question is asked again."""


class PromptConfirmer:
    """Asks at the terminal before a tool that needs confirmation runs.

    A confirmation needs a deliberate answer: what was typed before the question, or after
    it before typing paused for `arming` seconds, is never read as the answer; it is named
    and set aside in `kept`, and the REPL puts it in the next prompt."""

    def __init__(
        self,
        input: Any = None,
        output: Any = None,
        *,
        kept: SetAside | None = None,
        arming: float = ANSWER_ARMING_SECONDS,
    ) -> None:
        self.input = input
        self.output = output
        self.kept = kept if kept is not None else SetAside()
        """Text typed ahead of the questions, for the next message."""
        self.arming = arming
        self.answering = False
        """True while a question waits for its answer (keys typed now answer it)."""
        self.prompts = 0
        """Answer prompts shown so far (a question is asked again after a non-answer)."""

    async def confirm(self, call: ToolCall, tool: Any, preview: Change | None = None) -> bool:
        return await self._yes_or_no(call_question(call, preview, None))

    async def confirm_by_rule(
        self, call: ToolCall, tool: Any, preview: Change | None, rule: RuleNote
    ) -> bool:
        """`confirm`, naming the policy rule that asks."""
        return await self._yes_or_no(call_question(call, preview, rule))

    def allowed_by_rule(self, call: ToolCall, rule: RuleNote) -> None:
        """A rule let the call run unasked: say which, under the call's line."""
        self._say(terminal_safe(f"  ({rule.line()})"))

    async def ask(self, question: Question) -> bool:
        """A question about the next turn (entering a mode, the budget), on the prompt."""
        text = question.text + (f"\n(asked by {question.rule})" if question.rule else "")
        return await self._yes_or_no(terminal_safe(text))  # it may quote a model

    async def _yes_or_no(self, question: str) -> bool:
        while True:
            await self._arm(question)
            answer = await self._answer()
            if answer is None:
                return False
            verdict = ANSWERS.get(answer.strip().lower())
            if verdict is not None:
                return verdict
            self._set_aside(answer, "not y or n")  # asked again, after its own wait

    async def _arm(self, question: str) -> None:
        """Show the question once typing has paused; what was typed before it, or since
        (each key starts the wait again), is set aside, never read as its answer."""
        from prompt_toolkit.application.current import get_app_session

        source = self.input if self.input is not None else get_app_session().input
        before = as_typed(take_pending(source))  # typed while the turn ran
        self._say(question)
        typed = ""
        for _ in range(QUIET_WAITS_AT_MOST):
            await asyncio.sleep(self.arming)
            keys = take_pending(source)
            if not keys:
                break
            typed += keys
        during = as_typed(typed)
        early = "\n".join(text for text in (before, during) if text)
        if early:
            self._set_aside(early, "typed before the question, so not its answer", typed)

    async def _answer(self) -> str | None:
        """One line typed at `[y/N]`; None for Ctrl+C or Ctrl+D (a no, never "leave the
        REPL mid-turn")."""
        from prompt_toolkit import PromptSession

        self.prompts += 1
        self.answering = True
        try:
            return await PromptSession[str](input=self.input, output=self.output).prompt_async(
                "[y/N] "
            )
        except (KeyboardInterrupt, EOFError):
            return None
        finally:
            self.answering = False

    def _set_aside(self, text: str, why: str, echoed: str = "") -> None:
        self.kept.add(text)
        shown = text if len(text) <= 80 else text[:79] + "…"
        # keys typed in the wait were echoed after the question: start a line of our own
        self._say(
            f"{chr(10) if echoed else ''}({why}: {json.dumps(shown, ensure_ascii=False)}; "
            "kept for your next message)"
        )

    def _say(self, text: str) -> None:
        from prompt_toolkit import print_formatted_text

        print_formatted_text(text, output=self.output)
