"""The turn loop: one user turn from the user's message to its last event.

    the user's message (or a retry, a correction's re-run, an edit) -> route (or force, or
    `off`) -> ModeChanged? -> the mode's setup -> per round: the request, the model's stream,
    its tool calls through the guards -> TurnFinished / TurnFailed / TurnCancelled

Split out of `core.engine` for size: these functions are the engine's own steps and read and
update its state (conversation, turn, mode, records). Closing a turn lives here too: every
tool call gets a result, a partial answer is kept, and the session log says how it ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncGenerator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from modes_tui.core.control import OFF
from modes_tui.core.conversation import Message, ToolCall
from modes_tui.core.engine.auto_enter import confirm_entry
from modes_tui.core.engine.correcting import CorrectionPlan
from modes_tui.core.engine.costs import fallback_note
from modes_tui.core.engine.request import build_request
from modes_tui.core.engine.state import Cancelled, RoundLimit, TurnSetup, TurnState, usage_dict
from modes_tui.core.engine.tool_calls import CANCELLED_BY_USER, resolve_call, tool_json
from modes_tui.core.engine.wire import (
    ModelEvent,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    UsageReport,
)
from modes_tui.core.errors import ProviderError
from modes_tui.core.events import (
    ModeChanged,
    ReasoningDelta,
    RequestBuilt,
    RouteDecided,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    ToolOutcome,
    TurnCancelled,
    TurnEvent,
    TurnFailed,
    TurnFinished,
    Usage,
)
from modes_tui.core.records import (
    AssistantRecord,
    RequestRecord,
    RouteRecord,
    ToolResultRecord,
    UiEventRecord,
    UserRecord,
)

if TYPE_CHECKING:
    from modes_tui.core.engine import Engine

__all__ = ["play"]

log = logging.getLogger("modes_tui.engine")

BUDGET_HINT = (
    "raise `budget:` in config.yaml (or MODES_TUI_BUDGET), or send it with a cheaper mode "
    "(/mode NAME); your message is kept"
)
NOT_RETRYABLE = frozenset({"auth", "context_too_long", "not_found", "bad_request"})


async def play(
    engine: Engine,
    text: str | None,
    force: str | None,
    plan: CorrectionPlan | None = None,
    *,
    supersede: bool = False,
) -> AsyncGenerator[TurnEvent, None]:
    if engine._running:
        raise RuntimeError("a turn is already running; cancel it or wait for it to end")
    engine._running = True
    engine._stopper.reset()
    engine._loop = asyncio.get_running_loop()
    engine._thread = threading.get_ident()
    state = TurnState()
    fresh = text is not None
    try:
        if text is None:
            index = last_user_index(engine)
            if index is None:
                yield TurnFailed(
                    "there is no turn to retry",
                    kind="nothing_to_retry",
                    hint="type a message first",
                    retryable=False,
                )
                return
            del engine.conversation.messages[index + 1 :]
            text = engine.conversation.messages[index].content
            if plan is None:
                engine._record(UiEventRecord(engine.turn, "retry"))
            else:  # the superseded answer stays in the session log, before this record
                corrected = engine.corrections.apply(plan)
                engine._record_correction(corrected)
                yield corrected
        else:
            last = last_user_index(engine) if supersede else None
            if last is not None:
                del engine.conversation.messages[last:]
                engine._record(UiEventRecord(engine.turn, "supersede", {"superseded": engine.turn}))
            engine.turn += 1
            engine._turn_force = force  # a retry of this turn keeps its `/MODE text` mode
            engine.conversation.append(Message("user", text))
            engine._record(UserRecord(engine.turn, text))
        state.user_index = len(engine.conversation) - 1

        control, warnings = engine._read_control()
        kept = None if fresh else engine.corrections.kept_mode(engine.turn)
        if plan is not None:  # the user decided: a forced route that says what it replaces
            route = replace(engine.router.force(plan.mode), reason=plan.reason)
        elif kept is not None:  # retrying a corrected turn keeps the user's mode
            route = replace(engine.router.force(kept[0]), reason=kept[1])
        else:
            route = await engine._stopper.step(engine._route(force, control, warnings))
            route = await engine._stopper.step(
                confirm_entry(route, engine.pack, engine.asker, engine._mode)
            )
            engine.corrections.routed(engine.turn, text, route, state.user_index)
        engine.routes.append(route)
        # `off` is a reserved name, never a mode: the turn runs with no mode at all
        state.mode = None if route.mode_name == OFF else route.mode_name
        engine._record(RouteRecord(engine.turn, route, control.mode, tuple(warnings)))
        yield RouteDecided(route, control.mode, tuple(warnings))
        engine._stopper.checkpoint()

        if state.mode != engine._mode:
            previous, engine._mode = engine._mode, state.mode
            yield ModeChanged(previous, state.mode)
            engine._stopper.checkpoint()

        if fresh:
            resent = engine.corrections.resend(
                engine.turn, text, route, engine.conversation.messages
            )
            if resent is not None:
                engine._record_correction(resent)
                yield resent

        setup = await engine._stopper.step(engine._setup(state.mode))
        state.setup = setup
        await engine._stopper.step(engine.costs.set_baseline(engine._models_in_use()))
        for round_no in range(1, engine.limits.model_rounds + 1):
            state.new_round()
            state.next_checkpoint = time.monotonic() + engine.checkpoint_seconds
            request = build_request(setup, engine.conversation.messages, state.user_index)
            if round_no == 1:
                refusal = await engine._stopper.step(
                    engine.costs.check_budget(setup.model, request, engine.asker)
                )
                if refusal is not None:
                    yield fail(engine, state, refusal, "budget", BUDGET_HINT, retryable=False)
                    return
            engine._record(
                RequestRecord(engine.turn, request.to_dict(), setup.mode, round_no, setup.notes)
            )
            yield RequestBuilt(request, setup.mode, round_no, setup.notes)
            calls: list[ToolCallChunk] = []
            # without fallbacks, no extra generator layer on every chunk
            answer = (
                answer_with_fallbacks(engine, request, state, round_no)
                if setup.fallbacks
                else engine._stopper.stream(engine.model, request)
            )
            async with contextlib.aclosing(answer) as stream:
                async for event in stream:
                    if isinstance(event, RequestBuilt):  # a fallback model takes over
                        setup = current(state)
                        yield event
                        continue
                    if isinstance(event, TextChunk):
                        state.text.append(event.text)
                        if time.monotonic() >= state.next_checkpoint:
                            checkpoint_answer(engine, state)
                        yield TextDelta(event.text)
                    elif isinstance(event, ReasoningChunk):
                        state.reasoning.append(event.text)
                        if time.monotonic() >= state.next_checkpoint:
                            checkpoint_answer(engine, state)
                        yield ReasoningDelta(event.text)
                    elif isinstance(event, ToolCallChunk):
                        calls.append(event)
                    elif isinstance(event, UsageReport):
                        state.usage.append(event)
                        state.round_usage = event
                        state.calls.append(
                            (
                                setup.model,
                                event.prompt_tokens,
                                event.completion_tokens,
                                event.cost,
                            )
                        )
                        yield Usage(
                            setup.model,
                            event.prompt_tokens,
                            event.completion_tokens,
                            event.cost,
                        )
            message = stamp(
                engine,
                Message(
                    "assistant",
                    state.partial(),
                    tool_calls=tuple(chunk.call for chunk in calls),
                    reasoning="".join(state.reasoning),
                ),
                state,
            )
            engine.conversation.append(message)
            if not calls:
                engine._record(
                    AssistantRecord(
                        engine.turn,
                        message,
                        usage_dict(state.round_usage),
                        closes_turn=True,
                        turn_usage=state.total_usage(),
                        cost=settle_cost(engine, state),
                    )
                )
                yield TurnFinished(message)
                return
            state.round_message = len(engine.conversation) - 1
            state.unresolved = [chunk.call for chunk in calls]
            engine._record(AssistantRecord(engine.turn, message, usage_dict(state.round_usage)))
            last_round = round_no == engine.limits.model_rounds
            for chunk in calls:
                tool = setup.tools.get(chunk.call.name)
                asks = bool(tool and tool.needs_confirmation and not last_round)
                yield ToolCallRequested(chunk.call, needs_confirmation=asks)
                try:  # a cancel while the caller held ToolCallRequested lands in _step
                    outcome, result, took = await engine._stopper.step(
                        resolve_call(
                            chunk,
                            tool,
                            state,
                            turn=engine.turn,
                            round_no=round_no,
                            last_round=last_round,
                            messages=engine.conversation.messages,
                            guards=engine.guards,
                            limits=engine.limits,
                        )
                    )
                except Cancelled:
                    result = tool_json({"cancelled": True, "reason": CANCELLED_BY_USER})
                    add_result(engine, state, chunk.call, "cancelled", result, 0.0)
                    yield ToolCallFinished(chunk.call, "cancelled", result, 0.0)
                    raise
                add_result(engine, state, chunk.call, outcome, result, took)
                yield ToolCallFinished(chunk.call, outcome, result, took)
                engine._stopper.checkpoint()
            if last_round:
                raise RoundLimit
    except Cancelled:
        partial = state.unstored()
        added = settle(engine, state, cancelled=True)
        if added is not None:
            engine._record(AssistantRecord(engine.turn, added))
        ended = {
            "partial": partial,
            "turn_usage": state.total_usage(),
            "cost": settle_cost(engine, state),
        }
        engine._record(UiEventRecord(engine.turn, "cancel", ended))
        yield TurnCancelled(partial)
    except RoundLimit:
        yield fail(
            engine,
            state,
            f"stopped after {engine.limits.model_rounds} model calls in one turn: "
            "the model kept asking for tools",
            "round_limit",
            "ask it to answer with what it found so far, or to take a different approach",
            retryable=False,
        )
    except ProviderError as error:
        where = f" ({error.model})" if error.model else ""
        yield fail(
            engine,
            state,
            f"{error.kind.replace('_', ' ')}{where}: {error.provider_message}",
            error.kind,
            error.hint,
            retryable=error.kind not in NOT_RETRYABLE,
        )
    except (GeneratorExit, asyncio.CancelledError):
        # the consumer went away or its task was cancelled: leave a consistent history
        partial = state.unstored()
        added = settle(engine, state, cancelled=True)
        if added is not None:
            engine._record(AssistantRecord(engine.turn, added))
        ended = {"partial": partial, "reason": "abandoned", "cost": settle_cost(engine, state)}
        engine._record(UiEventRecord(engine.turn, "cancel", ended))
        raise
    except Exception as error:
        log.exception("turn %d failed unexpectedly", engine.turn)
        yield fail(
            engine,
            state,
            f"{type(error).__name__}: {error}",
            "internal",
            "this is a bug in modes-tui (the error is shown above). Retry may work.",
            retryable=True,
        )
    finally:
        engine._running = False
        engine._stopper.reset()


async def answer_with_fallbacks(
    engine: Engine, request: ModelRequest, state: TurnState, round_no: int
) -> AsyncGenerator[ModelEvent | RequestBuilt, None]:
    """The model's events; on a retryable failure before any output, the next fallback.

    litellm's own `fallbacks=` is not used: it retries on any error (a wrong key too),
    keeps no record of why it switched, and only covers the stream's opening; here the
    switch is a RequestBuilt with a note, so the panel and the session say who answered
    and why, and a failure after text arrived ends the turn with that text kept.
    """
    while True:
        setup = current(state)
        try:
            async with contextlib.aclosing(engine._stopper.stream(engine.model, request)) as stream:
                async for event in stream:
                    yield event
            return
        except ProviderError as error:
            produced = state.text or state.reasoning
            if produced or not setup.fallbacks or error.kind in NOT_RETRYABLE:
                raise
            failed = setup.model
            following = await engine._stopper.step(
                engine._setup(state.mode, model=setup.fallbacks[0], rest=setup.fallbacks[1:])
            )
            note = fallback_note(failed, error, following.model)
            following = replace(following, notes=(*following.notes, note))
            state.setup = following
            request = build_request(following, engine.conversation.messages, state.user_index)
            switched = {"from": failed, "kind": error.kind, "error": error.provider_message}
            engine._record(
                RequestRecord(
                    engine.turn,
                    request.to_dict(),
                    following.mode,
                    round_no,
                    following.notes,
                    fallback=switched,
                )
            )
            yield RequestBuilt(request, following.mode, round_no, following.notes)


def current(state: TurnState) -> TurnSetup:
    assert state.setup is not None  # set before the first request
    return state.setup


def settle_cost(engine: Engine, state: TurnState) -> dict[str, Any] | None:
    """The turn's cost into the ledger; what the session log keeps of it."""
    entry = engine.costs.ledger.add(engine.turn, state.calls)
    if entry is None:
        return None
    return {**entry.to_dict(), "baseline_model": engine.costs.ledger.baseline_model}


# ------------------------------------------------------------------ history


def stamp(engine: Engine, message: Message, state: TurnState) -> Message:
    setup = state.setup
    return replace(
        message,
        mode=state.mode,
        model=setup.model if setup else engine.model_override or engine.default_model,
        thinking=setup.thinking if setup else "off",
    )


def add_result(
    engine: Engine, state: TurnState, call: ToolCall, outcome: ToolOutcome, result: str, took: float
) -> None:
    engine.conversation.append(Message("tool", result, tool_call_id=call.id, name=call.name))
    if call in state.unresolved:
        state.unresolved.remove(call)
    engine._record(ToolResultRecord(engine.turn, call, outcome, result, round(took, 3)))


def settle(engine: Engine, state: TurnState, *, cancelled: bool) -> Message | None:
    """Close what the turn left open; return the assistant message added, if any."""
    for call in list(state.unresolved):
        result = tool_json({"cancelled": True, "reason": CANCELLED_BY_USER})
        add_result(engine, state, call, "cancelled", result, 0.0)
    if state.user_index < 0:
        return None
    if state.round_message is not None:
        if cancelled:
            index = state.round_message
            stored = engine.conversation.messages[index]
            engine.conversation.messages[index] = replace(stored, cancelled=True)
        return None
    partial = state.partial()
    if not cancelled and not partial:
        return None
    message = stamp(
        engine,
        Message("assistant", partial, reasoning="".join(state.reasoning), cancelled=cancelled),
        state,
    )
    engine.conversation.append(message)
    return message


def checkpoint_answer(engine: Engine, state: TurnState) -> None:
    """Write what arrived since the last checkpoint (`partial: true`), so a crash loses none
    of the answer. The first checkpoint of a round holds the text so far; each later one only
    what is new, marked with where it `continues`, so the log grows with the answer, not
    with its square (a 9 MB answer once grew its log to 921 MB)."""
    state.next_checkpoint = time.monotonic() + engine.checkpoint_seconds
    text, reasoning, mark = state.since_checkpoint()
    done = state.checkpointed
    continues = (
        None if done is None else {"content": done.text_chars, "reasoning": done.reasoning_chars}
    )
    message = stamp(engine, Message("assistant", text, reasoning=reasoning), state)
    engine._record(AssistantRecord(engine.turn, message, partial=True, continues=continues))
    state.checkpointed = mark


def fail(
    engine: Engine, state: TurnState, error: str, kind: str, hint: str, *, retryable: bool
) -> TurnFailed:
    """Close the turn as failed: keep what arrived, record it, and say what to do."""
    partial = state.unstored()
    settle(engine, state, cancelled=False)
    reasoning = "" if state.round_message is not None else "".join(state.reasoning)
    message = stamp(engine, Message("assistant", partial, reasoning=reasoning), state)
    engine._record(
        AssistantRecord(
            engine.turn,
            message,
            closes_turn=True,
            turn_usage=state.total_usage(),
            cost=settle_cost(engine, state),
            error=error,
            failure_kind=kind,
            hint=hint,
            retryable=retryable,
        )
    )
    return TurnFailed(error, kind=kind, hint=hint, partial=partial, retryable=retryable)


def last_user_index(engine: Engine) -> int | None:
    for index in range(len(engine.conversation) - 1, -1, -1):
        if engine.conversation.messages[index].role == "user":
            return index
    return None
