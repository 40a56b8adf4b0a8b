"""The engine's ports: what a turn needs from the world outside the core, as Protocols.

The engine talks to models and the user only through these; the adapters live outside the
core, and tests pass fakes. What crosses the model seam (requests, model events) is in
`core/engine/wire.py`. The other parts keep their own ports beside what uses them:
`core/routing/ports.py` (Encoder, Classifier, CorrectionSource), `core/config/ports.py`
(ControlSource), `core/history/ports.py` (SessionWriter), `core/tools/ports.py`
(ToolServers), `core/packs/ports.py` (Mode).

    port                adapters                                    fakes in tests
    ChatModel           llm.litellm_model.LiteLLMChatModel          llm.fake.ScriptedModel
    Confirmer           tui.confirm.DialogConfirmer, the REPL's prompt and pipe
    Asker               the app's question dialog, the REPL's y/n prompt
    Guard               engine.guards (repeats, tool budget, confirmation), user guards
    CorrectionRecorder  store.corrections.CorrectionStore           MemoryCorrections
    Restorable          engine.Engine (resume, fork)
    TurnEngine          engine.Engine, as the front ends drive it   scripted engines

The values they speak in (`Decision`, `HistoryEntry`, `RecordType`, ...) stay with their
own modules.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from modes_tui.core.config.models import ModelPrice

if TYPE_CHECKING:
    from modes_tui.core.edits.checkpoints import Checkpoints, UndoPlan, UndoResult
    from modes_tui.core.edits.editor import Change
    from modes_tui.core.engine.guards import PendingCall, Verdict
    from modes_tui.core.engine.questions import Question
    from modes_tui.core.engine.rerun import RoutedTurn
    from modes_tui.core.engine.wire import Completion, ModelEvent, ModelRequest
    from modes_tui.core.history.compaction import Compaction
    from modes_tui.core.history.conversation import Conversation, ToolCall
    from modes_tui.core.history.events import TurnEvent
    from modes_tui.core.routing.corrections import Correction
    from modes_tui.core.routing.router import Route
    from modes_tui.core.tools.registry import Tool

__all__ = [
    "Asker",
    "ChatModel",
    "Confirmer",
    "CorrectionRecorder",
    "Guard",
    "ModelCapabilities",
    "Restorable",
    "TurnEngine",
]


@dataclass(frozen=True, slots=True)
class ModelCapabilities:
    """What one model can do and costs, as its adapter knows it."""

    tools: bool = True
    """Whether it can call functions (the mode's tools are offered only then)."""
    reasoning: bool = False
    """Whether `reasoning_effort` means anything to it (a mode's `thinking`)."""
    logprobs: bool = False
    """Whether it returns token log probabilities (the judge router needs them)."""
    price: ModelPrice | None = None
    """USD per token, or None when unknown (the cost ledger, the budget)."""
    context_window: int | None = None
    """Input tokens it accepts, or None when unknown."""


UNKNOWN_CAPABILITIES = ModelCapabilities(tools=False)
"""What the engine assumes when asking a model's capabilities failed: nothing optional."""


@runtime_checkable
class ChatModel(Protocol):
    """Anything that can answer a ModelRequest."""

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream the answer. Raises ProviderError on failure."""
        ...

    async def complete(self, request: ModelRequest) -> Completion:
        """The whole answer at once. Raises ProviderError on failure."""
        ...

    def capabilities(self, model: str) -> ModelCapabilities:
        """What `model` (an id or a configured alias) can do. May be slow the first time
        (an adapter may import its library): the engine asks off the event loop."""
        ...


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
    the session store need from `core.engine.Engine.restore`."""

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
    """The engine as the front ends drive it (`core.engine.Engine`): the one view that
    `frontend/`, `tui/` and `repl/` share. Turns come back as event streams."""

    conversation: Conversation
    """The shared history."""

    def run_turn(self, text: str, *, force: str | None = None) -> AsyncIterator[TurnEvent]:
        """Route and answer one user message (`force`: the mode of this message only)."""
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
