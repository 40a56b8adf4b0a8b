"""A turn: one user turn from the caller's order to its last event, as explicit steps.

    place   (core.engine.prepare)     which kind of turn (new, edit, retry, correction re-run),
                                      the user's message in place (none: nothing to retry)
    prepare (core.engine.prepare)     the route, the mode entered, its setup
    round   (core.engine.rounds)      the request and the model's stream, its answer stored
    tools   (core.engine.tool_calls)  the round's tool calls through the guards
    hand-over (core.engine.hand_off)  the rest of the turn in the mode a `switch_mode` names
    close   (core.engine.close)       finished / failed / cancelled / abandoned: every tool
                                      call answered, the partial answer kept, the records

Each step yields its events and ends with at most one outcome (`core.engine.outcomes`); the
one loop here (`Turn._steps`) acts on it: `RunTools` runs the tools, `HandOff` hands over,
no outcome goes round again, an ending (`AnswerDone`, `LimitReached`, `Cancelled`,
`Failed`) leaves the loop, and `close.end` runs once with it. A stop the user asked for, a
provider's error and a bug become outcomes at the step's edge (`_edge`); a caller that goes
away (the generator closed, its task cancelled) ends the turn as `Cancelled(abandoned=True)`.

`Turn` works over a `TurnContext` (the engine's parts, passed explicitly) and its own
`TurnState`; it never sees the engine.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator

from modes_tui.core.engine import close
from modes_tui.core.engine.context import TurnContext
from modes_tui.core.engine.hand_off import hand_over
from modes_tui.core.engine.outcomes import (
    ENDINGS,
    OUTCOMES,
    Cancelled,
    Ending,
    Failed,
    HandOff,
    Outcome,
    RunTools,
)
from modes_tui.core.engine.prepare import NOTHING_TO_RETRY, TurnOrder, place, prepare
from modes_tui.core.engine.rounds import play_round
from modes_tui.core.engine.state import StopRequested, TurnState
from modes_tui.core.engine.tool_calls import run_calls
from modes_tui.core.errors import ProviderError
from modes_tui.core.history.events import TurnEvent

__all__ = ["Step", "Turn"]

log = logging.getLogger("modes_tui.engine")

Step = AsyncGenerator[TurnEvent | Outcome, None]
"""A step of a turn: its events, then at most one outcome."""

ABANDONED = Cancelled(abandoned=True)


class Turn:
    """One turn of a conversation: `async for event in Turn(context, order).play()`."""

    def __init__(self, context: TurnContext, order: TurnOrder) -> None:
        self.context = context
        """The parts the turn works over."""
        self.order = order
        """What the caller asked for."""
        self.state = TurnState()
        """What the turn has produced so far."""

    async def play(self) -> AsyncGenerator[TurnEvent, None]:
        """The turn's events, ending with TurnFinished, TurnFailed or TurnCancelled."""
        ctx, turn = self.context, self.state
        ctx.slot.enter()
        try:
            ending: Ending = ABANDONED  # unless the loop ends: its caller went away
            try:
                placed = place(ctx, self.order, turn)
                if placed is None:  # no turn to run, nothing to close
                    yield NOTHING_TO_RETRY
                    return
                async with contextlib.aclosing(self._steps(placed)) as steps:
                    async for item in steps:
                        if isinstance(item, ENDINGS):
                            ending = item
                        else:
                            yield item
            finally:
                closing = close.end(ctx, turn, ending) if turn.user_index >= 0 else None
            if closing is not None:
                yield closing
        finally:
            ctx.slot.leave()

    async def _steps(self, placed: list[TurnEvent]) -> AsyncGenerator[TurnEvent | Ending, None]:
        """The turn's steps, each acting on the outcome of the one before; last, its ending."""
        ctx, turn = self.context, self.state
        for event in placed:
            yield event
        step: Step = prepare(ctx, self.order, turn)
        round_no = 0
        while True:
            outcome: Outcome | None = None
            async with contextlib.aclosing(_edge(ctx, step)) as items:
                async for item in items:
                    if isinstance(item, OUTCOMES):
                        outcome = item
                    else:
                        yield item
            match outcome:
                case None:  # prepared, tools answered, or handed over: the next round
                    round_no += 1
                    step = play_round(ctx, turn, round_no)
                case RunTools(calls):
                    last = round_no == ctx.config.limits.model_rounds
                    step = run_calls(ctx, turn, calls, round_no=round_no, last_round=last)
                case HandOff(call):
                    step = hand_over(ctx, turn, call)
                case _:
                    yield outcome
                    return


async def _edge(ctx: TurnContext, step: Step) -> Step:
    """`step`'s events and outcome; a stop the user asked for, a provider's error and a bug
    inside it become its outcome (`Cancelled`, `Failed`) here, at its edge."""
    try:
        async with contextlib.aclosing(step) as items:
            async for item in items:
                yield item
    except StopRequested:
        yield Cancelled()
    except ProviderError as error:
        yield Failed.provider(error)
    except Exception as error:
        log.exception("turn %d failed unexpectedly", ctx.state.turn)
        yield Failed.internal(error)
