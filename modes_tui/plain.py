"""The plain REPL: the same engine as the TUI, in a prompt-toolkit prompt or a pipe.

At a terminal: streamed answers, one route line per turn, completion for slash commands
and mode names, persistent input history, Ctrl+C cancels a turn (a second Ctrl+C at the
prompt exits), Ctrl+D exits. With stdin not a terminal it reads one message per line and
prints the answers, so it can be scripted; `--json` prints one JSON event per line.

With `plain_questions` (its yes/no questions), the only modules that import prompt_toolkit;
this one only translates engine events.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol, assert_never

from modes_tui.commands import (
    ONE_SHOT_HELP,
    ONE_SHOT_USAGE,
    CommandError,
    commands_for,
    find_command,
    is_command,
    message_text,
    mode_settings,
    one_shot,
    one_shot_modes,
    unknown_command,
)
from modes_tui.core.conversation import ToolCall
from modes_tui.core.corrections import Correction
from modes_tui.core.errors import ModesError
from modes_tui.core.events import (
    TurnCorrected,
    TurnEvent,
)
from modes_tui.core.ledger import money
from modes_tui.core.ports import Restorable
from modes_tui.core.terminal_text import (
    TerminalStream,
    decode_typed,
    json_terminal_safe,
    terminal_safe,
)
from modes_tui.core.transcript import TurnTranscript
from modes_tui.plain_questions import SetAside
from modes_tui.plain_sessions import run_session_command
from modes_tui.route_format import repl_line

if TYPE_CHECKING:
    from modes_tui.store.resume import CurrentSession


class TurnRunner(Restorable, Protocol):
    """What the REPL needs from the engine."""

    def run_turn(self, text: str, *, force: str | None = None) -> AsyncIterator[TurnEvent]: ...

    def correct(self, mode: str, *, turn: int | None = None) -> AsyncIterator[TurnEvent]: ...

    def undo_correction(self) -> Correction: ...

    def cancel(self) -> None: ...

    def clear(self) -> None: ...


@dataclass
class ReplContext:
    """The wiring the REPL receives: the engine and the few things slash commands touch."""

    engine: TurnRunner
    """Runs turns."""
    mode_names: Callable[[], Sequence[str]]
    """The pack's mode names, for completion and /modes."""
    describe_modes: Callable[[], str]
    """A short listing of the modes for /modes."""
    set_mode: Callable[[str], str]
    """Writes the control file; returns a confirmation line. Raises ModesError."""
    history_file: Path | None = None
    """Where input history persists (the state dir)."""
    last_turn: TurnTranscript | None = None
    """The latest turn, folded from its events: its route and requests for /why."""
    turns_sent: int = 0
    """Messages sent in this REPL (numbers the folded turns)."""
    session: CurrentSession | None = None
    """The session being recorded, for /resume, /fork and /rename."""
    pack_name: str = ""
    """The pack in use (a resumed session from another pack is pointed out)."""
    typed_ahead: SetAside = field(default_factory=SetAside)
    """Text typed before a confirmation question, put in the next prompt."""


class Printer:
    """Turns events into text on a stream (or JSON lines)."""

    def __init__(
        self, out: IO[str], *, json_lines: bool = False, err: IO[str] | None = None
    ) -> None:
        self.out = out
        self.err = err if err is not None else out
        self.json_lines = json_lines
        self._in_text = False
        self._text = TerminalStream()
        """The answer streaming now: a sequence cut between two chunks is removed whole."""
        self.failures = 0
        """Turns that failed: a script reading our output needs the exit code to say so."""

    def write(self, text: str) -> None:
        # Model text, tool output and provider errors must not drive the terminal.
        self._emit(terminal_safe(text))

    def warn(self, text: str) -> None:
        """`write` on the error stream (errors quote providers, notes quote sessions)."""
        self.err.write(terminal_safe(text))
        self.err.flush()

    def _emit(self, text: str) -> None:
        self.out.write(text)  # callers pass text already made safe
        self.out.flush()

    def _end_text(self) -> None:
        if self._in_text:
            self.write(self._text.flush() + "\n")
            self._in_text = False

    def event(self, event: TurnEvent, context: ReplContext) -> None:
        if context.last_turn is not None:
            context.last_turn.apply(event)  # the fold `/why` reads
        if event.type == "turn_failed":
            self.failures += 1
        if self.json_lines:
            line = json.dumps(event.to_dict(), ensure_ascii=False, default=str)
            self._emit(json_terminal_safe(line + "\n"))  # the same value, inert on a terminal
            return
        match event.type:
            case "route_decided":
                for warning in event.warnings:
                    self.write(f"! {warning}\n")
                self.write(repl_line(event.route) + "\n")
            case "mode_changed" | "usage":
                pass  # the route line already names the new mode; cost comes at the end
            case "reasoning_delta":
                pass  # reasoning stays folded in the plain REPL; /why shows the request
            case "request_built":
                for note in event.notes:
                    self.write(f"({note})\n")
            case "text_delta":
                self._in_text = True
                self._emit(self._text.feed(event.text))
            case "tool_call_requested":
                self._end_text()
                args = json.dumps(dict(event.call.arguments), ensure_ascii=False)
                self.write(f"→ {event.call.name}({args})\n")
            case "tool_call_finished":
                summary = event.result if len(event.result) <= 200 else event.result[:200] + "…"
                self.write(f"← {event.call.name}: {event.outcome}: {summary}\n")
            case "turn_finished":
                self._end_text()
                ledger = getattr(getattr(context.engine, "costs", None), "ledger", None)
                if ledger is not None and ledger.turns and ledger.turns[-1].cost:
                    cost = money(ledger.turns[-1].cost)
                    self.write(f"(cost {cost} · session {ledger.header()})\n")
            case "turn_cancelled":
                self._end_text()
                self.write("(cancelled; the partial answer is kept)\n")
            case "turn_corrected":
                self._end_text()
                self.write(correction_text(event) + "\n")
            case "turn_failed":
                self._end_text()
                self.warn(f"error: {event.error}\n")
                if event.hint:
                    self.warn(f"hint: {event.hint}\n")
            case _:
                assert_never(event)


def correction_text(event: TurnCorrected) -> str:
    """`↺ turn 2 answered in chat, corrected to code: answering again`, and the like."""
    was = event.answered_mode or "no mode"
    if event.rerun:
        text = f"↺ turn {event.turn} answered in {was}, corrected to {event.corrected_mode}"
        text += ": answering again"
    else:
        text = f"↺ counts as a correction of turn {event.turn}: {was} → {event.corrected_mode}"
    if event.correction is not None:
        text += " (/wrong undo forgets it)"
    if event.note:
        text += f"\n! {event.note}"
    return text


async def wrong(argument: str, context: ReplContext, printer: Printer) -> None:
    """`/wrong MODE` re-runs the last turn in MODE; `/wrong undo` forgets the last correction."""
    if not argument:
        printer.write("usage: /wrong MODE | undo\n")
        return
    try:
        if argument == "undo":
            gone = context.engine.undo_correction()
            printer.write(
                f"(forgot the correction of turn {gone.turn}: {gone.routed_mode or 'no mode'} → "
                f"{gone.corrected_mode}; the answers stay)\n"
            )
            return
        events = context.engine.correct(argument)
    except ModesError as error:
        printer.write(f"error: {error}\n")
        return
    await play(events, context, printer)


async def run_command(line: str, context: ReplContext, printer: Printer) -> bool:
    """Handle a slash command; return False when the REPL should stop."""
    typed, _, argument = line.strip().partition(" ")
    argument = argument.strip()
    found = find_command(typed, "repl")
    name = found.name if found is not None else typed
    if name == "/quit":
        return False
    if name == "/help":
        for spec in commands_for("repl"):
            printer.write(f"{spec.usage:<20} {spec.help_for('repl')}\n")
        printer.write(f"{ONE_SHOT_USAGE:<20} {ONE_SHOT_HELP}\n")
    elif name == "/modes":
        printer.write(context.describe_modes() + "\n")
    elif name == "/mode":
        if not argument:
            printer.write("usage: /mode NAME | auto | off\n")
        else:
            try:
                printer.write(context.set_mode(argument) + "\n")
            except ModesError as error:
                printer.write(f"error: {error}\n")
    elif name == "/wrong":
        await wrong(argument, context, printer)
    elif name == "/clear":
        context.engine.clear()
        printer.write("(conversation cleared)\n")
    elif name in ("/resume", "/fork", "/rename"):
        run_session_command(name, argument, context, printer)
    elif name == "/why":
        turn = context.last_turn
        if turn is None or turn.route is None:
            printer.write("no turn yet\n")
        else:
            request = turn.requests[-1].request.to_dict() if turn.requests else {}
            printer.write(
                json.dumps(
                    {"route": turn.route.to_dict(), "request": request},
                    indent=2,
                    ensure_ascii=False,
                )
                + "\n"
            )
    else:
        printer.write(unknown_command(typed, "repl", context.mode_names()) + "\n")
    return True


async def run_turn(
    text: str, context: ReplContext, printer: Printer, *, force: str | None = None
) -> None:
    """One turn, with Ctrl+C (SIGINT) cancelling it instead of killing the process;
    `force` names the mode of this message only (`/MODE text`)."""
    context.turns_sent += 1
    context.last_turn = TurnTranscript(context.turns_sent, text)
    await play(context.engine.run_turn(text, force=force), context, printer)


async def run_line(line: str, context: ReplContext, printer: Printer) -> bool:
    """One typed line: a command, `/MODE text` (that message in MODE, nothing forced for
    what follows), `//text` (sends `/text`) or a message. False: the REPL should stop."""
    if not is_command(line):
        await run_turn(message_text(line), context, printer)
        return True
    try:
        shot = one_shot(line, mode_settings(context.mode_names()))
    except CommandError as error:
        printer.write(f"error: {error}\n")
        return True
    if shot is None:
        return await run_command(line, context, printer)
    await run_turn(shot.text, context, printer, force=shot.mode)
    return True


async def play(events: AsyncIterator[TurnEvent], context: ReplContext, printer: Printer) -> None:
    """Print a turn's events; Ctrl+C (SIGINT) cancels the turn instead of the process."""
    loop = asyncio.get_running_loop()
    installed = False
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGINT, context.engine.cancel)
        installed = True
    try:
        async for event in events:
            printer.event(event, context)
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)


def piped_lines(stream: IO[bytes], err: IO[str]) -> Iterator[str]:
    """Lines from a pipe as text: a line that is not UTF-8 or holds NUL bytes is still read
    (nothing typed is dropped), and what was changed is named on `err`, with its line."""
    for number, raw in enumerate(stream, 1):
        text, notes = decode_typed(raw, f"stdin line {number}")
        for note in notes:
            err.write(terminal_safe(f"modes-tui: warning: {note}\n"))
            err.flush()
        yield text


async def run_lines(lines: Iterable[str], context: ReplContext, printer: Printer) -> int:
    """Non-interactive: one message (or slash command) per line."""
    for raw in lines:
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        if not await run_line(line, context, printer):
            break
    return 1 if printer.failures else 0


class PipeConfirmer:
    """Without a terminal nobody can confirm: refuse, with a reason the model reads."""

    async def confirm(self, call: ToolCall, tool: Any) -> bool:
        sys.stderr.write(
            terminal_safe(f"modes-tui: refused {call.name}: no terminal to confirm it\n")
        )
        return False

    # No `ask`: with nobody to answer, the engine keeps the turn out of a confirm-first mode
    # and refuses a turn past the budget, and says why in the route and the error.


def slash_completer(context: ReplContext) -> Any:
    """Completion for slash commands, mode names after `/mode `, and `/MODE` one-shots
    (after the commands: a command wins over a mode of the same name)."""
    from prompt_toolkit.completion import Completer, Completion

    class SlashCompleter(Completer):
        def get_completions(self, document: Any, complete_event: Any) -> Any:
            text = document.text_before_cursor
            if not text.startswith("/"):
                return
            for command, extra in (("/mode ", ["auto", "off"]), ("/wrong ", ["undo"])):
                if text.startswith(command):
                    word = text[len(command) :]
                    for name in [*extra, *context.mode_names()]:
                        if name.startswith(word):
                            yield Completion(name, start_position=-len(word))
                    return
            for spec in commands_for("repl"):
                if spec.name.startswith(text):
                    yield Completion(
                        spec.name, start_position=-len(text), display_meta=spec.help_for("repl")
                    )
            if " " in text:
                return
            for mode in one_shot_modes(mode_settings(context.mode_names())):
                if f"/{mode}".startswith(text):
                    meta = f"answer this one message in {mode}"
                    yield Completion(f"/{mode}", start_position=-len(text), display_meta=meta)

    return SlashCompleter()


def send_keys() -> Any:
    """Enter sends the whole text; Ctrl+J (a line feed) and Alt+Enter (Esc, Enter) start a
    new line. The prompt is multi-line, so a bracketed paste keeps its lines in one message;
    terminals send Enter as CR and Ctrl+J as LF, which is what keeps the two apart."""
    from prompt_toolkit.key_binding import KeyBindings

    keys = KeyBindings()

    @keys.add("enter")
    def _send(event: Any) -> None:
        buffer = event.current_buffer
        if buffer.complete_state is not None and buffer.complete_state.current_completion:
            buffer.apply_completion(buffer.complete_state.current_completion)
            return
        buffer.validate_and_handle()

    @keys.add("c-j")
    @keys.add("escape", "enter")
    def _new_line(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    return keys


def input_history(path: Path, printer: Printer) -> Any:
    """The prompt's history kept in `path` (0600, through `store.runtime`); a file that
    cannot be used (a link, a FIFO, too large) is a warning and a history in memory."""
    from prompt_toolkit.history import History, InMemoryHistory

    from modes_tui.store.runtime import append_input_history, read_input_history

    try:
        entries = read_input_history(path)
    except OSError as error:
        printer.write(
            f"warning: cannot use the input history: {error}; this run keeps what you "
            "type in memory only\n"
        )
        return InMemoryHistory()

    class StateHistory(History):
        def load_history_strings(self) -> Iterable[str]:
            return iter(entries)

        def store_string(self, string: str) -> None:
            with contextlib.suppress(OSError):  # history is a convenience, never a failure
                append_input_history(path, string)

    return StateHistory()


async def run_interactive(
    context: ReplContext, printer: Printer, *, input: Any = None, output: Any = None
) -> int:
    """The prompt-toolkit REPL."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import InMemoryHistory

    history: Any = InMemoryHistory()
    if context.history_file is not None:
        history = input_history(context.history_file, printer)
    session: PromptSession[str] = PromptSession(
        history=history,
        completer=slash_completer(context),
        complete_while_typing=True,
        multiline=True,
        key_bindings=send_keys(),
        prompt_continuation="  ",
        input=input,
        output=output,
    )
    printer.write(
        "modes-tui plain REPL. Enter sends; Ctrl+J or Alt+Enter starts a new line (a pasted "
        "text stays one message). /help for commands, Ctrl+D to leave.\n"
    )
    interrupted = False
    while True:
        try:
            line = await session.prompt_async("› ", default=context.typed_ahead.take())
        except KeyboardInterrupt:
            if interrupted:
                return 0
            interrupted = True
            printer.write("(Ctrl+C again to leave)\n")
            continue
        except EOFError:
            return 0
        interrupted = False
        if not line.strip():
            continue
        if not await run_line(line, context, printer):
            return 0
