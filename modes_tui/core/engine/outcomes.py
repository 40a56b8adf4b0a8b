"""How each step of a turn ends: one value, a closed union, acted on by the loop in
`core.engine.turn` (nothing ends a round by a flag or an exception).

    AnswerDone    the model answered with text (stored): the turn is done
    RunTools      the model asked for tools (its message stored): run them, then go round
    HandOff       a `switch_mode` call went through: the rest of the turn is that mode's
    LimitReached  the model still asked for tools on the turn's last model call
    Cancelled     the user stopped the turn, or its caller went away (`abandoned`)
    Failed        the turn cannot go on: the budget refused it, a provider failed, a bug

A step that ends with none of them lets the turn go on (the next round). A stop the user
asked for, a provider's error and a bug become `Cancelled` and `Failed` at the step's edge
(`Turn`), so a step's code may raise them from any depth.
"""

from __future__ import annotations

from dataclasses import dataclass

from modes_tui.core.errors import ProviderError
from modes_tui.core.history.conversation import Message
from modes_tui.core.model.wire import ToolCall, ToolCallChunk

__all__ = [
    "ENDINGS",
    "NOT_RETRYABLE",
    "OUTCOMES",
    "AnswerDone",
    "Cancelled",
    "Ending",
    "Failed",
    "HandOff",
    "LimitReached",
    "Outcome",
    "RunTools",
]

NOT_RETRYABLE = frozenset({"auth", "context_too_long", "not_found", "bad_request"})
"""Provider failures that the same request would meet again (no retry, no fallback)."""


@dataclass(frozen=True, slots=True)
class AnswerDone:
    """The model answered with text; `message` is in the history already."""

    message: Message


@dataclass(frozen=True, slots=True)
class RunTools:
    """The model asked for `calls`; its message is in the history and the log already."""

    calls: tuple[ToolCallChunk, ...]


@dataclass(frozen=True, slots=True)
class HandOff:
    """`call` (a `switch_mode`) went through: the next rounds are its mode's."""

    call: ToolCall


@dataclass(frozen=True, slots=True)
class LimitReached:
    """The model was still calling tools when the turn ran out of its `rounds` model calls."""

    rounds: int


@dataclass(frozen=True, slots=True)
class Cancelled:
    """The user stopped the turn; `abandoned`: its caller went away (nobody hears the end)."""

    abandoned: bool = False


@dataclass(frozen=True, slots=True)
class Failed:
    """The turn cannot go on: what went wrong (`error`, `kind`), what to do (`hint`), and
    whether the same turn may work again (`retryable`)."""

    error: str
    kind: str
    hint: str
    retryable: bool

    @classmethod
    def provider(cls, error: ProviderError) -> Failed:
        """A provider's failure, as the user reads it."""
        where = f" ({error.model})" if error.model else ""
        return cls(
            f"{error.kind.replace('_', ' ')}{where}: {error.provider_message}",
            error.kind,
            error.hint,
            retryable=error.kind not in NOT_RETRYABLE,
        )

    @classmethod
    def internal(cls, error: Exception) -> Failed:
        """A bug in modes-tui: the error is shown."""
        return cls(
            f"{type(error).__name__}: {error}",
            "internal",
            "this is a bug in modes-tui (the error is shown above). Retry may work.",
            retryable=True,
        )


Outcome = AnswerDone | RunTools | HandOff | LimitReached | Cancelled | Failed
"""How a step ended (a step may also end with none: the turn goes on)."""
Ending = AnswerDone | LimitReached | Cancelled | Failed
"""How a turn ends: what the close phase (`core.engine.close.end`) is given, once."""

OUTCOMES = (AnswerDone, RunTools, HandOff, LimitReached, Cancelled, Failed)
ENDINGS = (AnswerDone, LimitReached, Cancelled, Failed)
