"""A scripted model: answers from a script, for tests, demos and screenshots.

It implements `ChatModel` without litellm, so an app built on it starts instantly and
never touches the network. Replies are either queued (`script(...)`) or produced by a
function of the request (`responder=`), e.g. one that answers in the style of the mode.
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from modes_tui.core.errors import ProviderError
from modes_tui.core.model.ports import ModelCapabilities
from modes_tui.core.model.wire import (
    Completion,
    ModelEvent,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
    ToolCall,
    ToolCallChunk,
    UsageReport,
)


@dataclass(frozen=True, slots=True)
class ScriptedReply:
    """One answer the scripted model gives."""

    text: str = ""
    """The answer's text."""
    chunk_size: int = 12
    """Characters per streamed chunk."""
    reasoning: str = ""
    """Reasoning streamed before the text."""
    tool_calls: Sequence[tuple[str, Mapping[str, Any]]] = ()
    """(name, arguments) calls made after the text."""
    error: ProviderError | None = None
    """Raised instead of answering."""
    delay: float = 0.0
    """Seconds to wait before each chunk."""


Responder = Callable[[ModelRequest], ScriptedReply]


@dataclass
class ScriptedModel:
    """A `ChatModel` that plays a script."""

    replies: deque[ScriptedReply] = field(default_factory=deque)
    """Queued replies, used first."""
    responder: Responder | None = None
    """Produces a reply when the queue is empty."""
    reasoning_models: frozenset[str] = frozenset({"scripted/thinker"})
    """Models that claim to support reasoning."""
    capable_of: Mapping[str, ModelCapabilities] = field(default_factory=dict)
    """What a model can do, where it differs from the default (tools, no price)."""
    requests: list[ModelRequest] = field(default_factory=list)
    """Every request received, in order."""

    def script(self, *replies: ScriptedReply) -> ScriptedModel:
        """Queue replies, in order."""
        self.replies.extend(replies)
        return self

    def _next(self, request: ModelRequest) -> ScriptedReply:
        self.requests.append(request)
        if self.replies:
            return self.replies.popleft()
        if self.responder is not None:
            return self.responder(request)
        return ScriptedReply("(the scripted model has nothing more to say)")

    def capabilities(self, model: str) -> ModelCapabilities:
        """As set in `capable_of`; else tools, and reasoning for `reasoning_models`."""
        known = self.capable_of.get(model)
        if known is not None:
            return known
        return ModelCapabilities(tools=True, reasoning=model in self.reasoning_models)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream the next reply in chunks."""
        reply = self._next(request)
        if reply.error is not None:
            raise reply.error
        for piece in _pieces(reply.reasoning, reply.chunk_size):
            await asyncio.sleep(reply.delay)
            yield ReasoningChunk(piece)
        for piece in _pieces(reply.text, reply.chunk_size):
            await asyncio.sleep(reply.delay)
            yield TextChunk(piece)
        for index, (name, arguments) in enumerate(reply.tool_calls):
            call_id = f"call_{len(self.requests)}_{index}"
            yield ToolCallChunk(ToolCall(call_id, name, dict(arguments)))
        prompt_tokens = sum(len(str(m.get("content") or "")) for m in request.messages) // 4
        yield UsageReport(prompt_tokens, max(1, len(reply.text) // 4), 0.0)

    async def complete(self, request: ModelRequest) -> Completion:
        """The next reply as one completion."""
        reply = self._next(request)
        if reply.error is not None:
            raise reply.error
        return Completion(text=reply.text, model=request.model)


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


SCRIPTED_PREFIX = "scripted/"


def echo_responder(request: ModelRequest) -> ScriptedReply:
    """A deterministic stand-in answer: it repeats the user's last message.

    `--model scripted/echo` runs the app offline, instantly and reproducibly (demos, screenshots,
    scripted tests); it never pretends to be a real answer.
    """
    last = next(
        (
            str(m.get("content") or "")
            for m in reversed(request.messages)
            if m.get("role") == "user"
        ),
        "",
    )
    return ScriptedReply(f"(scripted model, no real answer) You said: {last.strip()}")


SLOW_CHUNK_SECONDS = 0.02


def slow_responder(request: ModelRequest) -> ScriptedReply:
    """A long answer streamed slowly: 1,000 lines quoting the message, 20 characters every
    20 ms (about a minute for "hello": 54,000 characters).

    `--model scripted/slow` gives a turn that is still streaming when something happens to
    it: crash tests kill the process mid-answer, demos show cancel and checkpoints.
    """
    said = echo_responder(request).text
    lines = [f"{number:04d} {said}" for number in range(1, 1001)]
    return ScriptedReply("\n".join(lines), chunk_size=20, delay=SLOW_CHUNK_SECONDS)


def command_responder(request: ModelRequest) -> ScriptedReply:
    """Asks to run the user's message as a shell command, then says what it printed.

    `--model scripted/command` shows the confirmation offline (demos, the REPL's terminal
    tests): where the mode offers `run_command` (shell), the message is the command, run
    only after a yes; elsewhere it answers like `scripted/echo`. The first words stream
    slowly, as a real model's would, so there is time to type ahead of the question.
    """
    last = request.messages[-1] if request.messages else {}
    if last.get("role") == "tool":
        result = str(last.get("content") or "")
        return ScriptedReply(f"(scripted model) The command answered: {result[:200]}")
    if not any(tool.name == "run_command" for tool in request.tools):
        return echo_responder(request)
    command = echo_responder(request).text.split("You said: ", 1)[-1]
    return ScriptedReply(
        f"(scripted model) I will run `{command}` if you say yes.",
        chunk_size=4,
        delay=SLOW_CHUNK_SECONDS * 2,
        tool_calls=[("run_command", {"command": command})],
    )


_EDIT_REQUEST = re.compile(r"replace `(?P<old>[^`]+)` with `(?P<new>[^`]*)` in (?P<path>\S+)")


def edit_responder(request: ModelRequest) -> ScriptedReply:
    """Edits a file as the user's message says, then says what the tool answered.

    `--model scripted/edit` shows the edit tools offline (demos, REPL tests): a message
    "replace `OLD` with `NEW` in PATH" in a mode that offers `edit_file` becomes that call
    (the confirmation shows its diff); any other message answers like `scripted/echo`.
    """
    last = request.messages[-1] if request.messages else {}
    if last.get("role") == "tool":
        result = str(last.get("content") or "")
        return ScriptedReply(f"(scripted model) edit_file answered: {result[:300]}")
    found = _EDIT_REQUEST.search(str(last.get("content") or ""))
    if found is None or not any(tool.name == "edit_file" for tool in request.tools):
        return echo_responder(request)
    arguments = {"path": found["path"], "old_text": found["old"], "new_text": found["new"]}
    return ScriptedReply("(scripted model) Editing.", tool_calls=[("edit_file", arguments)])
