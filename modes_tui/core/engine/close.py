"""The last phase of a turn: how it ends, and what the history and the session log keep.

Whatever the ending (finished, failed, cancelled, abandoned by its caller), every tool call
the model asked for gets a result, the partial answer is kept (marked cancelled when the
user stopped it), the turn's cost goes into the ledger, and the session log says how it
ended. A new kind of ending is one function here returning its closing event, called from
`Turn.play`'s handlers.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from modes_tui.core.engine.context import TurnContext
from modes_tui.core.engine.state import TurnState, usage_dict
from modes_tui.core.engine.tool_calls import CANCELLED_BY_USER, add_result, tool_json
from modes_tui.core.errors import ProviderError
from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import TurnCancelled, TurnFailed, TurnFinished
from modes_tui.core.history.records import AssistantRecord, UiEventRecord

__all__ = [
    "BUDGET_HINT",
    "NOT_RETRYABLE",
    "abandoned",
    "cancelled",
    "fail",
    "finished",
    "internal_failure",
    "provider_failure",
    "round_limit",
    "stamp",
]

BUDGET_HINT = (
    "raise `budget:` in config.yaml (or MODES_TUI_BUDGET), or send it with a cheaper mode "
    "(/mode NAME); your message is kept"
)
NOT_RETRYABLE = frozenset({"auth", "context_too_long", "not_found", "bad_request"})


def finished(ctx: TurnContext, turn: TurnState, message: Message) -> TurnFinished:
    """The model answered with text (`message`, already in the history): the turn is done."""
    ctx.recorder.write(
        AssistantRecord(
            ctx.state.turn,
            message,
            usage_dict(turn.round_usage),
            closes_turn=True,
            turn_usage=turn.total_usage(),
            cost=settle_cost(ctx, turn),
        )
    )
    turn.closed = True
    return TurnFinished(message)


def cancelled(ctx: TurnContext, turn: TurnState) -> TurnCancelled:
    """The user stopped the turn: keep what arrived, marked as cut short."""
    partial = turn.unstored()
    added = settle(ctx, turn, cancelled=True)
    if added is not None:
        ctx.recorder.write(AssistantRecord(ctx.state.turn, added))
    ended = {"partial": partial, "turn_usage": turn.total_usage(), "cost": settle_cost(ctx, turn)}
    ctx.recorder.write(UiEventRecord(ctx.state.turn, "cancel", ended))
    return TurnCancelled(partial)


def abandoned(ctx: TurnContext, turn: TurnState) -> None:
    """The caller went away or its task was cancelled: leave a consistent history."""
    partial = turn.unstored()
    added = settle(ctx, turn, cancelled=True)
    if added is not None:
        ctx.recorder.write(AssistantRecord(ctx.state.turn, added))
    ended = {"partial": partial, "reason": "abandoned", "cost": settle_cost(ctx, turn)}
    ctx.recorder.write(UiEventRecord(ctx.state.turn, "cancel", ended))


def round_limit(ctx: TurnContext, turn: TurnState) -> TurnFailed:
    return fail(
        ctx,
        turn,
        f"stopped after {ctx.config.limits.model_rounds} model calls in one turn: "
        "the model kept asking for tools",
        "round_limit",
        "ask it to answer with what it found so far, or to take a different approach",
        retryable=False,
    )


def provider_failure(ctx: TurnContext, turn: TurnState, error: ProviderError) -> TurnFailed:
    where = f" ({error.model})" if error.model else ""
    return fail(
        ctx,
        turn,
        f"{error.kind.replace('_', ' ')}{where}: {error.provider_message}",
        error.kind,
        error.hint,
        retryable=error.kind not in NOT_RETRYABLE,
    )


def internal_failure(ctx: TurnContext, turn: TurnState, error: Exception) -> TurnFailed:
    return fail(
        ctx,
        turn,
        f"{type(error).__name__}: {error}",
        "internal",
        "this is a bug in modes-tui (the error is shown above). Retry may work.",
        retryable=True,
    )


def fail(
    ctx: TurnContext, turn: TurnState, error: str, kind: str, hint: str, *, retryable: bool
) -> TurnFailed:
    """Close the turn as failed: keep what arrived, record it, and say what to do."""
    partial = turn.unstored()
    settle(ctx, turn, cancelled=False)
    reasoning = "" if turn.round_message is not None else "".join(turn.reasoning)
    message = stamp(ctx, turn, Message("assistant", partial, reasoning=reasoning))
    ctx.recorder.write(
        AssistantRecord(
            ctx.state.turn,
            message,
            closes_turn=True,
            turn_usage=turn.total_usage(),
            cost=settle_cost(ctx, turn),
            error=error,
            failure_kind=kind,
            hint=hint,
            retryable=retryable,
        )
    )
    turn.closed = True
    return TurnFailed(error, kind=kind, hint=hint, partial=partial, retryable=retryable)


def settle(ctx: TurnContext, turn: TurnState, *, cancelled: bool) -> Message | None:
    """Close what the turn left open; return the assistant message added, if any."""
    for call in list(turn.unresolved):
        result = tool_json({"cancelled": True, "reason": CANCELLED_BY_USER})
        add_result(ctx, turn, call, "cancelled", result, 0.0)
    if turn.user_index < 0:
        return None
    messages = ctx.state.conversation.messages
    if turn.round_message is not None:
        if cancelled:
            index = turn.round_message
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


def stamp(ctx: TurnContext, turn: TurnState, message: Message) -> Message:
    """The message marked with the mode, model and thinking that produced it."""
    setup = turn.setup
    return replace(
        message,
        mode=turn.mode,
        model=setup.model if setup else ctx.config.model_for(None),
        thinking=setup.thinking if setup else "off",
    )
