"""The middle phase of a turn: per round, request -> model stream -> the answer stored.

Each round builds the request from the mode's setup and the history, streams the model's
answer (switching to the mode's fallback models on a retryable failure before any output),
stores the assistant message, and ends with one outcome (`core.engine.outcomes`):
`AnswerDone` (text only), `RunTools` (the turn loop runs them: `core.engine.tool_calls`, and
goes round again, up to `Limits.model_rounds`) or `Failed` (the budget refused it).

Every request of a turn is made by `request_for` (the first, each later round's, a
fallback's), which fits it into the model's context window (`core.engine.fitting`); the
answer is read through `answer_that_fits` (one retry after a context error). What happens
to the tool calls is `core.engine.tool_calls.run_calls`, played by the turn loop.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import AsyncGenerator
from dataclasses import replace

from modes_tui.core.engine.context import TurnContext
from modes_tui.core.engine.costs import fallback_note
from modes_tui.core.engine.fitter import Prepared
from modes_tui.core.engine.fitting import answer_that_fits, built, compacted, prepare_request
from modes_tui.core.engine.outcomes import NOT_RETRYABLE, AnswerDone, Failed, RunTools
from modes_tui.core.engine.state import TurnSetup, TurnState, usage_dict
from modes_tui.core.errors import ProviderError
from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import (
    ConversationCompacted,
    ReasoningDelta,
    RequestBuilt,
    TextDelta,
    TurnEvent,
    Usage,
)
from modes_tui.core.history.records import AssistantRecord
from modes_tui.core.model.wire import (
    ModelEvent,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    UsageReport,
)

__all__ = [
    "BUDGET_HINT",
    "answer_with_fallbacks",
    "checkpoint_answer",
    "play_round",
    "request_for",
    "stamp",
]

BUDGET_HINT = (
    "raise `budget:` in config.yaml (or MODES_TUI_BUDGET), or send it with a cheaper mode "
    "(/mode NAME); your message is kept"
)


async def play_round(
    ctx: TurnContext, turn: TurnState, round_no: int
) -> AsyncGenerator[TurnEvent | AnswerDone | RunTools | Failed, None]:
    """One model call: its request, its stream, its message stored. Ends with `AnswerDone`
    (text only), `RunTools` (the message asked for tools) or `Failed` (the budget refused
    the turn's first request)."""
    turn.new_round(time.monotonic() + ctx.config.checkpoint_seconds)
    setup = current(turn)
    prepared = await request_for(ctx, turn, setup, compact=round_no == 1)
    if prepared.compaction is not None:
        yield compacted(ctx, turn, prepared.compaction, prepared.usage)
    request = prepared.request
    if round_no == 1:
        refusal = await ctx.stopper.step(ctx.costs.check_budget(setup.model, request, ctx.asker))
        if refusal is not None:
            yield Failed(refusal, "budget", BUDGET_HINT, retryable=False)
            return
    yield built(ctx, prepared, setup.mode, round_no, setup.notes, role=setup.role)
    calls: list[ToolCallChunk] = []
    answer = answer_that_fits(
        ctx, request, turn, round_no, functools.partial(_answer, ctx, turn, round_no)
    )
    async with contextlib.aclosing(answer) as stream:
        async for event in stream:
            if isinstance(event, ToolCallChunk):
                calls.append(event)
                continue
            shown = _received(ctx, turn, event)
            if shown is not None:
                yield shown
    message = stamp(
        ctx,
        turn,
        Message(
            "assistant",
            turn.partial(),
            tool_calls=tuple(chunk.call for chunk in calls),
            reasoning="".join(turn.reasoning),
        ),
    )
    ctx.state.conversation.append(message)
    if not calls:
        yield AnswerDone(message)
        return
    turn.round.message = len(ctx.state.conversation) - 1
    turn.unresolved = [chunk.call for chunk in calls]
    ctx.recorder.write(AssistantRecord(ctx.state.turn, message, usage_dict(turn.round.usage)))
    yield RunTools(tuple(calls))


def _received(
    ctx: TurnContext, turn: TurnState, event: ModelEvent | RequestBuilt | ConversationCompacted
) -> TurnEvent | None:
    """What one streamed event adds to the turn, and the event the caller sees of it."""
    if isinstance(event, TextChunk):
        turn.text.append(event.text)
        if time.monotonic() >= turn.round.next_checkpoint:
            checkpoint_answer(ctx, turn)
        return TextDelta(event.text)
    if isinstance(event, ReasoningChunk):
        turn.reasoning.append(event.text)
        if time.monotonic() >= turn.round.next_checkpoint:
            checkpoint_answer(ctx, turn)
        return ReasoningDelta(event.text)
    if isinstance(event, UsageReport):
        model = current(turn).model
        turn.spent.append((model, event))
        turn.round.usage = event
        return Usage(model, event.prompt_tokens, event.completion_tokens, event.cost)
    if isinstance(event, RequestBuilt | ConversationCompacted):  # a fallback model, or the
        return event  # request sent again compacted after a context error
    return None


def _answer(
    ctx: TurnContext, turn: TurnState, round_no: int, request: ModelRequest
) -> AsyncGenerator[ModelEvent | RequestBuilt, None]:
    """The model's answer to `request`, through the mode's fallbacks when it has some."""
    if current(turn).fallbacks:
        return answer_with_fallbacks(ctx, request, turn, round_no)
    # without fallbacks, no extra generator layer on every chunk
    return ctx.stopper.stream(ctx.model, request)


async def answer_with_fallbacks(
    ctx: TurnContext, request: ModelRequest, turn: TurnState, round_no: int
) -> AsyncGenerator[ModelEvent | RequestBuilt, None]:
    """The model's events; on a retryable failure before any output, the next fallback.

    litellm's own `fallbacks=` is not used: it retries on any error (a wrong key too),
    keeps no record of why it switched, and only covers the stream's opening; here the
    switch is a RequestBuilt with a note, so the panel and the session say who answered
    and why, and a failure after text arrived ends the turn with that text kept.
    """
    while True:
        setup = current(turn)
        try:
            async with contextlib.aclosing(ctx.stopper.stream(ctx.model, request)) as stream:
                async for event in stream:
                    yield event
            return
        except ProviderError as error:
            produced = turn.text or turn.reasoning
            if produced or not setup.fallbacks or error.kind in NOT_RETRYABLE:
                raise
            following = await ctx.stopper.step(
                ctx.setups.resolve(
                    ctx.config, turn.mode, model=setup.fallbacks[0], rest=setup.fallbacks[1:]
                )
            )
            note = fallback_note(setup.model, error, following.model)
            following = replace(following, notes=(*following.notes, note))
            turn.setup = following
            prepared = await request_for(ctx, turn, following, compact=False)
            request = prepared.request
            switched = {"from": setup.model, "kind": error.kind, "error": error.provider_message}
            yield built(
                ctx,
                prepared,
                following.mode,
                round_no,
                following.notes,
                switched,
                role=following.role,
            )


async def request_for(
    ctx: TurnContext, turn: TurnState, setup: TurnSetup, *, compact: bool
) -> Prepared:
    """The request this round sends with `setup`: what the model may see of the history,
    fitted into its context window (`core.engine.fitting`; `compact`: older turns may be
    compacted first, on a turn's first round)."""
    return await ctx.stopper.step(prepare_request(ctx, turn, setup, compact=compact))


def checkpoint_answer(ctx: TurnContext, turn: TurnState) -> None:
    """Write what arrived since the last checkpoint (`partial: true`), so a crash loses none
    of the answer. The first checkpoint of a round holds the text so far; each later one only
    what is new, marked with where it `continues`, so the log grows with the answer, not
    with its square (a 9 MB answer once grew its log to 921 MB)."""
    turn.round.next_checkpoint = time.monotonic() + ctx.config.checkpoint_seconds
    text, reasoning, mark = turn.round.since_checkpoint()
    done = turn.round.checkpointed
    continues = (
        None if done is None else {"content": done.text_chars, "reasoning": done.reasoning_chars}
    )
    message = stamp(ctx, turn, Message("assistant", text, reasoning=reasoning))
    ctx.recorder.write(AssistantRecord(ctx.state.turn, message, partial=True, continues=continues))
    turn.round.checkpointed = mark


def current(turn: TurnState) -> TurnSetup:
    assert turn.setup is not None  # set by the prepare phase, before the first request
    return turn.setup


def stamp(ctx: TurnContext, turn: TurnState, message: Message) -> Message:
    """The message marked with the mode, model and thinking that produced it."""
    setup = turn.setup
    return replace(
        message,
        mode=turn.mode,
        model=setup.model if setup else ctx.config.model_for(None),
        thinking=setup.thinking if setup else "off",
    )
