"""The last phase of a turn: how it ends, and what the history and the session log keep.

`end` is called once per turn, at the end of the turn loop, with the turn's ending (an
outcome of `core.engine.outcomes`). Whatever the ending (finished, failed, cancelled,
abandoned by its caller), every tool call the model asked for gets a result, the partial
answer is kept (marked cancelled when the user stopped it), the turn's cost goes into the
ledger, and the session log says how it ended. A new kind of ending is an outcome and a
case in `end`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from modes_tui.core.engine.context import TurnContext
from modes_tui.core.engine.outcomes import AnswerDone, Cancelled, Ending, Failed, LimitReached
from modes_tui.core.engine.rounds import stamp
from modes_tui.core.engine.state import TurnState, usage_dict
from modes_tui.core.engine.tool_calls import CANCELLED_BY_USER, add_result, tool_json
from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import TurnCancelled, TurnFailed, TurnFinished
from modes_tui.core.history.records import AssistantRecord, UiEventRecord

__all__ = ["end", "limit_failure"]


def end(
    ctx: TurnContext, turn: TurnState, ending: Ending
) -> TurnFinished | TurnFailed | TurnCancelled | None:
    """Close the turn as `ending` says; the closing event (None: nobody is listening)."""
    match ending:
        case AnswerDone(message):
            return _finished(ctx, turn, message)
        case Cancelled(abandoned=abandoned):
            if abandoned:
                _abandoned(ctx, turn)
                return None
            return _cancelled(ctx, turn)
        case LimitReached():
            return _failed(ctx, turn, limit_failure(ending))
        case Failed():
            return _failed(ctx, turn, ending)


def limit_failure(limit: LimitReached) -> Failed:
    """What the user reads when the model kept asking for tools."""
    return Failed(
        f"stopped after {limit.rounds} model calls in one turn: the model kept asking for tools",
        "round_limit",
        "ask it to answer with what it found so far, or to take a different approach",
        retryable=False,
    )


def _finished(ctx: TurnContext, turn: TurnState, message: Message) -> TurnFinished:
    """The model answered with text (`message`, already in the history): the turn is done."""
    ctx.recorder.write(
        AssistantRecord(
            ctx.state.turn,
            message,
            usage_dict(turn.round.usage),
            closes_turn=True,
            turn_usage=turn.total_usage(),
            cost=settle_cost(ctx, turn),
        )
    )
    ctx.router.answered(message.content)  # encoded while the user reads it
    return TurnFinished(message)


def _cancelled(ctx: TurnContext, turn: TurnState) -> TurnCancelled:
    """The user stopped the turn: keep what arrived, marked as cut short."""
    partial = turn.unstored()
    added = settle(ctx, turn, cancelled=True)
    if added is not None:
        ctx.recorder.write(AssistantRecord(ctx.state.turn, added))
    ended = {"partial": partial, "turn_usage": turn.total_usage(), "cost": settle_cost(ctx, turn)}
    ctx.recorder.write(UiEventRecord(ctx.state.turn, "cancel", ended))
    return TurnCancelled(partial)


def _abandoned(ctx: TurnContext, turn: TurnState) -> None:
    """The caller went away or its task was cancelled: leave a consistent history."""
    partial = turn.unstored()
    added = settle(ctx, turn, cancelled=True)
    if added is not None:
        ctx.recorder.write(AssistantRecord(ctx.state.turn, added))
    ended = {"partial": partial, "reason": "abandoned", "cost": settle_cost(ctx, turn)}
    ctx.recorder.write(UiEventRecord(ctx.state.turn, "cancel", ended))


def _failed(ctx: TurnContext, turn: TurnState, failure: Failed) -> TurnFailed:
    """Close the turn as failed: keep what arrived, record it, and say what to do."""
    partial = turn.unstored()
    settle(ctx, turn, cancelled=False)
    reasoning = "" if turn.round.message is not None else "".join(turn.reasoning)
    message = stamp(ctx, turn, Message("assistant", partial, reasoning=reasoning))
    ctx.recorder.write(
        AssistantRecord(
            ctx.state.turn,
            message,
            closes_turn=True,
            turn_usage=turn.total_usage(),
            cost=settle_cost(ctx, turn),
            error=failure.error,
            failure_kind=failure.kind,
            hint=failure.hint,
            retryable=failure.retryable,
        )
    )
    return TurnFailed(
        failure.error,
        kind=failure.kind,
        hint=failure.hint,
        partial=partial,
        retryable=failure.retryable,
    )


def settle(ctx: TurnContext, turn: TurnState, *, cancelled: bool) -> Message | None:
    """Close what the turn left open; return the assistant message added, if any."""
    for call in list(turn.unresolved):
        result = tool_json({"cancelled": True, "reason": CANCELLED_BY_USER})
        add_result(ctx, turn, call, "cancelled", result, 0.0)
    if turn.user_index < 0:
        return None
    messages = ctx.state.conversation.messages
    if turn.round.message is not None:
        if cancelled:
            index = turn.round.message
            messages[index] = replace(messages[index], cancelled=True)
        return None
    partial = turn.partial()
    if not cancelled and not partial:
        return None
    message = stamp(
        ctx,
        turn,
        Message("assistant", partial, reasoning="".join(turn.reasoning), cancelled=cancelled),
    )
    ctx.state.conversation.append(message)
    return message


def settle_cost(ctx: TurnContext, turn: TurnState) -> dict[str, Any] | None:
    """The turn's cost into the ledger; what the session log keeps of it."""
    ledger = ctx.costs.ledger
    entry = ledger.add(ctx.state.turn, turn.calls)
    if entry is None:
        return None
    return {**entry.to_dict(), "baseline_model": ledger.baseline_label}
