"""A hand-off inside a turn: after a `switch_mode` call went through the guards, the next
rounds are the named mode's (`core.edits.handoff` has the tool, its guard and the route).

The new route (`decided_by: model`, the model's reason) is recorded and yielded like the
turn's first, then the mode change, then the new mode's setup replaces the turn's: its
instructions, tools and model answer the rest of the turn.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from modes_tui.core.edits.handoff import hand_off_route
from modes_tui.core.engine.context import TurnContext
from modes_tui.core.engine.state import TurnState
from modes_tui.core.history.events import ModeChanged, RouteDecided, TurnEvent
from modes_tui.core.history.records import RouteRecord

__all__ = ["hand_over"]


async def hand_over(ctx: TurnContext, turn: TurnState) -> AsyncGenerator[TurnEvent, None]:
    """Route the rest of the turn to the mode of `turn.hand_off` (then cleared)."""
    call, turn.hand_off = turn.hand_off, None
    if call is None:
        return
    state = ctx.state
    handed = hand_off_route(
        state.routes[-1], str(call.arguments.get("mode")), str(call.arguments.get("reason"))
    )
    state.routes.append(handed)
    ctx.recorder.write(RouteRecord(state.turn, handed, turn.setting, ()))
    yield RouteDecided(handed, turn.setting, ())
    previous, state.mode = state.mode, handed.mode_name
    turn.mode = handed.mode_name
    yield ModeChanged(previous, handed.mode_name)
    turn.setup = await ctx.stopper.step(ctx.setups.resolve(ctx.config, turn.mode))
