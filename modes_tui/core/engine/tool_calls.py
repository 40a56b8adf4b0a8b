"""The tool-call phase of a round: each call the model asked for, through the guards.

Every call gets a result the model can read: a refusal (round limit, bad arguments, an
unknown tool, a guard's block) is a JSON error, never an exception; a tool's output is capped
so one call cannot fill the model's context. Each result joins the history and the session
log as soon as it exists, so a cancel half-way leaves a valid history.

The phase ends with an outcome (`core.engine.outcomes`): `Cancelled`, `LimitReached` on the
turn's last round, `HandOff` after a `switch_mode` call went through, or none (go round).

Where to extend: a new check on every call is a `Guard` in `TurnContext.guards` (see
`core.engine.guards`; the engine appends the confirmation guard last); a new verdict kind is
a case in `_verdict`; a new outcome a user sees is a `ToolOutcome` (core.history.events).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from modes_tui.core.edits.handoff import SWITCH_MODE
from modes_tui.core.engine.context import TurnContext
from modes_tui.core.engine.guards import Limits
from modes_tui.core.engine.outcomes import Cancelled, HandOff, LimitReached
from modes_tui.core.engine.ports import Guard
from modes_tui.core.engine.state import StopRequested, TurnState
from modes_tui.core.engine.verdicts import Answer, Block, Cancel, PendingCall
from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import (
    ToolCallFinished,
    ToolCallRequested,
    ToolOutcome,
    TurnEvent,
)
from modes_tui.core.history.records import ToolResultRecord
from modes_tui.core.model.wire import ToolCall, ToolCallChunk
from modes_tui.core.tools.registry import Tool, ToolError

__all__ = [
    "CANCELLED_BY_USER",
    "TOOL_FAILED",
    "add_result",
    "as_text",
    "cap_output",
    "resolve_call",
    "run_calls",
    "tool_json",
]

log = logging.getLogger("modes_tui.engine")

# Says nothing of a log: the app keeps no log file, and the model cannot read one anyway.
TOOL_FAILED = (
    "the tool failed unexpectedly (a fault in the tool, not in the call); "
    "try another way to get what you need"
)
CANCELLED_BY_USER = "the user cancelled the turn before this call finished"
GUARD_FAILED = "a safety check failed; the tool did not run"

Resolved = tuple[ToolOutcome, str, float]
"""(outcome, the result text the model reads, milliseconds the tool ran)."""


async def run_calls(
    ctx: TurnContext,
    turn: TurnState,
    calls: Sequence[ToolCallChunk],
    *,
    round_no: int,
    last_round: bool,
) -> AsyncGenerator[TurnEvent | HandOff | LimitReached | Cancelled, None]:
    """Resolve the round's calls in order: ToolCallRequested, then ToolCallFinished, each.

    Ends with `Cancelled` when the user stopped a call, `LimitReached` on the turn's last
    round (every call was refused), `HandOff` when a `switch_mode` call went through, and
    with no outcome otherwise (the next round reads the results)."""
    assert turn.setup is not None  # resolved before the first request
    handed: ToolCall | None = None
    for chunk in calls:
        tool = turn.setup.tools.get(chunk.call.name)
        asks = bool(tool and tool.needs_confirmation and not last_round)
        yield ToolCallRequested(chunk.call, needs_confirmation=asks)
        try:  # a cancel while the caller held ToolCallRequested lands in step
            outcome, result, took = await ctx.stopper.step(
                resolve_call(
                    chunk,
                    tool,
                    turn,
                    turn=ctx.state.turn,
                    round_no=round_no,
                    last_round=last_round,
                    messages=ctx.state.conversation.messages,
                    guards=ctx.guards,
                    limits=ctx.config.limits,
                )
            )
        except StopRequested:
            result = tool_json({"cancelled": True, "reason": CANCELLED_BY_USER})
            add_result(ctx, turn, chunk.call, "cancelled", result, 0.0)
            yield ToolCallFinished(chunk.call, "cancelled", result, 0.0)
            yield Cancelled()
            return
        add_result(ctx, turn, chunk.call, outcome, result, took)
        yield ToolCallFinished(chunk.call, outcome, result, took)
        ctx.stopper.checkpoint()
        if chunk.call.name == SWITCH_MODE and outcome == "ok":
            handed = chunk.call  # the next round is the named mode's (hand_off.py)
    if last_round:
        yield LimitReached(ctx.config.limits.model_rounds)
    elif handed is not None:
        yield HandOff(handed)


def add_result(
    ctx: TurnContext,
    turn: TurnState,
    call: ToolCall,
    outcome: ToolOutcome,
    result: str,
    took: float,
) -> None:
    """A call's result into the history (the model reads it next round) and the log."""
    ctx.state.conversation.append(Message("tool", result, tool_call_id=call.id, name=call.name))
    if call in turn.unresolved:
        turn.unresolved.remove(call)
    ctx.recorder.write(ToolResultRecord(ctx.state.turn, call, outcome, result, round(took, 3)))


async def resolve_call(
    chunk: ToolCallChunk,
    tool: Tool | None,
    state: TurnState,
    *,
    turn: int,
    round_no: int,
    last_round: bool,
    messages: Sequence[Message],
    guards: Sequence[Guard],
    limits: Limits,
) -> Resolved:
    """Run one call through the checks, the guards and the tool: (outcome, result, ms)."""
    refused = _refusal(chunk, tool, state, last_round=last_round, limits=limits)
    if refused is not None:
        return refused
    assert tool is not None  # `_refusal` refuses a call to no tool
    pending = PendingCall(
        call=chunk.call,
        tool=tool,
        turn=turn,
        round=round_no,
        earlier=tuple(state.guarded),
        messages=tuple(messages),
        mode=state.setup.mode if state.setup else None,
    )
    state.guarded.append(chunk.call)
    for guard in guards:
        closed = await _ask_guard(guard, pending, limits)
        if closed is not None:
            return closed
    return await _invoke(chunk.call, tool, limits)


def _refusal(
    chunk: ToolCallChunk, tool: Tool | None, state: TurnState, *, last_round: bool, limits: Limits
) -> Resolved | None:
    """Why the call cannot reach the guards at all (None: it can)."""
    call = chunk.call
    if last_round:
        error = f"not run: this turn reached its limit of {limits.model_rounds} model calls"
        return "blocked", tool_json({"error": error, "type": "round_limit"}), 0.0
    if chunk.invalid_arguments:
        error = (
            f"invalid arguments: {chunk.invalid_arguments}. "
            "Call it again with the arguments as one JSON object."
        )
        return "error", tool_json({"error": error}), 0.0
    if tool is None:
        offered = ", ".join(state.setup.tools) if state.setup else ""
        error = (
            f"there is no tool called {call.name!r} in this turn; "
            f"tools you can call: {offered or 'none'}"
        )
        return "error", tool_json({"error": error}), 0.0
    problem = tool.check_arguments(call.arguments)
    if problem:
        return "error", tool_json({"error": f"invalid arguments for {call.name}: {problem}"}), 0.0
    return None


async def _ask_guard(guard: Guard, pending: PendingCall, limits: Limits) -> Resolved | None:
    """One guard's verdict as a closed call (None: it lets the call through)."""
    try:
        verdict = guard.check(pending)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except Exception:  # a broken guard refuses rather than letting the call through
        log.exception("guard %s failed on %s", type(guard).__name__, pending.call.name)
        return "blocked", tool_json({"error": GUARD_FAILED}), 0.0
    if verdict is None:
        return None
    return _verdict(guard, verdict, limits)


def _verdict(guard: Guard, verdict: object, limits: Limits) -> Resolved:
    if isinstance(verdict, Cancel):
        return "cancelled", tool_json({"cancelled": True, "reason": verdict.reason}), 0.0
    if isinstance(verdict, Block):
        return "blocked", tool_json({"error": verdict.message, "type": verdict.type}), 0.0
    if isinstance(verdict, Answer):
        return "answered", cap_output(limits, as_text(verdict.result)), 0.0
    log.error("guard %s returned %r; the call is blocked", type(guard).__name__, verdict)
    return "blocked", tool_json({"error": GUARD_FAILED}), 0.0


async def _invoke(call: ToolCall, tool: Tool, limits: Limits) -> Resolved:
    """Run the tool within its time limit; any failure is a result the model reads."""
    limit = tool.timeout or limits.tool_timeout
    started = time.perf_counter()
    outcome: ToolOutcome = "ok"
    try:
        value = await asyncio.wait_for(tool.invoke(call.arguments), limit)
        text = as_text(value)
    except ToolError as error:
        outcome, text = "error", tool_json({"error": error.message})
    except TimeoutError:
        outcome = "error"
        text = tool_json({"error": f"the tool took longer than {limit:g} seconds and was stopped"})
    except Exception:
        log.exception("tool %s failed on %s", call.name, json.dumps(dict(call.arguments))[:500])
        outcome, text = "error", tool_json({"error": TOOL_FAILED})
    took = (time.perf_counter() - started) * 1000
    return outcome, cap_output(limits, text), took


def cap_output(limits: Limits, text: str) -> str:
    """A tool's output cut to the limit, saying how much was cut and what to do."""
    cap = limits.tool_output_chars
    if len(text) <= cap:
        return text
    return (
        f"{text[:cap]}\n[… {len(text) - cap} characters cut: the output was longer than "
        f"{cap} characters; ask for a smaller part]"
    )


def tool_json(value: Any) -> str:
    """A value as the JSON text a model reads."""
    return json.dumps(value, ensure_ascii=False)


def as_text(value: Any) -> str:
    """What the model reads of a tool's return value: text as is, anything else as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return '{"ok": true}'
    return json.dumps(value, ensure_ascii=False, default=str)
