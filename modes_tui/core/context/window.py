"""How many tokens a request may hold: the model's context window minus room for the answer.

The window comes from the model's capabilities (an alias's `context_window` in config.yaml,
else litellm's model map; the embedded model's `n_ctx` is registered in that map). The
answer gets the request's `max_tokens` when set, else a quarter of the window (at most
`ANSWER_ROOM_CAP`), and never more than half: a prompt always keeps half the window.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ANSWER_ROOM_CAP", "ContextBudget", "budget_for"]

ANSWER_ROOM_CAP = 4096
"""The most tokens kept free for an answer whose length is not capped."""
COMPACT_AT = 0.8
"""Older turns are compacted once a request would fill this share of its budget."""


@dataclass(frozen=True, slots=True)
class ContextBudget:
    """The tokens one request may use."""

    window: int
    """The model's context window (input tokens it accepts)."""
    answer: int
    """Tokens kept free for the answer."""

    @property
    def prompt(self) -> int:
        """Tokens the request itself may hold."""
        return self.window - self.answer

    @property
    def compact_at(self) -> int:
        """Above this many request tokens, older turns are compacted."""
        return int(self.prompt * COMPACT_AT)


def budget_for(window: int | None, max_tokens: int | None) -> ContextBudget | None:
    """The budget of a request to a model with `window`; None when the window is unknown."""
    if window is None or window <= 0:
        return None
    wanted = max_tokens if max_tokens else min(window // 4, ANSWER_ROOM_CAP)
    return ContextBudget(window, max(1, min(wanted, window // 2)))
