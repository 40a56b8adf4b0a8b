"""What the context package needs from the world outside the core: a model's own tokenizer.

    port          adapters                                           fake in tests
    TokenCounter  llm.litellm_model.LiteLLMChatModel (litellm's      tests count words
                  token_counter; the GGUF's tokenizer in the local
                  model's process)

A model that has no known tokenizer gets the stated estimate of `core.context.tokens`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["CountedTokens", "TokenCounter"]


@dataclass(frozen=True, slots=True)
class CountedTokens:
    """Token counts of some texts, by a named tokenizer."""

    counts: tuple[int, ...]
    """Tokens of each text, in order."""
    tokenizer: str
    """Which tokenizer counted them, in words (the inspector and the log show it)."""


@runtime_checkable
class TokenCounter(Protocol):
    """Anything that knows a model's own tokenizer (the model adapter)."""

    def count_tokens(self, model: str, texts: Sequence[str]) -> CountedTokens | None:
        """Tokens of each text as `model` counts them; None when its tokenizer is unknown.
        May block (a tokenizer loads, a child process answers): callers run it off the loop."""
        ...
