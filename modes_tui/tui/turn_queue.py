"""The turn queue: whether a turn runs, which sent messages wait for it, which sent message is
back in the prompt to be edited, and the rules between the three.

What Enter, up and esc do depends on these three together: a message sent while a turn runs
(or while others wait) waits its turn; up takes back the newest waiting message before it
offers the last sent one for editing; an edit is resent in place of its turn only when
nothing runs and nothing waits; esc drops an edit only while no turn runs. The app asks the
queue and shows the answer; no other part sets these states.

No textual here: the waiting messages live in the widget that shows them (`PendingMessages`),
seen through the small `WaitingLine` protocol, so the rules can be tested without an app.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, Literal, NamedTuple, Protocol, TypeVar

from modes_tui.core.control_setting import OFF

if TYPE_CHECKING:
    from modes_tui.core.history.transcript import TurnTranscript
    from modes_tui.frontend.commands import OneShot
    from modes_tui.frontend.lines import Send


class Sent(NamedTuple):
    """A line sent with Enter, read once (`frontend.lines.read_line`) when it was sent.

    This value and `Submission` are named tuples, not frozen dataclasses: they load before
    the first frame, and a frozen dataclass compiles six methods at import (0.3 ms each).
    """

    line: str
    """As typed: what the waiting row shows and what up puts back in the prompt."""
    message: Send | OneShot
    """What runs: the text, and the mode of a one-shot `/MODE text`."""


T = TypeVar("T")


class WaitingLine(Protocol[T]):
    """The messages sent while a turn runs, oldest first."""

    def __len__(self) -> int: ...

    async def add(self, item: T) -> None: ...

    async def take_first(self) -> T | None: ...

    async def take_last(self) -> T | None: ...


class Submission(NamedTuple):
    """What Enter does with a sent line."""

    action: Literal["run", "replace", "wait"]
    """Run it now, resend it in place of the edited turn, or let it wait its turn."""
    replacing: TurnTranscript | None = None
    """The edited turn it replaces (`replace` only)."""
    waiting: int = 0
    """How many messages wait now (`wait` only)."""


Recall = Literal["take back", "edit"]
"""What up in an empty prompt does: take the newest waiting message back, or edit the last
sent one."""


class TurnQueue(Generic[T]):
    """Running, waiting and editing, and the rules between them."""

    def __init__(
        self, waiting: Callable[[], WaitingLine[T]], *, changed: Callable[[], None] = lambda: None
    ) -> None:
        self._line = waiting
        """The waiting messages (found when needed: the widget is mounted after the app)."""
        self._changed = changed
        """Called when a turn starts or ends (the app's keys depend on it)."""
        self._running = False
        self._editing: TurnTranscript | None = None

    @property
    def _waiting(self) -> WaitingLine[T]:
        return self._line()

    # ---------------------------------------------------------------- what is true now

    @property
    def running(self) -> bool:
        """A turn runs (or waits for the engine to be built)."""
        return self._running

    @property
    def editing(self) -> TurnTranscript | None:
        """The turn whose message is back in the prompt to be edited and resent."""
        return self._editing

    @property
    def waiting(self) -> int:
        """How many sent messages wait for the running turn."""
        return len(self._waiting)

    @property
    def idle(self) -> bool:
        """Nothing runs and nothing waits: a sent message runs at once."""
        return not self._running and not len(self._waiting)

    # ---------------------------------------------------------------- turns

    def start(self) -> None:
        """A turn starts (set before its worker runs, so a second one cannot slip in)."""
        self._running = True
        self._changed()

    def finish(self) -> None:
        """The running turn ended (answered, failed, cancelled or broken)."""
        self._running = False
        self._changed()

    async def next_waiting(self) -> T | None:
        """A turn ended: the first waiting message, out of the line (None: nothing to run)."""
        if self._running or not len(self._waiting):
            return None
        return await self._waiting.take_first()

    def can_retry(self, last: TurnTranscript | None) -> bool:
        """ctrl+r can run the last turn again now."""
        return last is not None and retryable(last) and not self._running

    # ---------------------------------------------------------------- the prompt's keys

    async def submit(self, sent: T) -> Submission:
        """Enter with `sent` (not a command): any edit ends here, whatever happens to it."""
        editing, self._editing = self._editing, None
        if editing is not None and self.idle:
            return Submission("replace", replacing=editing)
        if not self.idle:
            # queued as read at Enter (`//x`, `/code x`): it runs as read, or comes back with
            # up as typed
            await self._waiting.add(sent)
            return Submission("wait", waiting=len(self._waiting))
        return Submission("run")

    def recall(self, last: TurnTranscript | None) -> Recall | None:
        """Up in an empty prompt; `last` is the last turn when it is on screen. "edit" puts
        that turn in `editing`; None lets up walk the prompt's history."""
        if len(self._waiting):
            return "take back"
        if last is None or self._running or last.superseded_by is not None:
            return None
        self._editing = last
        return "edit"

    async def take_back(self) -> T | None:
        """The newest waiting message, out of the line (back into the prompt)."""
        return await self._waiting.take_last()

    @property
    def can_cancel(self) -> bool:
        """esc has something to stop: the running turn, or an edit."""
        return self._running or self._editing is not None

    def cancel(self) -> Literal["edit", "turn"] | None:
        """esc: drops an edit while no turn runs ("edit"), else stops the running turn
        ("turn", the caller tells the engine)."""
        if self._editing is not None and not self._running:
            self._editing = None
            return "edit"
        return "turn" if self._running else None

    def stop_editing(self) -> bool:
        """The edit ends (the prompt was emptied, or the session changed); True if one did."""
        was_editing = self._editing is not None
        self._editing = None
        return was_editing


def retryable(record: TurnTranscript) -> bool:
    """A turn ctrl+r runs again: failed with a retryable error, or cancelled by the user
    (a cancelled turn keeps its message, so the engine can answer it again)."""
    if record.superseded_by is not None:
        return False
    if record.status == "cancelled":
        return True
    return record.failure is not None and record.failure.retryable


def typed_line(record: TurnTranscript) -> str:
    """The line that sends `record`'s message again as it was sent: `/MODE text` for a
    one-shot, `//x` for a message that starts with a slash, else the message itself."""
    route = record.route
    if route is not None and route.one_shot and route.mode_name != OFF:
        return f"/{route.mode_name} {record.user_text}"
    if record.user_text.startswith("/"):
        return f"/{record.user_text}"
    return record.user_text


def unsent(draft: str, waiting: int) -> str:
    """What quitting now would drop that the user typed and never sent ("" for nothing):
    a draft with anything but spaces in it, and the messages waiting for their turn."""
    parts = ["your draft"] if draft.strip() else []
    if waiting:
        parts.append("1 waiting message" if waiting == 1 else f"{waiting} waiting messages")
    return " and ".join(parts)
