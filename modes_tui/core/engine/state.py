"""The engine's state: the conversation so far (`EngineState`) and the running turn's.

`EngineState` is what outlives a turn (history, turn count, mode, routes); `TurnState` is
what one turn produced so far, created by `Turn` and read by its phases (the request, the
tool calls, the close); `TurnSetup` is how the turn's mode runs, resolved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modes_tui.core.history.conversation import Conversation
from modes_tui.core.model.wire import ToolCall, ToolSpec, UsageReport
from modes_tui.core.packs.fields import HistoryWindow
from modes_tui.core.tools.registry import Tool
from modes_tui.core.values.route import Route

__all__ = [
    "Checkpointed",
    "EngineState",
    "RoundState",
    "StopRequested",
    "TurnSetup",
    "TurnState",
    "usage_dict",
]


class StopRequested(Exception):
    """The user asked to stop the running step (raised inside the engine only: a turn's step
    ends with the `Cancelled` outcome for it, `/compact` refuses)."""


@dataclass(slots=True)
class EngineState:
    """What outlives a turn: the shared history and where the conversation stands."""

    conversation: Conversation = field(default_factory=Conversation)
    """The shared history every mode reads."""
    turn: int = 0
    """The number of user turns so far."""
    mode: str | None = None
    """The mode of the latest turn (None: none yet, or `off`)."""
    turn_force: str | None = None
    """The mode the caller chose for the latest message (`/MODE text`), kept for a retry."""
    routes: list[Route] = field(default_factory=list)
    """Every route of the session, oldest first."""

    def entered_mode(self) -> str | None:
        """The mode the conversation is in by a choice that lasts: the latest route that was
        not a one-shot `/MODE text` (which answers one message and moves nothing). A routed
        turn into this mode needs no `auto_enter: confirm` question; a one-shot into shell
        is no consent for the router to stay there."""
        for route in reversed(self.routes):
            if not route.one_shot:
                return route.mode_name
        return None

    def last_user_index(self) -> int | None:
        """Where the latest user message is in the history (None: there is none)."""
        messages = self.conversation.messages
        for index in range(len(messages) - 1, -1, -1):
            if messages[index].role == "user":
                return index
        return None


@dataclass(frozen=True, slots=True)
class TurnSetup:
    """How this turn runs: the mode's configuration, resolved."""

    mode: str | None
    model: str
    thinking: str
    reasoning_effort: str | None
    tools: Mapping[str, Tool]
    specs: tuple[ToolSpec, ...]
    system: str
    window: HistoryWindow
    temperature: float | None
    max_tokens: int | None
    notes: tuple[str, ...]
    fallbacks: tuple[str, ...] = ()
    """Models still to try, in order, if this one fails with a retryable error."""
    role: str | None = None
    """The role (`fast`, `strong`) that gave `model`; None when the mode named a model."""


@dataclass(frozen=True, slots=True)
class Checkpointed:
    """How much of a round's streaming answer the checkpoints written so far hold."""

    text_chunks: int = 0
    """Chunks of text already written."""
    text_chars: int = 0
    """Characters of text already written (where the next checkpoint continues)."""
    reasoning_chunks: int = 0
    """Chunks of reasoning already written."""
    reasoning_chars: int = 0
    """Characters of reasoning already written."""


@dataclass(slots=True)
class RoundState:
    """What the current round's model call has streamed so far (a new one each round)."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    message: int | None = None
    """Index of the round's stored assistant message (it asked for tools)."""
    usage: UsageReport | None = None
    """What the round's model call used (its last report)."""
    next_checkpoint: float = float("inf")
    """When (time.monotonic) to write the streaming answer to the session log next."""
    checkpointed: Checkpointed | None = None
    """How much of the answer the checkpoints hold (None: no checkpoint yet)."""

    def since_checkpoint(self) -> tuple[str, str, Checkpointed]:
        """The text and reasoning that arrived after the last checkpoint, and the new mark.

        Joins only the new chunks: a checkpoint costs what arrived since the last one, so a
        long answer is neither written nor copied again at every checkpoint.
        """
        done = self.checkpointed or Checkpointed()
        text = "".join(self.text[done.text_chunks :])
        reasoning = "".join(self.reasoning[done.reasoning_chunks :])
        mark = Checkpointed(
            len(self.text),
            done.text_chars + len(text),
            len(self.reasoning),
            done.reasoning_chars + len(reasoning),
        )
        return text, reasoning, mark


@dataclass(slots=True)
class TurnState:
    """What the running turn has produced so far (how it ends is an outcome, never here)."""

    user_index: int = -1
    """Where the turn's user message is in the history (-1: not placed yet)."""
    setting: str = "auto"
    """The control setting the turn was routed under (a hand-off's route records it too)."""
    mode: str | None = None
    """The mode answering (None: none, or `off`)."""
    setup: TurnSetup | None = None
    """How the mode runs (None until the prepare phase resolved it)."""
    round: RoundState = field(default_factory=RoundState)
    """The current round's stream."""
    unresolved: list[ToolCall] = field(default_factory=list)
    """Calls of the stored message that have no result yet."""
    guarded: list[ToolCall] = field(default_factory=list)
    """Calls of this turn that reached the guards."""
    spent: list[tuple[str, UsageReport]] = field(default_factory=list)
    """(model, usage) of every model call of the turn, for the ledger."""

    @property
    def text(self) -> list[str]:
        """This round's text chunks."""
        return self.round.text

    @property
    def reasoning(self) -> list[str]:
        """This round's reasoning chunks."""
        return self.round.reasoning

    @property
    def calls(self) -> list[tuple[str, int, int, float | None]]:
        """(model, prompt tokens, completion tokens, cost) of every call, for the ledger."""
        return [
            (model, usage.prompt_tokens, usage.completion_tokens, usage.cost)
            for model, usage in self.spent
        ]

    def new_round(self, next_checkpoint: float) -> None:
        self.round = RoundState(next_checkpoint=next_checkpoint)

    def partial(self) -> str:
        return "".join(self.round.text)

    def unstored(self) -> str:
        """This round's text, unless it is already stored with the round's tool calls."""
        return "" if self.round.message is not None else self.partial()

    def total_usage(self) -> dict[str, Any]:
        usage = [report for _, report in self.spent]
        costs = [u.cost for u in usage]
        return {
            "prompt_tokens": sum(u.prompt_tokens for u in usage),
            "completion_tokens": sum(u.completion_tokens for u in usage),
            "cost": sum(c for c in costs if c is not None) if costs and None not in costs else None,
            "calls": len(usage),
        }


def usage_dict(usage: UsageReport | None) -> dict[str, Any] | None:
    """One model call's usage as the session log keeps it."""
    if usage is None:
        return None
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cost": usage.cost,
    }
