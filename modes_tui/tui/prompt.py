"""The prompt: a multi-line TextArea where Enter sends, that completes commands as you type
and remembers what you sent.

Keys, and why these: terminals send Enter and shift+Enter as the same byte (`\\r`) unless
they speak the kitty keyboard protocol (kitty, foot, WezTerm, Ghostty, recent iTerm2),
which Textual turns on; there shift+Enter arrives as `shift+enter`. Everywhere else
`ctrl+j` (a plain line feed, `\\n`) and `alt+enter` (`ESC \\r`) still arrive as keys of
their own, so all three insert a new line. A bracketed paste arrives as one Paste event and
is inserted whole, new lines included; nothing in it is sent until Enter.

After a pause in typing the text is prepared for its route (`frontend.drafts`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from modes_tui.frontend.drafts import DRAFT_PAUSE, routed_text
from modes_tui.tui.early_prompt import LINE_BREAK_KEYS

if TYPE_CHECKING:
    from textual.timer import Timer

    from modes_tui.core.engine.ports import TurnEngine

Completer = Callable[[str], str | None]


class CommandSuggester:
    """Suggests the rest of a command, a mode name after `/mode`, a session id after `/replay`."""

    def __init__(
        self,
        modes: Callable[[], Sequence[str]],
        session_ids: Callable[[], Sequence[str]] = lambda: (),
    ) -> None:
        self._modes = modes
        """The modes that can be forced now (`/mode` also takes auto and off)."""
        self._session_ids = session_ids

    def __call__(self, value: str) -> str | None:
        """The whole line completed, or None."""
        if "\n" in value:
            return None  # a command is one line; a multi-line text is a message
        # the command table loads with the first key typed, not before the first frame
        from modes_tui.frontend.commands import complete, mode_settings

        return complete(value, mode_settings(self._modes()), self._session_ids())


class PromptInput(TextArea):
    """Where the user types: Enter sends, shift+enter / ctrl+j / alt+enter start a new line,
    tab takes the completion shown, up and down walk through sent messages at the first and
    last line. It grows with its text up to a few lines, then scrolls."""

    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 8;
        margin: 0 0;
    }
    """

    class Submitted(Message):
        """The user pressed Enter to send what is in the prompt."""

        def __init__(self, prompt: PromptInput, value: str) -> None:
            self.prompt = prompt
            """The prompt that sent it."""
            self.value = value
            """The text, new lines included."""
            super().__init__()

        @property
        def control(self) -> PromptInput:
            return self.prompt

    def __init__(
        self,
        *,
        placeholder: str = "",
        suggester: Completer | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(
            "",
            id=id,
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
            compact=True,
            placeholder=placeholder,
        )
        # TextArea selects a line / everything with f6 / f7; here F-keys force modes.
        for key in ("f6", "f7"):
            self._bindings.key_to_bindings.pop(key, None)
        self._suggester = suggester
        self.sent: list[str] = []
        """Messages sent, oldest first (up walks back through them)."""
        self._position = 0
        self._draft = ""
        self.on_empty_up: Callable[[], bool] | None = None
        """Called when up is pressed in an empty prompt; True means it was handled there
        (the app edits the last message or takes back a waiting one)."""
        self.engine: Callable[[], TurnEngine | None] = lambda: None
        """The engine once built, which prepares the route of the text typed."""
        self._paused: Timer | None = None
        # The next change brings the text whole (a paste, a recalled line), set where that
        # happens: a burst of typed keys also changes many characters at once, and is typing.
        self._whole = False

    # ---------------------------------------------------------------- value

    @property
    def value(self) -> str:
        """The text in the prompt."""
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        self._whole = True
        self.load_text(text)
        self.move_cursor(self.document.end)

    @property
    def completion(self) -> str | None:
        """The whole line the completion would make, or None."""
        if self._suggester is None or not self.text:
            return None
        found = self._suggester(self.text)
        return found if found and found != self.text else None

    def update_suggestion(self) -> None:
        """TextArea's hook after every edit: show the rest of the completion as ghost text
        after the cursor (right or tab takes it)."""
        found = self.completion
        at_end = self.cursor_location == self.document.end
        self.suggestion = found[len(self.text) :] if found and at_end else ""

    def remember(self, text: str) -> None:
        """Add a sent message to the history."""
        if text and (not self.sent or self.sent[-1] != text):
            self.sent.append(text)
        self._position = len(self.sent)
        self._draft = ""

    def on_text_area_changed(self) -> None:
        """Every edit: the text goes to the engine after a pause in typing, or at once when
        it arrived whole (a paste, a recalled line)."""
        if self._paused is not None:
            self._paused.stop()
            self._paused = None
        whole, self._whole = self._whole, False
        if whole:
            self._prepare_draft()
            return
        self._paused = self.set_timer(DRAFT_PAUSE, self._prepare_draft)

    def _prepare_draft(self) -> None:
        """Encode ahead what the text's route will read (not a command: it is not routed)."""
        engine, text = self.engine(), routed_text(self.text)
        if engine is None or text is None:
            return
        self.run_worker(
            partial(engine.prepare, text),
            name="draft encoding",
            group="draft",
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )

    async def _on_paste(self, event: events.Paste) -> None:
        """Flags the paste; TextArea's own handler inserts it (Textual calls each class's)."""
        self._whole = True

    # ---------------------------------------------------------------- keys

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key == "enter":
            event.stop()
            event.prevent_default()
            self.send()
            return
        if key in LINE_BREAK_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if key == "backspace":
            # Here, not by TextArea's binding: a binding acts only once the key has gone up
            # to the app, so in a burst of keys (a slow link, keys typed while the app was
            # busy) the characters typed after it were inserted first and it deleted the last
            # of them ("ab⌫c" became "ab").
            event.stop()
            event.prevent_default()
            self.action_delete_left()
            return
        if key == "tab":
            event.stop()
            event.prevent_default()
            self.action_complete()
            return
        if key == "up" and self.cursor_location[0] == 0:
            event.stop()
            event.prevent_default()
            if not self.text and self.on_empty_up is not None and self.on_empty_up():
                return
            self.action_history(-1)
            return
        if key == "down" and self.cursor_location[0] == self.document.line_count - 1:
            event.stop()
            event.prevent_default()
            self.action_history(1)
            return
        await super()._on_key(event)

    def send(self) -> None:
        """What Enter does: send the text, unless it is blank."""
        if self.text.strip():
            # taken out now, not when the app gets the message: keys typed in between land
            # in an empty prompt instead of being wiped with the sent text
            self.post_message(self.Submitted(self, self.text))
            self.value = ""

    def action_complete(self) -> None:
        """Take the completion shown, or move focus on when there is none."""
        found = self.completion
        if found:
            self.value = found
        else:
            self.screen.focus_next()

    def action_history(self, step: int) -> None:
        """Show the previous (-1) or next (+1) sent message."""
        if not self.sent:
            return
        if self._position == len(self.sent):
            self._draft = self.text
        self._position = max(0, min(len(self.sent), self._position + step))
        self.value = self.sent[self._position] if self._position < len(self.sent) else self._draft

    def put_back(self, text: str, *, keep_blank_draft: bool = True) -> None:
        """Put `text` back in the prompt before whatever was typed since (a refused line, a
        waiting message taken back): nothing typed is lost. A draft of only spaces goes
        unless `keep_blank_draft`."""
        draft = self.value
        kept = draft if keep_blank_draft else draft.strip()
        self.value = f"{text}\n{draft}" if kept else text

    def recall(self, text: str) -> None:
        """Put `text` in the prompt as if walked back to (editing the last message)."""
        if self.sent and self.sent[-1] == text:
            self._position = len(self.sent) - 1
        self.value = text


def editor(
    placeholder: str,
    modes: Callable[[], Sequence[str]],
    sessions: Callable[[], Sequence[str]],
    on_empty_up: Callable[[], bool],
    engine: Callable[[], TurnEngine | None],
) -> PromptInput:
    """The conversation's prompt (`#prompt`): it completes `/mode` with `modes()` and
    `/replay` with `sessions()`, calls `on_empty_up` for up in an empty prompt, and hands
    what is typed to `engine()` to prepare its route."""
    made = PromptInput(
        placeholder=placeholder, suggester=CommandSuggester(modes, sessions), id="prompt"
    )
    made.on_empty_up = on_empty_up
    made.engine = engine
    return made
