"""What the conversation's helpers see of it: its parts on screen and its state; `Part`
finds a part once.

`ConversationScreen` is the one implementation; the turn runner, the command handlers and
the session actions take it as this protocol, so none of them imports the screen (the
screen imports them) and each can be read without it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import tzinfo
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from textual.dom import DOMNode
from textual.widget import Widget

if TYPE_CHECKING:
    from textual.app import App
    from textual.message import Message

    from modes_tui.core.control_setting import ControlReading
    from modes_tui.core.engine.ports import TurnEngine
    from modes_tui.core.history.events import TurnFailed
    from modes_tui.core.history.transcript import TurnTranscript
    from modes_tui.tui.chat import ChatLog
    from modes_tui.tui.keys import ModeKey
    from modes_tui.tui.panel import RoutePanel
    from modes_tui.tui.prompt import PromptInput
    from modes_tui.tui.services import AppServices
    from modes_tui.tui.status import ModeHeader, StatusLine
    from modes_tui.tui.turn_queue import Sent, TurnQueue


W = TypeVar("W", bound=Widget)


class Part(Generic[W]):
    """A widget of a screen, found by its selector the first time and kept (it is found on
    the conversation even while another screen is on top)."""

    def __init__(self, selector: str, kind: type[W]) -> None:
        self._selector = selector
        self._kind = kind
        self._key = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._key = f"_part_{name}"

    def __get__(self, node: DOMNode, owner: type | None = None) -> W:
        found = node.__dict__.get(self._key)
        if not isinstance(found, self._kind):
            found = node.query_one(self._selector, self._kind)
            node.__dict__[self._key] = found
        return found


class LatePart(Part[W]):
    """A part whose class is imported when it is first looked up (`kind` returns it): the
    prompt's editor, which is mounted after the first frame (`early_prompt`)."""

    def __init__(self, selector: str, kind: Callable[[], type[W]]) -> None:
        self._selector = selector
        self._load = kind
        self._key = ""

    @property
    def _kind(self) -> type[W]:  # type: ignore[override]
        return self._load()


class ConversationParts(Protocol):
    """The conversation as its helpers use it."""

    records: list[TurnTranscript]
    """Every turn of the session on screen, in order; the last one's number is the newest."""
    turns: TurnQueue[Sent]
    """Running, waiting and editing."""
    tz: tzinfo | None
    """Time zone for times on screen."""

    @property
    def engine(self) -> TurnEngine | None:
        """The engine, once built."""
        ...

    @property
    def services(self) -> AppServices | None:
        """What the app was given (None while it is still being prepared)."""
        ...

    @property
    def mode_keys(self) -> list[ModeKey]:
        """The keys that force each mode."""
        ...

    @property
    def chat(self) -> ChatLog: ...

    @property
    def panel(self) -> RoutePanel: ...

    @property
    def header(self) -> ModeHeader: ...

    @property
    def status(self) -> StatusLine: ...

    @property
    def prompt(self) -> PromptInput: ...

    @property
    def reading(self) -> ControlReading:
        """The control file's setting, as last read."""
        ...

    def mode_names(self) -> list[str]:
        """The modes that can be forced now."""
        ...

    def set_setting(self, setting: str) -> bool:
        """Write the control file; False when it was refused (the status line says why)."""
        ...

    def action_why(self) -> None:
        """The inspector for the last turn."""
        ...

    def action_copy_answer(self) -> None:
        """Copy the last answer."""
        ...

    def action_correct(self) -> None:
        """The correction picker."""
        ...

    @property
    def app(self) -> App[Any]:
        """The app (notifications, screens, the clipboard)."""
        ...

    def post_message(self, message: Message) -> bool:
        """Post a message to the conversation (safe from a thread)."""
        ...

    def startup_failure(self) -> TurnFailed:
        """Why a message cannot run when the engine is not there."""
        ...

    async def engine_settled(self) -> TurnEngine | None:
        """The engine once it is built or has failed (waits while it is being built)."""
        ...
