"""Every request of a turn fitted into its model's context window (`core.context`), and one
retry after a provider's context error.

`prepare_request` is how the rounds make a request (the first, a later round's, a
fallback's): built from the history, then fitted, compacting older turns first on a turn's
first round when the request would fill most of its budget. `compacted` records a compaction
made on the way; `built` records the request about to be sent. `answer_that_fits` reads the
model's answer: when the provider refuses a request as too long before any output, every
earlier turn is compacted and the request goes once more.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

from modes_tui.core.engine.context import TurnContext
from modes_tui.core.engine.fitter import Prepared
from modes_tui.core.engine.request import build_request
from modes_tui.core.engine.state import TurnSetup, TurnState, usage_dict
from modes_tui.core.errors import ProviderError
from modes_tui.core.history.compaction import Compaction
from modes_tui.core.history.conversation import Conversation
from modes_tui.core.history.events import ConversationCompacted, RequestBuilt
from modes_tui.core.history.records import RequestRecord, SummaryRecord
from modes_tui.core.model.wire import ModelEvent, ModelRequest, UsageReport

__all__ = ["answer_that_fits", "built", "compacted", "prepare_request"]

Answer = Callable[[ModelRequest], AsyncGenerator[ModelEvent | RequestBuilt, None]]
"""The model's answer to a request (through the mode's fallbacks, if any)."""


async def prepare_request(
    ctx: TurnContext, turn: TurnState, setup: TurnSetup, *, compact: bool
) -> Prepared:
    """The request this round sends with `setup`, fitted into the model's window
    (compacting older turns first when `compact` allows it)."""

    def build(conversation: Conversation) -> ModelRequest:
        return build_request(setup, conversation.messages, turn.user_index, conversation.compaction)

    prepared = await ctx.fitter.prepare(
        build,
        ctx.state.conversation,
        turn.user_index,
        compact=compact,
        summary_model=ctx.config.summary_model,
    )
    if prepared.compaction is None and prepared.usage is not None:  # a refused summary's call
        _count(turn, ctx.config.summary_model, prepared.usage)
    return prepared


def compacted(
    ctx: TurnContext, turn: TurnState, compaction: Compaction, usage: UsageReport | None
) -> ConversationCompacted:
    """Record a compaction made in this turn; its model call counts in the turn's cost."""
    if usage is not None:  # a refused summary's call costs too (the openings stand in)
        _count(turn, compaction.model or ctx.config.summary_model, usage)
    ctx.recorder.write(SummaryRecord(ctx.state.turn, compaction, usage_dict(usage)))
    return ConversationCompacted(compaction)


def built(
    ctx: TurnContext,
    prepared: Prepared,
    mode: str | None,
    round_no: int,
    notes: tuple[str, ...],
    fallback: Mapping[str, Any] | None = None,
    *,
    role: str | None = None,
) -> RequestBuilt:
    """Record the request about to be sent (`fallback`: the failure a fallback model
    replaces), and the event that shows it."""
    request, report = prepared.request, prepared.report
    if prepared.note:  # a refused summary: the turns were kept, and the request says so
        notes = (*notes, prepared.note)
    record = RequestRecord(
        ctx.state.turn,
        request.to_dict(),
        mode,
        round_no,
        notes,
        fallback,
        role=role,
        context=report,
    )
    ctx.recorder.write(record)
    return RequestBuilt(request, mode, round_no, notes, role=role, context=report)


async def answer_that_fits(
    ctx: TurnContext, request: ModelRequest, turn: TurnState, round_no: int, answer: Answer
) -> AsyncGenerator[ModelEvent | RequestBuilt | ConversationCompacted, None]:
    """The model's events; when the provider refuses the request as too long before any
    output, every earlier turn is compacted and the request is sent once more."""
    retried = False
    while True:
        try:
            async with contextlib.aclosing(answer(request)) as stream:
                async for event in stream:
                    yield event
            return
        except ProviderError as error:
            if retried or error.kind != "context_too_long" or turn.text or turn.reasoning:
                raise
            retried, failed = True, error
        made = await ctx.stopper.step(
            ctx.fitter.compact(
                ctx.state.conversation,
                turn.user_index,
                "context_error",
                keep=0,
                summary_model=ctx.config.summary_model,
                fallback=True,
            )
        )
        if made is not None:
            yield compacted(ctx, turn, *made)
        setup = _current(turn)
        prepared = await ctx.stopper.step(prepare_request(ctx, turn, setup, compact=False))
        if made is None and prepared.request == request:
            raise failed  # nothing to leave out: the same request would fail the same way
        request = prepared.request
        note = f"sent again after the provider said: {failed.provider_message}"[:300]
        yield built(ctx, prepared, setup.mode, round_no, (*setup.notes, note), role=setup.role)


def _count(turn: TurnState, model: str, usage: UsageReport) -> None:
    """A summary model's call in the turn's usage and cost."""
    turn.spent.append((model, usage))


def _current(turn: TurnState) -> TurnSetup:
    assert turn.setup is not None  # set by the prepare phase, before the first request
    return turn.setup
