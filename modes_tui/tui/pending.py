"""Type-ahead: messages sent while a turn runs wait here, in order, until they start.

Each waiting message is one row with its first line, an Edit button (the text goes back
into the prompt and leaves the queue) and a remove button. The app takes the first one
when the running turn ends. Hidden while nothing waits.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Static

from modes_tui.tui.turn_queue import Sent

PREVIEW_CHARS = 200
"""How much of a waiting message its row shows."""


def preview(text: str) -> str:
    """The first line of a message, and how many more there are."""
    lines = text.strip().splitlines() or [""]
    first = lines[0] if len(lines[0]) <= PREVIEW_CHARS else lines[0][:PREVIEW_CHARS] + "…"
    more = len(lines) - 1
    return f"{first}  (+{more} line{'s' if more != 1 else ''})" if more else first


class PendingRow(Horizontal):
    """One waiting message."""

    DEFAULT_CSS = """
    PendingRow { height: 1; }
    PendingRow > Static { width: 1fr; height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    PendingRow > Button { margin: 0 0 0 1; min-width: 8; }
    """

    def __init__(self, number: int, text: str) -> None:
        super().__init__(classes="pending-row")
        self.number = number
        self.text = text

    def compose(self) -> ComposeResult:
        line = Text(f"↳ waiting #{self.number}  ", style="bold")
        line.append(preview(self.text))
        yield Static(line, classes="pending-text")
        yield Button("Edit", id=f"edit-{self.number}", classes="edit", compact=True)
        yield Button("✕", id=f"drop-{self.number}", classes="drop", compact=True, variant="error")


class PendingMessages(Vertical):
    """The queue of messages sent while a turn was running, oldest first."""

    DEFAULT_CSS = """
    PendingMessages {
        height: auto;
        max-height: 6;
        padding: 0 1;
        color: $text-muted;
        display: none;
    }
    PendingMessages.-waiting { display: block; }
    """

    class EditRequested(Message):
        """The user wants a waiting message back in the prompt."""

        def __init__(self, text: str) -> None:
            self.text = text
            """The message taken out of the queue."""
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[tuple[int, Sent]] = []
        """(number, message), oldest first; numbers only tell rows apart."""
        self._next = 1

    @property
    def texts(self) -> list[str]:
        """The waiting messages, in the order they will run."""
        return [sent.line for _, sent in self.items]

    def __len__(self) -> int:
        return len(self.items)

    async def add(self, item: Sent) -> None:
        """Queue a message at the end."""
        number = self._next
        self._next += 1
        self.items.append((number, item))
        self.add_class("-waiting")
        await self.mount(PendingRow(number, item.line))

    async def take_first(self) -> Sent | None:
        """The next message to run, out of the queue."""
        if not self.items:
            return None
        number, sent = self.items[0]
        await self._drop(number)
        return sent

    async def take_last(self) -> Sent | None:
        """The newest waiting message, out of the queue (up in an empty prompt)."""
        if not self.items:
            return None
        number, sent = self.items[-1]
        await self._drop(number)
        return sent

    async def _drop(self, number: int) -> Sent | None:
        found = next((sent for n, sent in self.items if n == number), None)
        self.items = [(n, t) for n, t in self.items if n != number]
        for row in self.query(PendingRow):
            if row.number == number:
                await row.remove()
        self.set_class(bool(self.items), "-waiting")
        return found

    @on(Button.Pressed, ".edit")
    async def _edit(self, event: Button.Pressed) -> None:
        event.stop()
        row = event.button.parent
        if isinstance(row, PendingRow):
            sent = await self._drop(row.number)
            if sent is not None:
                self.post_message(self.EditRequested(sent.line))

    class Removed(Message):
        """The user took a waiting message out of the queue (its ✕)."""

    @on(Button.Pressed, ".drop")
    async def _remove(self, event: Button.Pressed) -> None:
        event.stop()
        row = event.button.parent
        if isinstance(row, PendingRow):
            await self._drop(row.number)
            self.post_message(self.Removed())
