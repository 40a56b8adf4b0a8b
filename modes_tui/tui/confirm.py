"""Asking the user before a tool runs: the dialog and the `Confirmer` the engine calls."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from modes_tui.core.conversation import ToolCall

if TYPE_CHECKING:
    from textual.app import App


class ConfirmToolScreen(ModalScreen[bool]):
    """Run this tool call? Yes runs it; No tells the model the user refused."""

    DEFAULT_CSS = """
    ConfirmToolScreen { align: center middle; }
    ConfirmToolScreen > Vertical {
        width: 80%;
        max-width: 100;
        height: auto;
        max-height: 80%;
        border: thick $warning;
        background: $surface;
        padding: 1 2;
    }
    ConfirmToolScreen #confirm-title { text-style: bold; margin-bottom: 1; }
    ConfirmToolScreen #confirm-arguments { max-height: 20; overflow-y: auto; }
    ConfirmToolScreen Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    ConfirmToolScreen Button { margin-left: 2; }
    """

    BINDINGS: ClassVar = [
        Binding("y", "answer(True)", "Run", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "Refuse", id="confirm.no"),
    ]

    def __init__(self, call: ToolCall, description: str = "") -> None:
        super().__init__()
        self.call = call
        self.description = description

    def compose(self) -> ComposeResult:
        with Vertical():
            title = Text("Run ")
            title.append(self.call.name, style="bold cyan")
            title.append("?")
            yield Static(title, id="confirm-title")
            if self.description:
                yield Static(Text(self.description, style="dim"))
            arguments = json.dumps(dict(self.call.arguments), indent=2, ensure_ascii=False)
            yield Static(Syntax(arguments, "json", word_wrap=True), id="confirm-arguments")
            with Horizontal():
                yield Button("Refuse (n)", variant="error", id="refuse")
                yield Button("Run (y)", variant="success", id="run")

    def on_mount(self) -> None:
        self.query_one("#refuse", Button).focus()

    @on(Button.Pressed, "#run")
    def _run(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#refuse")
    def _refuse(self) -> None:
        self.dismiss(False)

    def action_answer(self, answer: bool) -> None:
        """Close with `answer`."""
        self.dismiss(answer)


class DialogConfirmer:
    """The engine's `Confirmer`: asks through `ConfirmToolScreen` and waits for the answer."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app

    async def confirm(self, call: ToolCall, tool: Any) -> bool:
        """True when the user lets the call run."""
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def done(result: bool | None) -> None:
            if not answer.done():
                answer.set_result(bool(result))

        description = str(getattr(tool, "description", "") or "")
        screen = ConfirmToolScreen(call, description)
        self.app.push_screen(screen, callback=done)
        try:
            return await answer
        except asyncio.CancelledError:
            if screen.is_attached:
                screen.dismiss(False)
            raise
