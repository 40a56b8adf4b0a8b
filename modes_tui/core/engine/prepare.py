"""The first phase of a turn: which kind of turn it is, its place in the history (`place`;
None: there is nothing to retry, and no turn runs), its route (`prepare`).

    new        the user's message joins the history as turn N+1
    edit       the last user message and all after it leave the history; the text is turn N+1
    retry      everything after the last user message leaves; it runs again as turn N
    correction a retry in the mode the user named, recorded as a correction first

Then the control file is read, the route decided (forced, kept from a correction, or the
router's: the user's pick when it was unsure and someone can choose (`doubt_choice`), else
with the `auto_enter: confirm` question), the mode entered and its setup resolved.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from dataclasses import dataclass, replace
from typing import Literal

from modes_tui.core.control_setting import AUTO, OFF, ControlReading
from modes_tui.core.engine.auto_enter import confirm_entry
from modes_tui.core.engine.context import TurnContext
from modes_tui.core.engine.doubt_choice import ask_doubt, chosen_route
from modes_tui.core.engine.rerun import CorrectionPlan
from modes_tui.core.engine.state import TurnState
from modes_tui.core.errors import ImpossibleTurn, UnknownMode
from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import (
    ModeChanged,
    RouteDecided,
    TurnCorrected,
    TurnEvent,
    TurnFailed,
)
from modes_tui.core.history.records import RouteRecord, UiEventRecord, UserRecord
from modes_tui.core.values.route import Route

__all__ = ["NOTHING_TO_RETRY", "OFF_REASON", "TurnKind", "TurnOrder", "place", "prepare"]

log = logging.getLogger("modes_tui.engine")

OFF_REASON = "Modes are off"

TurnKind = Literal["new", "edit", "retry", "correction"]


@dataclass(frozen=True, slots=True)
class TurnOrder:
    """What the caller asked for: a kind of turn and what it needs. The kind decides how the
    turn is placed and routed; parts the kind cannot have raise `ImpossibleTurn` at once."""

    kind: TurnKind
    """new, edit (replaces the last turn), retry, or correction (a re-run in `plan.mode`)."""
    text: str | None = None
    """The user's message (new and edit only)."""
    force: str | None = None
    """A mode (or `off`, or `auto`) for this turn only (not for a correction: its plan's)."""
    plan: CorrectionPlan | None = None
    """The correction to record and re-run (correction only)."""

    def __post_init__(self) -> None:
        problem = _order_problem(self)
        if problem is not None:
            raise ImpossibleTurn(
                f"a {self.kind!r} turn {problem} (core.engine.prepare.TurnOrder: new and edit "
                "carry text, a correction carries a plan and no force, a retry neither)"
            )

    @property
    def fresh(self) -> bool:
        """The turn brings a new user message (new, edit)."""
        return self.kind in ("new", "edit")


def _order_problem(order: TurnOrder) -> str | None:
    """What does not fit the order's kind, or None."""
    match order.kind:
        case "new" | "edit":
            if not isinstance(order.text, str):
                return "needs the user's text"
            if order.plan is not None:
                return "cannot carry a correction plan"
        case "retry" | "correction":
            if order.text is not None:
                return "takes no text (it runs the last user message again)"
            if order.kind == "retry" and order.plan is not None:
                return "cannot carry a correction plan (order a 'correction')"
            if order.kind == "correction" and order.plan is None:
                return "needs a correction plan"
            if order.kind == "correction" and order.force is not None:
                return "takes no forced mode (the plan names the mode)"
        case _:
            return "is not a kind of turn (new, edit, retry, correction)"
    return None


NOTHING_TO_RETRY = TurnFailed(
    "there is no turn to retry",
    kind="nothing_to_retry",
    hint="type a message first",
    retryable=False,
)


async def prepare(
    ctx: TurnContext, order: TurnOrder, turn: TurnState
) -> AsyncGenerator[TurnEvent, None]:
    """Route the placed message (`place`) and enter its mode: `turn.setup` is how it runs."""
    text = ctx.state.conversation.messages[turn.user_index].content
    control, warnings = _read_control(ctx)
    route, chosen = await _decide(ctx, order, text, control, turn, warnings)
    state = ctx.state
    state.routes.append(route)
    # `off` is a reserved name, never a mode: the turn runs with no mode at all
    turn.mode = None if route.mode_name == OFF else route.mode_name
    turn.setting = control.mode
    ctx.recorder.write(RouteRecord(state.turn, route, control.mode, tuple(warnings)))
    yield RouteDecided(route, control.mode, tuple(warnings))
    if chosen is not None:  # the user took another mode than the unsure router's pick
        ctx.recorder.correction(state.turn, chosen)
        yield chosen
    ctx.stopper.checkpoint()
    if turn.mode != state.mode:
        previous, state.mode = state.mode, turn.mode
        yield ModeChanged(previous, turn.mode)
        ctx.stopper.checkpoint()
    if order.fresh:
        resent = ctx.corrections.resend(state.turn, text, route, state.conversation.messages)
        if resent is not None:
            ctx.recorder.correction(state.turn, resent)
            yield resent
    turn.setup = await ctx.stopper.step(ctx.setups.resolve(ctx.config, turn.mode))
    models = ctx.config.models_in_use(ctx.pack.profiles)
    strong = ctx.config.baseline_role(ctx.pack.profiles)
    await ctx.stopper.step(ctx.costs.set_baseline(models, strong))


def place(ctx: TurnContext, order: TurnOrder, turn: TurnState) -> list[TurnEvent] | None:
    """Put the turn's user message in place; the events that say so (None: no turn to run)."""
    state = ctx.state
    events: list[TurnEvent] = []
    match order.kind:
        case "new" | "edit":
            assert order.text is not None  # TurnOrder checks it
            _add_message(ctx, order.text, order.force, supersede=order.kind == "edit")
        case "retry":
            if not _drop_answer(ctx):
                return None
            ctx.recorder.write(UiEventRecord(state.turn, "retry"))
        case "correction":
            assert order.plan is not None  # TurnOrder checks it
            if not _drop_answer(ctx):
                return None
            # the superseded answer stays in the session log, before this record
            corrected = ctx.corrections.apply(order.plan)
            ctx.recorder.correction(state.turn, corrected)
            events.append(corrected)
    turn.user_index = len(state.conversation) - 1
    return events


def _add_message(ctx: TurnContext, text: str, force: str | None, *, supersede: bool) -> None:
    """A new user message as turn N+1 (an edit first drops the last turn)."""
    state = ctx.state
    last = state.last_user_index() if supersede else None
    if last is not None:
        del state.conversation.messages[last:]
        ctx.recorder.write(UiEventRecord(state.turn, "supersede", {"superseded": state.turn}))
    state.turn += 1
    state.turn_force = force  # a retry of this turn keeps its `/MODE text` mode
    state.conversation.append(Message("user", text))
    ctx.recorder.write(UserRecord(state.turn, text))


def _drop_answer(ctx: TurnContext) -> bool:
    """Everything after the last user message leaves the history (False: there is none)."""
    index = ctx.state.last_user_index()
    if index is None:
        return False
    del ctx.state.conversation.messages[index + 1 :]
    return True


async def _decide(
    ctx: TurnContext,
    order: TurnOrder,
    text: str,
    control: ControlReading,
    turn: TurnState,
    warnings: list[str],
) -> tuple[Route, TurnCorrected | None]:
    """The route: the user's correction, a corrected turn's mode on retry, or the router's
    (with the user's choice when it was unsure: then also the correction that records it)."""
    match order.kind:
        case "correction":  # the user decided: a forced route that says what it replaces
            assert order.plan is not None  # TurnOrder checks it
            return replace(ctx.router.force(order.plan.mode), reason=order.plan.reason), None
        case "retry":  # retrying a corrected turn keeps the user's mode
            kept = ctx.corrections.kept_mode(ctx.state.turn)
            if kept is not None:
                return replace(ctx.router.force(kept[0]), reason=kept[1]), None
    route = await ctx.stopper.step(_route(ctx, order.force, control, warnings))
    # an unsure router asks first; whatever the user takes there needs no auto_enter yes
    chosen = await ctx.stopper.step(ask_doubt(route, text, ctx.pack, ctx.asker))
    if chosen is None:
        entered = ctx.state.entered_mode()
        route = await ctx.stopper.step(confirm_entry(route, ctx.pack, ctx.asker, entered))
    ctx.corrections.routed(ctx.state.turn, text, route, turn.user_index)
    if chosen is None or chosen == route.mode_name:
        return route, None
    messages = ctx.state.conversation.messages
    corrected = ctx.corrections.chosen(ctx.state.turn, chosen, messages)
    return chosen_route(ctx.router, route, chosen), corrected


async def _route(
    ctx: TurnContext, force: str | None, control: ControlReading, warnings: list[str]
) -> Route:
    wanted: str | None
    if force is not None and force != AUTO:
        wanted = force
    elif force == AUTO:
        wanted = None
    else:
        wanted = OFF if control.mode == OFF else control.forced
    # a mode the caller passed is for this message only: the route says so (replay,
    # the panel and the log show "one-shot"); the control file's setting is not one
    once = force is not None and force != AUTO
    if wanted == OFF:
        return Route(OFF, "caller", OFF_REASON, one_shot=once)
    if wanted is not None:
        try:
            return replace(ctx.router.force(wanted), one_shot=once)
        except UnknownMode as error:
            origin = "the control file" if force is None else "the caller"
            warnings.append(f"{origin} asked for mode {wanted!r}: {error}; routing automatically")
    return await ctx.router.route(ctx.state.conversation.messages)


def _read_control(ctx: TurnContext) -> tuple[ControlReading, list[str]]:
    warnings: list[str] = []
    failure = ctx.recorder.take_failure()
    if failure is not None:
        warnings.append(f"the session log could not be written: {failure}")
    if ctx.control is None:
        return ControlReading(AUTO), warnings
    try:
        reading = ctx.control.read()
    except Exception as error:  # a broken control source must not stop the turn
        log.exception("the control setting could not be read")
        warnings.append(f"the control setting could not be read ({error}); routing automatically")
        return ControlReading(AUTO), warnings
    if reading.warning:
        warnings.append(reading.warning)
    return reading, warnings
