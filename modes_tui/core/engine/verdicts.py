"""A tool call before the guards (`PendingCall`) and what a guard may answer (`Verdict`):
the values the `Guard` port speaks, so that the port and the guards need not import each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from modes_tui.core.history.conversation import Message
from modes_tui.core.model.wire import ToolCall
from modes_tui.core.tools.registry import Tool


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A tool call about to run, with what a guard may want to know about the turn."""

    call: ToolCall
    """The call: id, name, arguments."""
    tool: Tool
    """The tool it would run."""
    turn: int
    """The user turn (1-based)."""
    round: int
    """The model call of the turn that asked for it (1-based)."""
    earlier: tuple[ToolCall, ...]
    """Calls earlier in this turn that reached the guards, oldest first."""
    messages: Sequence[Message]
    """The conversation so far (read-only)."""
    mode: str | None = None
    """The mode answering (its policy decides the call); None: no mode."""


@dataclass(frozen=True, slots=True)
class Cancel:
    """Decline the call; the model reads it as declined, not failed."""

    reason: str
    """Guidance the model reads, e.g. "the user declined; ask what they want instead"."""


@dataclass(frozen=True, slots=True)
class Block:
    """Refuse the call with an error the model reads."""

    message: str
    """Why, written for the model."""
    type: str = "guard_error"
    """A short machine-readable kind: guard_error, budget_spent, loop_detected, ..."""


@dataclass(frozen=True, slots=True)
class Answer:
    """Answer for the tool, which does not run."""

    result: Any
    """What the model reads as the tool's output (text, or JSON-able data)."""


Verdict = Cancel | Block | Answer
