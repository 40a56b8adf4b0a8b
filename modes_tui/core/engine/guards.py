"""Guards: what may happen to a tool call before it runs, and the limits of one turn.

The engine shows every pending call to each guard in order. A guard returns None to let
the call through (the next guard then looks at it), or a verdict that closes the call
without running the tool:

    Cancel(reason)       declined; the model reads {"cancelled": true, "reason": ...}
    Block(message)       refused; the model reads {"error": ..., "type": ...}
    Answer(result)       answered for the tool; the model reads `result` as the tool's output

Shipped guards: `RepeatedCallGuard` (the same name and arguments a third time in a turn),
`ToolBudgetGuard` (tool calls per turn) and `ConfirmationGuard` (asks the user through a
`Confirmer` before tools that need it; the engine always runs it last, so nobody is asked
about a call another guard would refuse). Guards keep no state between calls: what they
need to know about the turn comes in `PendingCall`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from modes_tui.core.engine.verdicts import Block, Cancel, PendingCall, Verdict
from modes_tui.core.model.wire import ToolCall

if TYPE_CHECKING:
    from modes_tui.core.engine.ports import Confirmer, Guard

log = logging.getLogger("modes_tui.guards")


@dataclass(frozen=True, slots=True)
class Limits:
    """How far one turn may go."""

    model_rounds: int = 10
    """Model calls per turn (each tool round costs one)."""
    tool_calls: int = 20
    """Tool calls per turn that reach the guards (the budget)."""
    repeated_calls: int = 3
    """The n-th identical call (same name and arguments) in a turn is blocked."""
    tool_output_chars: int = 20_000
    """A tool result longer than this is cut before the model reads it."""
    tool_timeout: float = 120.0
    """Seconds a tool may run (unless the tool sets its own)."""


def signature(call: ToolCall) -> str:
    """A call reduced to name and canonical arguments, to spot repeats."""
    return call.name + json.dumps(call.arguments, sort_keys=True, default=str)


class RepeatedCallGuard:
    """Blocks the `threshold`-th identical call in a turn: the model is going in circles."""

    def __init__(self, threshold: int = 3) -> None:
        self.threshold = max(2, threshold)

    def check(self, pending: PendingCall) -> Verdict | None:
        mine = signature(pending.call)
        seen = sum(1 for call in pending.earlier if signature(call) == mine)
        if seen + 1 >= self.threshold:
            return Block(
                f"{pending.call.name} was already called {seen} times in this turn with the "
                "same arguments; the result will not change. Try a different approach, or "
                "answer with what you have.",
                type="loop_detected",
            )
        return None


class ToolBudgetGuard:
    """Blocks every call past `limit` tool calls in one turn."""

    def __init__(self, limit: int = 20) -> None:
        self.limit = max(0, limit)

    def check(self, pending: PendingCall) -> Verdict | None:
        if len(pending.earlier) >= self.limit:
            return Block(
                f"the tool budget of this turn ({self.limit} calls) is spent; answer with "
                "what you have, and say what is still unknown.",
                type="budget_spent",
            )
        return None


DECLINED = "the user declined to run this; do not retry it, ask what they would like instead"
NOBODY_TO_ASK = (
    "this tool needs the user's confirmation and nobody can confirm here; do not retry it"
)


class ConfirmationGuard:
    """Asks the user before every call of a tool that needs confirmation."""

    def __init__(self, confirmer: Confirmer | None) -> None:
        self.confirmer = confirmer

    async def check(self, pending: PendingCall) -> Verdict | None:
        if not pending.tool.needs_confirmation:
            return None
        if self.confirmer is None:
            return Cancel(NOBODY_TO_ASK)
        try:
            allowed = await self.confirmer.confirm(pending.call, pending.tool)
        except Exception:  # a broken dialog must not run the command
            log.exception(
                "the confirmation of %s failed; treating it as declined", pending.call.name
            )
            return Cancel(DECLINED)
        return None if allowed else Cancel(DECLINED)


def default_guards(limits: Limits = Limits()) -> list[Guard]:
    """The loop guard and the budget (the engine adds confirmation last)."""
    return [RepeatedCallGuard(limits.repeated_calls), ToolBudgetGuard(limits.tool_calls)]
