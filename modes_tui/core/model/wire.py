"""What crosses the model seam: one request in, a stream of model events out.

Pure data: importing this module loads no model library. The adapters in `modes_tui.llm`
turn a `ModelRequest` into a provider call and the provider's answer back into these
events; the engine and the routing backends read nothing else from a model. A `ToolCall`
is the model's too (the conversation keeps them, `history.conversation`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from modes_tui.core.redaction import redact_secrets


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the model asked for."""

    id: str
    """The provider's id for the call, echoed back with the result."""
    name: str
    """The tool's name."""
    arguments: Mapping[str, Any]
    """Parsed arguments."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for logs and sessions."""
        return {"id": self.id, "name": self.name, "arguments": dict(self.arguments)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolCall:
        """The inverse of to_dict."""
        return cls(str(data["id"]), str(data["name"]), dict(data.get("arguments") or {}))


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    """The tool's name."""
    description: str
    """What it does, from the docstring."""
    parameters: Mapping[str, Any]
    """JSON schema of its arguments."""

    def to_dict(self) -> dict[str, Any]:
        """OpenAI function-tool format."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Exactly what one model call is given."""

    model: str
    """A litellm model id."""
    messages: tuple[Mapping[str, Any], ...]
    """OpenAI-format messages, system prompt first."""
    tools: tuple[ToolSpec, ...] = ()
    """The tools offered on this call (only the mode's)."""
    temperature: float | None = None
    """Sampling temperature, when set."""
    max_tokens: int | None = None
    """Answer length cap, when set."""
    reasoning_effort: str | None = None
    """low | medium | high, only where the model supports it."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Any other provider parameters (response_format, logprobs, timeout, ...)."""

    def params(self) -> dict[str, Any]:
        """Keyword arguments for the call (litellm's names)."""
        params: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in self.messages]}
        if self.tools:
            params["tools"] = [tool.to_dict() for tool in self.tools]
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        if self.reasoning_effort is not None:
            params["reasoning_effort"] = self.reasoning_effort
        params.update(self.extra)
        return params

    def to_dict(self) -> dict[str, Any]:
        """The exact arguments, with secrets redacted, for logs and sessions."""
        redacted: dict[str, Any] = redact_secrets(self.params())
        return redacted


@dataclass(frozen=True, slots=True)
class TextChunk:
    """Part of the answer's text."""

    kind: ClassVar[str] = "text"
    text: str
    """The new text."""


@dataclass(frozen=True, slots=True)
class ReasoningChunk:
    """Part of the model's reasoning, shown folded."""

    kind: ClassVar[str] = "reasoning"
    text: str
    """The new reasoning text."""


@dataclass(frozen=True, slots=True)
class ToolCallChunk:
    """A complete tool call (the adapter assembles streamed fragments)."""

    kind: ClassVar[str] = "tool_call"
    call: ToolCall
    """The call."""
    invalid_arguments: str | None = None
    """Why the streamed arguments could not be parsed, if they could not."""


@dataclass(frozen=True, slots=True)
class UsageReport:
    """Token counts and cost of one model call."""

    kind: ClassVar[str] = "usage"
    prompt_tokens: int
    """Tokens in the request."""
    completion_tokens: int
    """Tokens in the answer."""
    cost: float | None = None
    """Cost in USD where the price is known."""


ModelEvent = TextChunk | ReasoningChunk | ToolCallChunk | UsageReport
"""What a streamed model call yields."""


@dataclass(frozen=True, slots=True)
class Completion:
    """A whole, non-streamed answer (the chat and judge routing backends use it)."""

    text: str
    """The answer's text."""
    top_logprobs: tuple[Mapping[str, float], ...] = ()
    """Per generated token: candidate token -> log probability."""
    usage: UsageReport | None = None
    """Token counts and cost."""
    model: str = ""
    """The model that answered."""
