"""The prompt: an Input that completes commands as you type and remembers what you sent."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from textual.binding import Binding
from textual.suggester import Suggester
from textual.widgets import Input

from modes_tui.tui.commands import complete


class CommandSuggester(Suggester):
    """Suggests the rest of a command, a mode name after `/mode`, a session id after `/replay`."""

    def __init__(
        self,
        settings: Callable[[], Sequence[str]],
        session_ids: Callable[[], Sequence[str]] = lambda: (),
    ) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self._settings = settings
        self._session_ids = session_ids

    async def get_suggestion(self, value: str) -> str | None:
        return complete(value, self._settings(), self._session_ids())


class PromptInput(Input):
    """Where the user types; tab takes a suggestion, up and down walk through sent lines."""

    DEFAULT_CSS = """
    PromptInput {
        margin: 0 0;
    }
    """

    BINDINGS: ClassVar = [
        Binding("tab", "complete", "Complete", show=False, id="prompt.complete"),
        Binding("up", "history(-1)", "Previous", show=False, id="prompt.previous"),
        Binding("down", "history(1)", "Next", show=False, id="prompt.next"),
    ]

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.sent: list[str] = []
        self._position = 0
        self._draft = ""

    def remember(self, text: str) -> None:
        """Add a sent line to the history."""
        if text and (not self.sent or self.sent[-1] != text):
            self.sent.append(text)
        self._position = len(self.sent)
        self._draft = ""

    def action_complete(self) -> None:
        """Take the suggestion shown, or move focus on when there is none."""
        # `_suggestion` is Input's own ghost text; accepting it is what `right` does at the end.
        if self._suggestion and self._suggestion != self.value:
            self.value = self._suggestion
            self.cursor_position = len(self.value)
        else:
            self.screen.focus_next()

    def action_history(self, step: int) -> None:
        """Show the previous (-1) or next (+1) sent line."""
        if not self.sent:
            return
        if self._position == len(self.sent):
            self._draft = self.value
        self._position = max(0, min(len(self.sent), self._position + step))
        self.value = self.sent[self._position] if self._position < len(self.sent) else self._draft
        self.cursor_position = len(self.value)
