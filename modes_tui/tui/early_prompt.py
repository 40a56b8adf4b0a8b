"""The prompt of the first frame, until the editor is loaded.

The prompt is an editor built on Textual's `TextArea`, and loading `TextArea` (its document,
wrapping and themes) and setting it up takes about 9 ms of a 160 ms start
(`bench/tui_startup.py`). So the first frame draws `EarlyPrompt` where the prompt goes,
drawn as the empty prompt is, and the conversation mounts the editor in its place right
after that frame (`take_place`).

Nothing typed in between is lost or changed: every key and paste that reaches the early
prompt is kept, in order, and typed again when the editor has the focus, through the app as a
terminal's key is (Enter sends, shift+enter starts a line, a mode's key forces it); one that
reaches it later is typed again at once. Keys with a priority binding (ctrl+q) act at once,
as they always do.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widget import Widget

Typed = events.Key | events.Paste
W = TypeVar("W", bound=Widget)


class EarlyPrompt(Widget, can_focus=True):
    """Where the prompt goes in the first frame; it keeps what is typed for the editor."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"early-prompt--cursor"}
    DEFAULT_CSS = """
    EarlyPrompt {
        height: 3;
        padding: 0 1;
        border: tall $primary;
        background: $surface;
        color: $text 40%;
    }
    EarlyPrompt:focus { border: tall $accent; }
    EarlyPrompt > .early-prompt--cursor {
        color: $input-cursor-foreground;
        background: $input-cursor-background;
        text-style: $input-cursor-text-style;
    }
    """

    def __init__(self, placeholder: Text, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.placeholder = placeholder
        """Drawn as the editor draws its placeholder, the cursor on its first character."""
        self.kept: list[Typed] = []
        """Keys and pastes that reached it, oldest first, not handed over yet."""
        self.handed_over = False
        """The editor is in (`hand_over`): what reaches this prompt now is typed again."""

    def render(self) -> Text:
        shown = self.placeholder.copy()
        shown.no_wrap, shown.overflow = True, "ellipsis"
        if self.has_focus and shown.plain:
            shown.stylize(self.get_component_rich_style("early-prompt--cursor"), 0, 1)
        return shown

    def on_key(self, event: events.Key) -> None:
        self._keep(event, events.Key(event.key, event.character))

    def on_paste(self, event: events.Paste) -> None:
        self._keep(event, events.Paste(event.text))

    def _keep(self, event: Typed, copy: Typed) -> None:
        event.stop()
        event.prevent_default()
        if self.handed_over:
            self.app.post_message(copy)
        else:
            self.kept.append(copy)

    def hand_over(self) -> None:
        """Type again what was kept, in order, as the terminal would have: through the app,
        to the widget with the focus (the editor), with the bindings of a real key. What
        reaches this prompt later is typed again at once."""
        self.handed_over = True
        kept, self.kept = self.kept, []
        for typed in kept:
            self.app.post_message(typed)

    def typed(self) -> str:
        """The text the kept keys would make (for a quit that would drop it)."""
        text = ""
        for typed in self.kept:
            if isinstance(typed, events.Paste):
                text += typed.text
            elif typed.key == "backspace":
                text = text[:-1]
            elif typed.is_printable and typed.character:
                text += typed.character
        return text


async def take_place(screen: Screen[Any], early: EarlyPrompt, editor: W) -> W:
    """Mount `editor` in `early`'s place, in one frame, and hand it what was kept (and the
    focus, if `early` had it)."""
    with screen.app.batch_update():
        await screen.mount(editor, before=early)
        if early.has_focus:
            editor.focus()
        early.hand_over()
        early.display = False  # out of the layout now; removed once its keys are passed on
    screen.call_after_refresh(early.remove)
    return editor
