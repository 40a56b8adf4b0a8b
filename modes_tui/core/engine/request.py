"""The request a model is sent for one round of a turn: what it may see of the history.

The base prompt and the mode's instructions form the system part (never stored in the
history); the profile's `history: {last: N}` window picks the earlier messages; the mode-change
note tells the model another mode answered before; tool traffic of this turn follows the
user's message. Reasoning is never sent back, and an answer the user cut short says so.
When older turns were compacted (`core.context`), the window starts after them and their
summary ends the system part instead.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from modes_tui.core.context.compaction import summary_block
from modes_tui.core.engine.mode_note import mode_change_note
from modes_tui.core.engine.state import TurnSetup
from modes_tui.core.history.compaction import Compaction
from modes_tui.core.history.conversation import Message
from modes_tui.core.model.wire import ModelRequest
from modes_tui.core.packs.fields import HistoryWindow

__all__ = ["CUT_SHORT", "build_request"]

CUT_SHORT = "[The user stopped this answer here.]"


def build_request(
    setup: TurnSetup,
    history: list[Message],
    user_index: int,
    compaction: Compaction | None = None,
) -> ModelRequest:
    """The request for one round: the setup's system part, the window of earlier messages,
    the user's message and what this turn added since (tool calls and results).
    `compaction` stands for the messages it covers: its summary joins the system part."""
    start = min(compaction.upto, user_index) if compaction is not None else 0
    earlier = _window(history[start:user_index], setup.window)
    system = setup.system
    if compaction is not None:
        system = f"{system}\n\n{summary_block(compaction)}"
    # The mode-change note ends the system part: in the user's message a base model
    # (the embedded one reads a plain transcript) copies it as its answer.
    note = _mode_note(earlier, setup.mode)
    system = f"{system}\n\n{note}" if note else system
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for message in earlier:
        wire.extend(_to_wire(message))
    wire.append({"role": "user", "content": history[user_index].content})
    for message in history[user_index + 1 :]:
        wire.extend(_to_wire(message))
    return ModelRequest(
        model=setup.model,
        messages=tuple(wire),
        tools=setup.specs,
        temperature=setup.temperature,
        max_tokens=setup.max_tokens,
        reasoning_effort=setup.reasoning_effort,
    )


def _window(messages: list[Message], window: HistoryWindow) -> list[Message]:
    """The earlier messages a profile's `history: {last: N}` lets the model see.

    N counts what people said (user messages and assistant text), not tool traffic: a turn
    with many tool calls must not push the previous exchange out of sight. The window then
    starts at a user message, so it never begins mid-exchange and never holds a tool result
    without its call.
    """
    if window.last is None:
        return _from_first_user(messages)
    if window.last == 0 or not messages:
        return []
    counted = 0
    start = len(messages)
    for index in range(len(messages) - 1, -1, -1):
        start = index
        message = messages[index]
        if message.role == "user" or (message.role == "assistant" and message.content):
            counted += 1
            if counted >= window.last:
                break
    return _from_first_user(messages[start:])


def _from_first_user(messages: list[Message]) -> list[Message]:
    """Drop what precedes the first user message, so a window never starts mid-exchange."""
    for index, message in enumerate(messages):
        if message.role == "user":
            return messages[index:]
    return []


def _sent(message: Message) -> bool:
    return not (message.role == "assistant" and not message.content and not message.tool_calls)


def _to_wire(message: Message) -> list[dict[str, Any]]:
    """A stored message as the model is given it (reasoning is never sent back)."""
    if message.role == "user":
        return [{"role": "user", "content": message.content}]
    if message.role == "tool":
        return [
            {
                "role": "tool",
                "tool_call_id": message.tool_call_id,
                "name": message.name,
                "content": message.content,
            }
        ]
    if message.role != "assistant" or not _sent(message):
        return []
    content = message.content
    if message.cancelled and content:
        content = f"{content}\n\n{CUT_SHORT}"
    if not message.tool_calls:
        return [{"role": "assistant", "content": content}]
    return [
        {
            "role": "assistant",
            "content": content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": json.dumps(dict(call.arguments), ensure_ascii=False),
                    },
                }
                for call in message.tool_calls
            ],
        }
    ]


def _mode_note(earlier: Sequence[Message], mode: str | None) -> str:
    """The mode-change note, when the last reply the model sees came from another mode."""
    for message in reversed(earlier):
        if message.role == "assistant" and _sent(message):
            return "" if message.mode == mode else mode_change_note(message.mode, mode)
    return ""
