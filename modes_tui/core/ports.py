"""The ports: what the core needs from the world outside it, as Protocols.

The core (engine, router, classifiers, costs) talks to models, encoders, the session log,
the control file and the user only through these; the adapters live outside the core
(`modes_tui.llm`, `modes_tui.store`, `modes_tui.tui`, `modes_tui.repl`), and tests pass
fakes. What crosses the model seam (requests, model events) is in `modes_tui.core.engine.wire`.

    port            adapters                                   fakes in tests
    ChatModel       llm.litellm_model.LiteLLMChatModel         llm.fake.ScriptedModel
    Encoder         llm.encoders (MiniLM, sentence-transformers, litellm)   HashingEncoder
    Classifier      core.classifiers.* (keyword, embedding, chat, judge, cascade)
    SessionWriter   store.sessions.SessionLog                  a list of records
    TurnEngine      core.engine.Engine (what frontend/, tui/ and repl/ drive)   scripted engines
    ControlSource   store.control.ControlFile                  a fixed reading
    Confirmer       tui.confirm.DialogConfirmer, repl.questions.PromptConfirmer / PipeConfirmer
    Guard           core.engine.guards (repeated calls, tool budget, confirmation), user guards

Every port is defined here, so a consumer imports them from one place; the values they speak
in (`Decision`, `HistoryEntry`, `RecordType`, ...) stay with their own modules.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Union, runtime_checkable

from modes_tui.core.models import ModelPrice

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from modes_tui.core.control import ControlReading
    from modes_tui.core.conversation import Conversation, ToolCall
    from modes_tui.core.corrections import Correction
    from modes_tui.core.engine.correcting import RoutedTurn
    from modes_tui.core.engine.guards import PendingCall, Verdict
    from modes_tui.core.engine.wire import Completion, ModelEvent, ModelRequest
    from modes_tui.core.events import TurnEvent
    from modes_tui.core.profiles import Profile
    from modes_tui.core.records import RecordType
    from modes_tui.core.routing import Decision, Route
    from modes_tui.core.routing_input import HistoryEntry
    from modes_tui.core.tools import Tool

__all__ = [
    "ChatModel",
    "Classifier",
    "Confirmer",
    "ControlSource",
    "EncodedTexts",
    "Encoder",
    "Guard",
    "ModelCapabilities",
    "Restorable",
    "SessionWriter",
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


EncodedTexts = Union["npt.NDArray[np.float32]", list[list[float]]]
"""What an encoder returns: a (texts x dimensions) float32 array, or plain lists."""


@runtime_checkable
class Encoder(Protocol):
    """Turns texts into vectors for the embedding router."""

    name: str
    """Identifies the encoder (cache keys include it)."""

    def encode(self, texts: Sequence[str]) -> EncodedTexts:
        """One L2-normalised vector per text, in order."""
        ...


class ControlSource(Protocol):
    """Anything that can say what the control setting is."""

    def read(self) -> ControlReading:
        """The setting now; never raises for a missing or invalid file."""
        ...


@runtime_checkable
class Guard(Protocol):
    """Sees each pending tool call before it runs."""

    def check(self, pending: PendingCall) -> Verdict | Awaitable[Verdict | None] | None:
        """None lets the call through; a verdict closes it. May be sync or async."""
        ...


class Confirmer(Protocol):
    """Whoever can say yes or no to a tool call (the TUI's dialog, the REPL's prompt)."""

    async def confirm(self, call: ToolCall, tool: Tool) -> bool:
        """True to run the call; False declines it (the model reads the reason)."""
        ...


@runtime_checkable
class Classifier(Protocol):
    """Anything that can pick a mode. `classify` may be sync or async."""

    def classify(
        self,
        message: str,
        history: Sequence[HistoryEntry],
        modes: Sequence[Profile],
        instructions: str,
        inputs: Mapping[str, Any],
    ) -> Decision | Awaitable[Decision]:
        """Pick a mode for `message`."""
        ...


class SessionWriter(Protocol):
    """Where the engine writes what happened, one record at a time."""

    def record(self, type: RecordType, turn: int, **fields: Any) -> None:
        """Append one record; it is on disk (flushed) when this returns."""
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
    ) -> None:
        """Take the history, the last turn number, the current mode and the decisions."""
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

    def correct(self, mode: str, *, turn: int | None = None) -> AsyncIterator[TurnEvent]:
        """Say a turn belonged to `mode`: the latest is answered again in it, an earlier one
        only recorded. Raises ModesError (CorrectionRefused) when it cannot be done."""
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
