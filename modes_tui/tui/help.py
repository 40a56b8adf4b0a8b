"""The help overlay: every key and command over the conversation, never in it.

F1 or `/help` opens it; Esc, F1 or q closes it, and the conversation is as it was (nothing
is added to the chat, the export or the log).
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from modes_tui.frontend.commands import ONE_SHOT_HELP, ONE_SHOT_USAGE, commands_for
from modes_tui.tui.keys import ModeKey
from modes_tui.tui.prompt import PromptInput

KEYS = [
    ("shift+tab", "cycle: auto → each mode → auto"),
    ("ctrl+g / ctrl+o", "auto / modes off"),
    ("ctrl+b", "show or hide the route panel"),
    ("ctrl+t", "inspector for the last turn (/why)"),
    ("ctrl+e", "wrong mode? pick the mode that should have answered (/wrong)"),
    ("ctrl+n", "keep a hand-off as a correction (the router learns it)"),
    ("ctrl+r", "retry a failed turn"),
    ("ctrl+l", "copy the last answer (/copy)"),
    ("ctrl+p", 'command palette ("Force mode: …", every action)'),
    ("ctrl+q", "quit (/quit)"),
    ("f1", "this help (esc or f1 closes it)"),
]
"""The conversation's keys (the pack's mode keys come first)."""
PROMPT_KEYS = [
    ("enter", "send (while a turn runs, the message waits its turn)"),
    ("shift+enter / ctrl+j / alt+enter", "new line"),
    ("up", "in an empty prompt: edit the last message (resend replaces the turn)"),
    ("tab", "take the completion shown; else move to the chat"),
    ("esc", "cancel the running answer (or drop the edit of a message)"),
]
"""Keys while typing."""
MOVING_KEYS = [
    ("tab", "prompt → chat → route panel (the newest decision selected) → prompt"),
    ("up / down", "in the chat: scroll; in the route panel: pick a decision"),
    ("enter", "in the route panel: the inspector for the selected decision"),
    ("esc", "back to the prompt (also after a click anywhere)"),
    ("any letter", "typed into the prompt, wherever the focus is (here too: it closes the help)"),
]
"""Keys to move around without a mouse."""


def _section(title: str, rows: list[tuple[str, str]]) -> list[RenderableType]:
    """A bold title over a grid of keys and what they do (wrapped lines stay in column)."""
    grid = Table.grid(padding=(0, 3))
    grid.add_column(no_wrap=True, style="bold cyan")
    grid.add_column()
    for key, does in rows:
        grid.add_row(Text(key), Text(does))  # Text: a mode's name is never read as markup
    return [Text(title, style="bold"), Padding(grid, (0, 0, 1, 2))]


def help_text(mode_keys: list[ModeKey]) -> Group:
    """Keys and commands, a section each, keys in a column."""
    forced = [(mk.key, f"force {mk.mode}") for mk in mode_keys if mk.key]
    commands = [(spec.usage, spec.help) for spec in commands_for("app")]
    return Group(
        *_section("Keys", [*forced, *KEYS]),
        *_section("Typing", PROMPT_KEYS),
        *_section("Moving around by keyboard", MOVING_KEYS),
        *_section("Commands", [*commands, (ONE_SHOT_USAGE, ONE_SHOT_HELP)]),
        Text(
            "Keys can be rebound with keymap: in config.yaml (ids such as mode.code, "
            "mode.cycle, mode.auto, panel.toggle).",
            style="dim",
        ),
    )


class HelpScreen(ModalScreen[None]):
    """Keys and commands over the conversation; Esc or F1 closes it, and so does a letter,
    which is typed into the prompt as it would have been without the help on top."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical {
        width: 90%;
        max-width: 110;
        height: 90%;
        border: thick $accent;
        border-title-align: left;
        border-subtitle-align: right;
        background: $surface;
        padding: 0 1;
    }
    HelpScreen VerticalScroll { height: 1fr; }
    HelpScreen #help-text { padding: 1 1 0 1; }
    """

    BINDINGS: ClassVar = [
        Binding("escape", "close", "Close", id="help.close"),
        Binding("f1", "close", "Close", show=False),
    ]

    def __init__(self, mode_keys: list[ModeKey]) -> None:
        super().__init__()
        self._text = help_text(mode_keys)

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Help · keys and commands"
            box.border_subtitle = "↑ ↓ pgup pgdn scroll · esc or f1 closes"
            with VerticalScroll(id="help-body"):
                yield Static(self._text, id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def action_close(self) -> None:
        """Back to the conversation, as it was."""
        self.dismiss(None)

    def on_key(self, event: events.Key) -> None:
        """A letter closes the help and goes to the prompt (at once, so the next keys of
        the word follow it in order): typing never waits for the help to be closed."""
        if not (event.is_printable and event.character):
            return
        event.stop()
        event.prevent_default()
        stack = self.app.screen_stack
        if len(stack) > 1:
            for prompt in stack[-2].query(PromptInput).results():
                prompt.insert(event.character)
                prompt.focus()
                break
        self.dismiss(None)
