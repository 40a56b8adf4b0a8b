"""The model seam: what the core needs from a model, as a Protocol, and what a model can do.

Below every part that calls a model (the engine's rounds, the chat and judge routing
backends), so none of them imports another to reach it. What crosses the seam (requests,
model events) is in `wire.py` beside it.

    port                adapters                                    fakes in tests
    ChatModel           llm.litellm_model.LiteLLMChatModel          llm.fake.ScriptedModel
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from modes_tui.core.config.models import ModelPrice

if TYPE_CHECKING:
    from modes_tui.core.model.wire import Completion, ModelEvent, ModelRequest

__all__ = ["UNKNOWN_CAPABILITIES", "ChatModel", "ModelCapabilities"]


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
