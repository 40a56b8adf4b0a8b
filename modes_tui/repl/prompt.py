"""The interactive REPL: a prompt-toolkit prompt with completion for slash commands and
mode names, persistent input history, Enter to send and Ctrl+J / Alt+Enter for a new line.
Ctrl+C cancels a turn (a second Ctrl+C at the prompt exits), Ctrl+D exits. After a pause in
typing, the text is prepared for its route (`frontend.drafts`), as in the app.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modes_tui.frontend.commands import commands_for, mode_settings, one_shot_modes
from modes_tui.frontend.drafts import DRAFT_PAUSE, arrived_whole, routed_text
from modes_tui.repl.commands import run_line

if TYPE_CHECKING:
    from modes_tui.core.engine.ports import TurnEngine
    from modes_tui.repl.context import ReplContext
    from modes_tui.repl.printer import Printer


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


class DraftPreparer:
    """A buffer's `on_text_changed` handler: after a pause in typing, or at once for text that
    arrived whole (a bracketed paste, a recalled line), the text goes to `engine.prepare` in a
    thread (`frontend.drafts`). `attach` also cancels the pause in the
    buffer's accept handler, in the key press that sends the line: prompt-toolkit keeps the
    sent text in the buffer until the next prompt, and on a loaded machine the prompt's
    teardown after Enter can outlast the pause."""

    def __init__(self, engine: TurnEngine) -> None:
        self.engine = engine
        self._paused: asyncio.TimerHandle | None = None
        self._before = ""  # the buffer's text before the last edit

    def attach(self, buffer: Any) -> None:
        accept = buffer.accept_handler

        def accept_and_cancel(sent: Any) -> bool:
            self.cancel()
            return bool(accept(sent)) if accept is not None else False

        buffer.on_text_changed += self.changed
        buffer.accept_handler = accept_and_cancel

    def new_line(self, text: str = "") -> None:
        """A new prompt starts with `text` in the buffer (prompt-toolkit resets the buffer
        without a change event): the next edit is measured from it."""
        self.cancel()
        self._before = text

    def changed(self, buffer: Any) -> None:
        self.cancel()
        before, self._before = self._before, buffer.text
        pause = 0.0 if arrived_whole(before, buffer.text) else DRAFT_PAUSE
        self._paused = asyncio.get_running_loop().call_later(pause, self._prepare, buffer.text)

    def cancel(self) -> None:
        if self._paused is not None:
            self._paused.cancel()
            self._paused = None

    def _prepare(self, typed: str) -> None:
        self._paused = None
        text = routed_text(typed)
        if text is not None:
            asyncio.get_running_loop().run_in_executor(None, self.engine.prepare, text)


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
    drafts = DraftPreparer(context.engine)
    drafts.attach(session.default_buffer)
    printer.write(
        "modes-tui plain REPL. Enter sends; Ctrl+J or Alt+Enter starts a new line (a pasted "
        "text stays one message). /help for commands, Ctrl+D to leave.\n"
    )
    interrupted = False
    while True:
        try:
            default = context.typed_ahead.take()
            drafts.new_line(default)
            line = await session.prompt_async("› ", default=default)
        except KeyboardInterrupt:
            if interrupted:
                return 0
            interrupted = True
            printer.write("(Ctrl+C again to leave)\n")
            continue
        except EOFError:
            return 0
        finally:
            drafts.cancel()  # the line was sent or dropped: nothing to prepare any more
        interrupted = False
        if not line.strip():
            continue
        if not await run_line(line, context, printer):
            return 0
