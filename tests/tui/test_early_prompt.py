"""The prompt of the first frame keeps what is typed and hands it to the editor in order."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from modes_tui.tui.early_prompt import EarlyPrompt, take_place
from modes_tui.tui.prompt import PromptInput


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
        assert early.typed() == "hinext lin"  # what a quit would say is dropped
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
