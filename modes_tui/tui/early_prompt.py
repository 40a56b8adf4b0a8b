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

from typing import Any, ClassVar, Protocol, TypeVar, cast

from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widget import Widget

Typed = events.Key | events.Paste
LINE_BREAK_KEYS = ("shift+enter", "ctrl+j", "alt+enter", "ctrl+enter")
"""Keys that start a new line in the prompt (Enter sends)."""


class Editor(Protocol):
    """What the early prompt needs of the editor (`prompt.PromptInput`)."""

    def insert(self, text: str) -> object: ...

    def action_delete_left(self) -> None: ...

    def send(self) -> None: ...


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
        self.keep(event)

    def on_paste(self, event: events.Paste) -> None:
        self.keep(event)

    def keep(self, event: Typed) -> None:
        """Keep a key or paste (the conversation also brings the ones typed while another
        of its parts had the focus)."""
        event.stop()
        event.prevent_default()
        copy: Typed
        if isinstance(event, events.Paste):
            copy = events.Paste(event.text)
        else:
            copy = events.Key(event.key, event.character)
        copy.time = event.time  # when the terminal gave it (dialogs read it)
        if self.handed_over:
            self.app.post_message(copy)
        else:
            self.kept.append(copy)

    def hand_over(self, editor: Editor) -> None:
        """Apply what was kept to `editor`, in order. Text, pastes, backspaces, line breaks
        and Enter go straight into it, exactly as typed there; from the first other key on
        (an arrow, a mode's key) the rest is typed again through the app, as a terminal's
        keys are. What reaches this prompt later is typed again at once."""
        self.handed_over = True
        self.can_focus = False
        kept, self.kept = self.kept, []
        for index, typed in enumerate(kept):
            if not _edit(editor, typed):
                for rest in kept[index:]:
                    self.app.post_message(rest)
                return

    def typed(self) -> str:
        """The text the kept keys would make (for a quit that would drop it)."""
        text = ""
        for typed in self.kept:
            if isinstance(typed, events.Paste):
                text += typed.text
            elif typed.key == "backspace":
                text = text[:-1]
            elif typed.key == "enter" or typed.key in LINE_BREAK_KEYS:
                text += "\n"  # a kept Enter has sent nothing yet: a quit would drop it too
            elif typed.is_printable and typed.character:
                text += typed.character
        return text


def _edit(editor: Editor, typed: Typed) -> bool:
    """Apply one kept key or paste as the editor would; False for a key it cannot."""
    if isinstance(typed, events.Paste):
        editor.insert(typed.text)
    elif typed.key == "enter":
        editor.send()
    elif typed.key in LINE_BREAK_KEYS:
        editor.insert("\n")
    elif typed.key == "backspace":
        editor.action_delete_left()
    elif typed.is_printable and typed.character:
        editor.insert(typed.character)
    else:
        return False
    return True


async def take_place(screen: Screen[Any], early: EarlyPrompt, editor: W) -> W:
    """Mount `editor` in `early`'s place, in one frame, give it the focus if the early
    prompt had it, or nothing had, or keys were kept, and hand it what was kept."""
    with screen.app.batch_update():
        await screen.mount(editor, before=early)
        if early.kept or screen.focused in (early, None):
            editor.focus()
        early.hand_over(cast(Editor, editor))  # a widget that edits: `PromptInput`
        early.display = False  # out of the layout now; removed once its keys are passed on
    screen.call_after_refresh(early.remove)
    return editor
