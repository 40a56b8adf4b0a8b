"""One tool call of a model's round: the checks, the guards, the tool, and its result text.

Every call gets a result the model can read: a refusal (round limit, bad arguments, an
unknown tool, a guard's block) is a JSON error, never an exception; a tool's output is capped
so one call cannot fill the model's context.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
from collections.abc import Sequence
from typing import Any

from modes_tui.core.conversation import Message
from modes_tui.core.engine.guards import Answer, Block, Cancel, Limits, PendingCall
from modes_tui.core.engine.state import TurnState
from modes_tui.core.engine.wire import ToolCallChunk
from modes_tui.core.events import ToolOutcome
from modes_tui.core.ports import Guard
from modes_tui.core.tools import Tool, ToolError

__all__ = ["CANCELLED_BY_USER", "TOOL_FAILED", "as_text", "cap_output", "resolve_call", "tool_json"]

log = logging.getLogger("modes_tui.engine")

# Says nothing of a log: the app keeps no log file, and the model cannot read one anyway.
TOOL_FAILED = (
    "the tool failed unexpectedly (a fault in the tool, not in the call); "
    "try another way to get what you need"
)
CANCELLED_BY_USER = "the user cancelled the turn before this call finished"


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
) -> tuple[ToolOutcome, str, float]:
    """Run one call through the checks, the guards and the tool: (outcome, result, ms)."""
    call = chunk.call
    if last_round:
        return (
            "blocked",
            tool_json(
                {
                    "error": f"not run: this turn reached its limit of "
                    f"{limits.model_rounds} model calls",
                    "type": "round_limit",
                }
            ),
            0.0,
        )
    if chunk.invalid_arguments:
        return (
            "error",
            tool_json(
                {
                    "error": f"invalid arguments: {chunk.invalid_arguments}. "
                    "Call it again with the arguments as one JSON object."
                }
            ),
            0.0,
        )
    if tool is None:
        offered = ", ".join(state.setup.tools) if state.setup else ""
        return (
            "error",
            tool_json(
                {
                    "error": f"there is no tool called {call.name!r} in this turn; "
                    f"tools you can call: {offered or 'none'}"
                }
            ),
            0.0,
        )
    problem = tool.check_arguments(call.arguments)
    if problem:
        return "error", tool_json({"error": f"invalid arguments for {call.name}: {problem}"}), 0.0

    pending = PendingCall(
        call=call,
        tool=tool,
        turn=turn,
        round=round_no,
        earlier=tuple(state.guarded),
        messages=tuple(messages),
    )
    state.guarded.append(call)
    for guard in guards:
        try:
            verdict = guard.check(pending)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception:  # a broken guard refuses rather than letting the call through
            log.exception("guard %s failed on %s", type(guard).__name__, call.name)
            return (
                "blocked",
                tool_json({"error": "a safety check failed; the tool did not run"}),
                0.0,
            )
        if verdict is None:
            continue
        if isinstance(verdict, Cancel):
            return "cancelled", tool_json({"cancelled": True, "reason": verdict.reason}), 0.0
        if isinstance(verdict, Block):
            return "blocked", tool_json({"error": verdict.message, "type": verdict.type}), 0.0
        if isinstance(verdict, Answer):
            return "answered", cap_output(limits, as_text(verdict.result)), 0.0
        log.error("guard %s returned %r; the call is blocked", type(guard).__name__, verdict)
        return "blocked", tool_json({"error": "a safety check failed; the tool did not run"}), 0.0

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
