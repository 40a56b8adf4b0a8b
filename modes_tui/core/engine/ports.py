"""The engine's ports: what a turn needs from the world outside the core, as Protocols.

The engine talks to the user and the stores only through these; the adapters live outside
the core, and tests pass fakes. The model seam (`ChatModel`, `ModelCapabilities`, and what
crosses it) is in `core/model/`: the routing backends call a model too, below the engine.
A port lives in the lowest part that owns the value it speaks in, even when only the engine
calls it: `core/routing/ports.py` (Encoder, Classifier, CorrectionSource),
`core/config/ports.py` (ControlSource: reads a `ControlReading`), `core/history/ports.py`
(SessionWriter: writes `SessionRecord`s), `core/tools/ports.py` (ToolServers),
`core/packs/ports.py` (Mode).

    port                adapters                                    fakes in tests
    Confirmer           tui.confirm.DialogConfirmer, the REPL's prompt and pipe
    Asker               the app's question dialog, the REPL's y/n prompt
    Chooser             the app's doubt dialog (an Asker that can also pick a mode)
    Guard               engine.guards (repeats, tool budget, confirmation), user guards
    CorrectionRecorder  store.corrections.CorrectionStore           MemoryCorrections
    Restorable          engine.Engine (resume, fork)
    TurnEngine          engine.Engine, as the front ends drive it   scripted engines

The values they speak in (`Decision`, `HistoryEntry`, `RecordType`, ...) stay with their
own modules.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from modes_tui.core.edits.checkpoints import Checkpoints, UndoPlan, UndoResult
    from modes_tui.core.edits.editor import Change
    from modes_tui.core.engine.questions import ModeChoice, Question
    from modes_tui.core.engine.verdicts import PendingCall, Verdict
    from modes_tui.core.history.compaction import Compaction
    from modes_tui.core.history.conversation import Conversation
    from modes_tui.core.history.events import TurnEvent
    from modes_tui.core.model.wire import ToolCall
    from modes_tui.core.tools.registry import Tool
    from modes_tui.core.values.correction import Correction
    from modes_tui.core.values.route import Route, RoutedTurn

__all__ = [
    "Asker",
    "Chooser",
    "Confirmer",
    "CorrectionRecorder",
    "Guard",
    "Restorable",
    "TurnEngine",
]


@runtime_checkable
class Guard(Protocol):
    """Sees each pending tool call before it runs."""

    def check(self, pending: PendingCall) -> Verdict | Awaitable[Verdict | None] | None:
        """None lets the call through; a verdict closes it. May be sync or async."""
        ...


class Confirmer(Protocol):
    """Whoever can say yes or no to a tool call (the TUI's dialog, the REPL's prompt)."""

    async def confirm(self, call: ToolCall, tool: Tool, preview: Change | None = None) -> bool:
        """True to run the call; False declines it (the model reads the reason). `preview`:
        the change a write_file / edit_file call would make (its diff is shown)."""
        ...


class Restorable(Protocol):
    """An engine that can carry on a saved session (resume, fork): what the REPL, the app and
    the session store need from `core.engine.engine.Engine.restore`."""

    def restore(
        self,
        conversation: Conversation,
        *,
        turn: int,
        mode: str | None,
        routes: Sequence[Route] = (),
        routed: Sequence[RoutedTurn] = (),
        checkpoints: Checkpoints | None = None,
    ) -> None:
        """Take the history, the last turn number, the current mode and the decisions (and
        the files the turns changed, for `/undo`)."""
        ...


class TurnEngine(Restorable, Protocol):
    """The engine as the front ends drive it (`core.engine.engine.Engine`): the one view that
    `frontend/`, `tui/` and `repl/` share. Turns come back as event streams."""

    conversation: Conversation
    """The shared history."""

    def run_turn(self, text: str, *, force: str | None = None) -> AsyncIterator[TurnEvent]:
        """Route and answer one user message (`force`: the mode of this message only)."""
        ...

    def prepare(self, draft: str) -> None:
        """Do ahead, while the user types `draft`, the work its route will need (blocking:
        call it in a thread; it never raises)."""
        ...

    def retry(self) -> AsyncIterator[TurnEvent]:
        """Run the last turn again."""
        ...

    def resend(self, text: str, *, force: str | None = None) -> AsyncIterator[TurnEvent]:
        """Replace the last turn with an edited message (`force`: its `/MODE`)."""
        ...

    def correct(
        self, mode: str, *, turn: int | None = None, rerun: bool = True
    ) -> AsyncIterator[TurnEvent]:
        """Say a turn belonged to `mode`: the latest is answered again in it (unless `rerun`
        is False: a hand-off the user keeps), an earlier one only recorded. Raises ModesError
        (CorrectionRefused) when it cannot be done."""
        ...

    def plan_undo(self, count: int = 1) -> UndoPlan:
        """What `/undo count` would put back."""
        ...

    def undo(self, plan: UndoPlan, *, overwrite: bool = False) -> UndoResult:
        """Put back the files of the last turns that changed some."""
        ...

    def undo_correction(self) -> Correction:
        """Forget the latest correction of this session; raises ModesError when none."""
        ...

    def cancel(self) -> None:
        """Ask the running turn to stop; it then yields TurnCancelled."""
        ...

    def clear(self) -> None:
        """Forget the conversation."""
        ...

    async def compact(self) -> Compaction:
        """Summarise every turn but the latest for the model (`/compact`); raises ModesError
        (CompactionRefused) while a turn runs or when there is nothing to summarise."""
        ...


@runtime_checkable
class CorrectionRecorder(Protocol):
    """Where corrections are written: `modes_tui.store.corrections.CorrectionStore`, or
    `MemoryCorrections` in tests."""

    def add(self, correction: Correction) -> Correction:
        """Record one correction (on disk when this returns, for the store)."""
        ...

    def remove(self, correction_id: str) -> bool:
        """Forget one correction; False when it is not there."""
        ...


@runtime_checkable
class Asker(Protocol):
    """Whoever can answer a Question."""

    async def ask(self, question: Question) -> bool:
        """True for yes."""
        ...


@runtime_checkable
class Chooser(Protocol):
    """Whoever can pick the mode of a message the router is unsure of (the app's doubt
    dialog). An asker without `choose` (the REPL, a pipe) is never asked: the pick runs."""

    async def choose(self, choice: ModeChoice) -> str | None:
        """The mode to run (one of `choice.modes`); None: the router's pick runs."""
        ...
