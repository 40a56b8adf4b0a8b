"""The prompt of the first frame keeps what is typed and hands it to the editor in order."""

from __future__ import annotations

from datetime import UTC
from typing import ClassVar

import pytest
from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.command import CommandPalette
from textual.widgets import Static

from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.conversation import ConversationScreen
from modes_tui.tui.early_prompt import EarlyPrompt, take_place
from modes_tui.tui.prompt import PromptInput
from tests.support.tui_support import services, until


class Late(App[None]):
    """An early prompt, the editor mounted in its place when the test says."""

    BINDINGS: ClassVar = [Binding("f2", "force", "Force a mode")]

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []
        self.forced = 0

    def action_force(self) -> None:
        self.forced += 1

    def compose(self) -> ComposeResult:
        yield Static("chat")
        yield EarlyPrompt(Text("Ask anything"), id="early")

    def on_mount(self) -> None:
        self.query_one(EarlyPrompt).focus()

    @on(PromptInput.Submitted)
    def _sent(self, event: PromptInput.Submitted) -> None:
        self.sent.append(event.value)


async def test_keys_and_pastes_before_the_editor_reach_it_in_order() -> None:
    async with Late().run_test(size=(60, 10)) as pilot:
        app = pilot.app
        assert isinstance(app, Late)
        early = app.query_one(EarlyPrompt)
        await pilot.press(*"hi", "enter", "f2", *"ne")
        early.post_message(events.Paste("xt line"))
        await pilot.press("backspace")
        await pilot.pause()
        assert early.typed() == "hi\nnext lin"  # what a quit would say is dropped
        assert app.sent == [] and app.forced == 0  # kept, not acted on
        editor = PromptInput(id="prompt")
        await take_place(app.screen, early, editor)
        await pilot.pause()
        assert app.sent == ["hi"]  # Enter sent what came before it, as in the editor
        assert app.forced == 1  # a bound key typed early acts once, in its place
        assert editor.text == "next lin" and editor.has_focus
        await pilot.press("e")  # later keys go straight to the editor
        await pilot.pause()
        assert editor.text == "next line"
        assert not app.query(EarlyPrompt)  # gone once its keys were passed on


async def test_edits_before_the_editor_apply_in_the_order_typed() -> None:
    """Text, backspaces, line breaks and Enter typed early are applied to the editor as typed
    there, in order: "ab⌫c", a line break, "d", Enter sends "ac\\nd"; "x⌫y" stays."""
    async with Late().run_test(size=(60, 10)) as pilot:
        app = pilot.app
        assert isinstance(app, Late)
        early = app.query_one(EarlyPrompt)
        await pilot.press("a", "b", "backspace", "c", "ctrl+j", "d", "enter", "x", "backspace")
        await pilot.press("y")
        assert early.typed() == "ac\nd\ny" and app.sent == []  # what a quit would drop
        editor = PromptInput(id="prompt")
        await take_place(app.screen, early, editor)
        await pilot.pause()
        assert app.sent == ["ac\nd"]
        assert editor.text == "y"


async def test_keys_typed_on_another_part_before_the_editor_reach_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A click on the chat before the editor is in: what is typed next is kept all the same
    (ctrl+p included, which waits its turn instead of opening the palette over it), and the
    editor gets it, with the focus."""
    original = ConversationScreen._late

    async def not_yet(self: ConversationScreen) -> None:
        pass  # the test mounts the editor itself, once the keys are typed

    monkeypatch.setattr(ConversationScreen, "_late", not_yet)
    async with build_app(services(), tz=UTC).run_test(size=(100, 24)) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await pilot.pause()
        app.conversation.chat.focus()  # as a click on it does
        await pilot.press("h", "i", "tab", "ctrl+p")
        assert not app.conversation.editor_in
        assert app.conversation.draft == "hi"  # a quit now would say it drops "hi"
        assert not isinstance(app.screen, CommandPalette)
        app.conversation.call_later(original, app.conversation)
        await until(pilot, lambda: app.conversation.editor_in)
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        assert app.conversation.prompt.value == "hi"


async def test_a_burst_of_keys_with_a_backspace_edits_in_the_order_typed() -> None:
    """Keys that arrive together (a slow link, typed while the app was busy): the backspace
    deletes the character typed before it, not the last of the burst."""
    async with Late().run_test(size=(60, 10)) as pilot:
        app = pilot.app
        assert isinstance(app, Late)
        editor = PromptInput(id="prompt")
        await take_place(app.screen, app.query_one(EarlyPrompt), editor)
        await pilot.pause()
        for key, character in [("a", "a"), ("b", "b"), ("backspace", None), ("c", "c")]:
            app.post_message(events.Key(key, character))  # queued at once, as a burst
        await pilot.pause()
        assert editor.text == "ac"
