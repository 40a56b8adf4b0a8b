"""The conversation every mode shares: messages, tool calls and their results.

One history for all modes. Mode instructions never enter it; each assistant message
records which mode, model and thinking produced it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from modes_tui.core.history.compaction import Compaction

from modes_tui.core.model.wire import ToolCall

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class Message:
    """One entry of the shared history."""

    role: Role
    """Who said it."""
    content: str
    """The text ('' for an assistant message that only calls tools)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Calls an assistant message asked for."""
    tool_call_id: str | None = None
    """For a tool message: the call it answers."""
    name: str | None = None
    """For a tool message: the tool's name."""
    mode: str | None = None
    """For an assistant message: the mode that produced it."""
    model: str | None = None
    """For an assistant message: the model that produced it."""
    thinking: str | None = None
    """For an assistant message: the thinking level in force."""
    reasoning: str = ""
    """Reasoning text the model streamed, if any (never sent back to a model)."""
    cancelled: bool = False
    """The answer was cut short by the user."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data, skipping empty optional fields."""
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [call.to_dict() for call in self.tool_calls]
        for key in ("tool_call_id", "name", "mode", "model", "thinking"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        if self.reasoning:
            data["reasoning"] = self.reasoning
        if self.cancelled:
            data["cancelled"] = True
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        """The inverse of to_dict; unknown keys are ignored."""
        return cls(
            role=data["role"],
            content=str(data.get("content") or ""),
            tool_calls=tuple(ToolCall.from_dict(c) for c in data.get("tool_calls") or ()),
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            mode=data.get("mode"),
            model=data.get("model"),
            thinking=data.get("thinking"),
            reasoning=str(data.get("reasoning") or ""),
            cancelled=bool(data.get("cancelled", False)),
        )


@dataclass
class Conversation:
    """The shared, ordered history of one session."""

    messages: list[Message] = field(default_factory=list)
    """Every message, oldest first."""
    compaction: Compaction | None = None
    """The summary that stands, for the models, for the first `compaction.upto` messages
    (None: they see the messages themselves). The messages stay for the user."""

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def __len__(self) -> int:
        return len(self.messages)

    def append(self, message: Message) -> None:
        """Add a message at the end."""
        self.messages.append(message)

    def extend(self, messages: Iterable[Message]) -> None:
        """Add messages at the end, in order."""
        self.messages.extend(messages)

    def clear(self) -> None:
        """Forget every message (the `/clear` command), and their summary."""
        self.messages.clear()
        self.compaction = None

    def last_mode(self) -> str | None:
        """The mode of the latest assistant message, if any."""
        for message in reversed(self.messages):
            if message.role == "assistant" and message.mode is not None:
                return message.mode
        return None

    def user_turns(self) -> int:
        """How many user messages there are."""
        return sum(1 for message in self.messages if message.role == "user")

    def replace_last(self, message: Message) -> None:
        """Swap the last message (used to mark a partial answer cancelled)."""
        self.messages[-1] = message


def with_mode(
    message: Message, mode: str | None, model: str | None, thinking: str | None
) -> Message:
    """A copy of `message` stamped with what produced it."""
    return replace(message, mode=mode, model=model, thinking=thinking)
