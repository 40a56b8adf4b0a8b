"""What a turn tells the outside world: a closed union of frozen event dataclasses.

`Engine.run_turn` yields these; the TUI and the REPL only translate them, and replay
rebuilds the same stream from a session file. Each event has a literal `type` and
`to_dict()` for `--json` output. Names are past facts and are final once released.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal

from modes_tui.core.history.compaction import Compaction, ContextReport
from modes_tui.core.history.conversation import Message
from modes_tui.core.model.wire import ModelRequest, ToolCall
from modes_tui.core.values.correction import Correction
from modes_tui.core.values.route import Route

ToolOutcome = Literal["ok", "error", "cancelled", "blocked", "answered"]


class _Event:
    """Shared behaviour: `to_dict()` with the literal type first."""

    type: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type}
        for item in fields(self):  # type: ignore[arg-type]
            data[item.name] = _plain(getattr(self, item.name))
        return data


def _plain(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class RouteDecided(_Event):
    """The router (or the caller) decided which mode takes the turn."""

    type: ClassVar[Literal["route_decided"]] = "route_decided"
    route: Route
    """The decision, with who decided, confidence, probabilities and reason."""
    setting: str = "auto"
    """The control-file setting in force: auto, off, or a forced mode name."""
    warnings: tuple[str, ...] = ()
    """Problems noticed on the way (an invalid control file, for example)."""


@dataclass(frozen=True, slots=True)
class ModeChanged(_Event):
    """The mode differs from the previous turn's."""

    type: ClassVar[Literal["mode_changed"]] = "mode_changed"
    previous: str | None
    """The mode of the previous turn (None: no mode / first turn)."""
    current: str | None
    """The mode of this turn (None: `off`, no mode)."""


@dataclass(frozen=True, slots=True)
class RequestBuilt(_Event):
    """The exact request about to be sent to the model."""

    type: ClassVar[Literal["request_built"]] = "request_built"
    request: ModelRequest
    """Model, messages (base prompt, mode instructions, history window), tools, parameters."""
    mode: str | None
    """The mode this request belongs to."""
    round: int = 1
    """1 for the first call of the turn, 2+ after tool results."""
    notes: tuple[str, ...] = ()
    """Things the user should know, e.g. "thinking n/a for local/gemma-3-270m"."""
    role: str | None = None
    """The role (`fast`, `strong`) that gave the request's model; None for a plain name."""
    context: ContextReport | None = None
    """How the request was fitted into the model's context window (None: window unknown)."""


@dataclass(frozen=True, slots=True)
class ReasoningDelta(_Event):
    """More of the model's reasoning."""

    type: ClassVar[Literal["reasoning_delta"]] = "reasoning_delta"
    text: str
    """The new reasoning text."""


@dataclass(frozen=True, slots=True)
class TextDelta(_Event):
    """More of the answer."""

    type: ClassVar[Literal["text_delta"]] = "text_delta"
    text: str
    """The new answer text."""


@dataclass(frozen=True, slots=True)
class ToolCallRequested(_Event):
    """The model asked for a tool call (it has not run yet)."""

    type: ClassVar[Literal["tool_call_requested"]] = "tool_call_requested"
    call: ToolCall
    """The call."""
    needs_confirmation: bool = False
    """The user will be asked before it runs."""


@dataclass(frozen=True, slots=True)
class ToolCallFinished(_Event):
    """A tool call was resolved: run, refused, cancelled, or answered by a guard."""

    type: ClassVar[Literal["tool_call_finished"]] = "tool_call_finished"
    call: ToolCall
    """The call."""
    outcome: ToolOutcome
    """ok, error, cancelled, blocked, or answered (by a guard)."""
    result: str
    """What the model reads (JSON text)."""
    duration_ms: float = 0.0
    """How long the tool ran."""


@dataclass(frozen=True, slots=True)
class Usage(_Event):
    """Token counts and cost of one model call."""

    type: ClassVar[Literal["usage"]] = "usage"
    model: str
    """The model that was called."""
    prompt_tokens: int
    """Tokens in the request."""
    completion_tokens: int
    """Tokens in the answer."""
    cost: float | None = None
    """USD, where litellm knows the price."""


@dataclass(frozen=True, slots=True)
class TurnFinished(_Event):
    """The answer is complete and recorded."""

    type: ClassVar[Literal["turn_finished"]] = "turn_finished"
    message: Message
    """The final assistant message, stamped with mode, model and thinking."""


@dataclass(frozen=True, slots=True)
class TurnFailed(_Event):
    """The turn could not finish; nothing the user typed is lost."""

    type: ClassVar[Literal["turn_failed"]] = "turn_failed"
    error: str
    """What went wrong, in the provider's own words where possible."""
    kind: str = "unknown"
    """timeout, rate_limit, auth, connection, bad_stream, context_too_long, ..."""
    hint: str = ""
    """What the user can do about it."""
    partial: str = ""
    """Answer text received before the failure (kept)."""
    retryable: bool = True
    """Whether retrying the same turn may help."""


@dataclass(frozen=True, slots=True)
class TurnCancelled(_Event):
    """The user cancelled; the partial answer is kept and marked cancelled."""

    type: ClassVar[Literal["turn_cancelled"]] = "turn_cancelled"
    partial: str
    """Answer text received before the cancel."""


@dataclass(frozen=True, slots=True)
class TurnCorrected(_Event):
    """The user said a turn belonged to another mode.

    With `rerun`, it opens a re-run of this turn: the answer shown so far is superseded (it
    stays on screen, folded, and leaves the shared history) and the events that follow
    answer the turn again in `corrected_mode`. Without, the correction was only recorded
    (an earlier turn, or a forced resend of the same message, which keeps both answers).
    """

    type: ClassVar[Literal["turn_corrected"]] = "turn_corrected"
    turn: int
    """The user turn that was corrected (1-based)."""
    answered_mode: str | None
    """The mode whose answer is corrected (None: no mode)."""
    corrected_mode: str
    """The mode the user says should have answered."""
    rerun: bool = True
    """This turn is answered again in `corrected_mode` by the events that follow."""
    correction: Correction | None = None
    """What was recorded for the router to learn (None: nothing; see `note`)."""
    note: str = ""
    """Why nothing was recorded, or what the user should know (a store that failed)."""


@dataclass(frozen=True, slots=True)
class ConversationCompacted(_Event):
    """Older turns were summarised for the model (near the limit, `/compact`, or after a
    provider refused a request as too long); the chat keeps showing them."""

    type: ClassVar[Literal["conversation_compacted"]] = "conversation_compacted"
    compaction: Compaction
    """The summary, how much of the conversation it stands for, who wrote it and why."""


TurnEvent = (
    RouteDecided
    | ModeChanged
    | RequestBuilt
    | ReasoningDelta
    | TextDelta
    | ToolCallRequested
    | ToolCallFinished
    | Usage
    | TurnFinished
    | TurnFailed
    | TurnCancelled
    | TurnCorrected
    | ConversationCompacted
)

EventType = Literal[
    "route_decided",
    "mode_changed",
    "request_built",
    "reasoning_delta",
    "text_delta",
    "tool_call_requested",
    "tool_call_finished",
    "usage",
    "turn_finished",
    "turn_failed",
    "turn_cancelled",
    "turn_corrected",
    "conversation_compacted",
]
"""The literal `type` of every event: translators `match` on it and end with `assert_never`."""
