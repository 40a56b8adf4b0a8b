"""A turn: one user turn from the caller's order to its last event, in three phases.

    prepare (core.engine.prepare)  which kind of turn (new, edit, retry, correction re-run),
                                   the user's message in place, the route, the mode's setup
    rounds  (core.engine.rounds)   per round: the request, the model's stream, its tool calls
                                   through the guards (core.engine.tool_calls)
    close   (core.engine.close)    finished / failed / cancelled / abandoned: every tool call
                                   answered, the partial answer kept, the records written

`Turn` works over a `TurnContext` (the engine's parts, passed explicitly) and its own
`TurnState`; it never sees the engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator

from modes_tui.core.engine import close
from modes_tui.core.engine.context import TurnContext
from modes_tui.core.engine.prepare import TurnOrder, prepare
from modes_tui.core.engine.rounds import play_round
from modes_tui.core.engine.state import Cancelled, RoundLimit, TurnState
from modes_tui.core.errors import ProviderError
from modes_tui.core.history.events import TurnEvent

__all__ = ["Turn"]

log = logging.getLogger("modes_tui.engine")


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
            async with contextlib.aclosing(prepare(ctx, self.order, turn)) as prepared:
                async for event in prepared:
                    yield event
            if turn.setup is None:  # nothing to retry: the prepare phase said so
                return
            for round_no in range(1, ctx.config.limits.model_rounds + 1):
                async with contextlib.aclosing(play_round(ctx, turn, round_no)) as events:
                    async for event in events:
                        yield event
                if turn.closed:
                    return
        except Cancelled:
            yield close.cancelled(ctx, turn)
        except RoundLimit:
            yield close.round_limit(ctx, turn)
        except ProviderError as error:
            yield close.provider_failure(ctx, turn, error)
        except (GeneratorExit, asyncio.CancelledError):
            close.abandoned(ctx, turn)
            raise
        except Exception as error:
            log.exception("turn %d failed unexpectedly", ctx.state.turn)
            yield close.internal_failure(ctx, turn, error)
        finally:
            ctx.slot.leave()
