"""One fold over a turn's events: what the turn said, in one record.

`TurnTranscript.apply` is the only place that interprets the engine's event stream as a
turn: the route, the requests, the answer text per model round, reasoning, tool calls and
their results, usage and cost, the ending (finished, failed, cancelled) and corrections.
The TUI (chat, route panel, inspector), the REPL's `/why` and the Markdown export read it;
live turns and replayed ones fill it from the same `TurnEvent` stream. Headless: it only
remembers what the engine said and decides nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, assert_never

from modes_tui.core.history import events as ev
from modes_tui.core.history.conversation import Message
from modes_tui.core.model.wire import ToolCall
from modes_tui.core.values.route import Route

Status = str  # "routing" | "answering" | "finished" | "failed" | "cancelled"


@dataclass
class ToolActivity:
    """One tool call as the user sees it: asked for, then resolved."""

    call: ToolCall
    """The call and its arguments."""
    needs_confirmation: bool = False
    """The user was (or will be) asked."""
    outcome: str | None = None
    """ok, error, cancelled, blocked, answered; None while pending."""
    result: str = ""
    """What the model read back."""
    duration_ms: float = 0.0
    """How long it ran."""
    segment: int = 0
    """The answer segment it follows (the round's text comes before its tool calls)."""


@dataclass
class Reroute:
    """Replay only: what today's router says about a recorded turn."""

    route: Route | None
    """Today's decision (None when re-routing failed)."""
    differs: bool
    """Whether it picks another mode than the recorded one."""
    note: str = ""
    """An error or remark to show instead of a decision."""


@dataclass
class Superseded:
    """An answer the user corrected: it stays on screen, folded, marked with both modes."""

    mode: str | None
    """The mode that gave it ("answered in X")."""
    corrected_to: str
    """The mode the user chose ("corrected to Y")."""
    answer: str
    """Its text."""
    route: Route | None
    """The route it was given."""
    model: str | None = None
    """The model that gave it."""

    @property
    def title(self) -> str:
        """`answered in chat, corrected to code`."""
        return f"answered in {self.mode or 'no mode'}, corrected to {self.corrected_to}"


@dataclass
class TurnTranscript:
    """Everything shown about one user turn."""

    number: int
    """1-based turn number."""
    user_text: str
    """What the user typed."""
    route: Route | None = None
    """The latest routing decision (a retry decides again)."""
    setting: str = "auto"
    """The control setting the turn ran under."""
    warnings: tuple[str, ...] = ()
    """Warnings the engine raised while routing."""
    decisions: list[ev.RouteDecided] = field(default_factory=list)
    """Every routing decision, in order: a retry decides again, and so does a correction's
    re-run (a retry or a re-run keeps them; the Markdown export lists them all)."""
    attempt: int = 1
    """1, then 2+ after each retry."""
    mode_change: ev.ModeChanged | None = None
    """Set when this turn's mode differs from the previous one."""
    requests: list[ev.RequestBuilt] = field(default_factory=list)
    """Every request of the turn, one per model round."""
    usages: list[ev.Usage] = field(default_factory=list)
    """ev.Usage of every model call."""
    segments: list[str] = field(default_factory=lambda: [""])
    """Answer text per model round (tool calls sit between rounds)."""
    reasoning: str = ""
    """Reasoning text, all rounds."""
    tools: list[ToolActivity] = field(default_factory=list)
    """Tool calls, in order."""
    message: Message | None = None
    """The final assistant message, once finished."""
    failure: ev.TurnFailed | None = None
    """Why the turn failed, if it did."""
    cancelled: bool = False
    """The user cancelled it."""
    reroute: Reroute | None = None
    """Replay: today's decision for this turn."""
    superseded: list[Superseded] = field(default_factory=list)
    """Earlier answers of this turn that the user corrected, oldest first."""
    corrections: list[ev.TurnCorrected] = field(default_factory=list)
    """Corrections made from this turn: of this one, or of the turn it re-sent forced."""
    undone: set[str] = field(default_factory=set)
    """Ids of those corrections the user took back (`/wrong undo`)."""
    status: Status = "routing"
    """Where the turn is."""
    superseded_by: int | None = None
    """The turn that replaced this one when the user edited and resent its message."""
    events: list[ev.TurnEvent] = field(default_factory=list)
    """Every event folded, in order, retries and re-runs included (the Markdown export
    keeps that order)."""
    interrupted: bool = False
    """Replay: the log ends before the turn finished."""
    kept_partial: str = ""
    """The partial answer of an earlier failed or cancelled attempt: a retry that ends
    without text of its own shows (and keeps) this one instead of nothing."""
    kept_from: int = 0
    """The attempt `kept_partial` comes from (0: none kept)."""
    compactions: list[ev.ConversationCompacted] = field(default_factory=list)
    """Older turns summarised for the model during this turn (or by `/compact` after it)."""

    @property
    def answer(self) -> str:
        """The whole answer text so far (every round)."""
        return "\n\n".join(s for s in self.segments if s)

    @property
    def said_nothing(self) -> bool:
        """Finished with no answer text and no tool call (a base model can end at once): the
        front ends say so in words, or the empty turn reads as a hang or a lost answer."""
        return self.status == "finished" and not self.answer.strip() and not self.tools

    @property
    def mode(self) -> str | None:
        """The mode that answered (None: no mode, `off`)."""
        if self.message is not None and self.message.mode is not None:
            return self.message.mode
        if self.requests:
            return self.requests[-1].mode
        return self.route.mode_name if self.route is not None else None

    @property
    def model(self) -> str | None:
        """The model that answered."""
        if self.message is not None and self.message.model:
            return self.message.model
        return self.requests[-1].request.model if self.requests else None

    @property
    def role(self) -> str | None:
        """The role (`fast`, `strong`) that gave the answering model; None for a plain name."""
        return self.requests[-1].role if self.requests else None

    @property
    def notes(self) -> tuple[str, ...]:
        """Notes the engine attached to the requests ("thinking n/a for ...")."""
        seen: dict[str, None] = {}
        for built in self.requests:
            for note in built.notes:
                seen.setdefault(note, None)
        return tuple(seen)

    @property
    def prompt_tokens(self) -> int:
        """Tokens sent, all calls."""
        return sum(u.prompt_tokens for u in self.usages)

    @property
    def completion_tokens(self) -> int:
        """Tokens received, all calls."""
        return sum(u.completion_tokens for u in self.usages)

    @property
    def cost(self) -> float | None:
        """USD, when every call had a price."""
        costs = [u.cost for u in self.usages]
        if not costs or any(c is None for c in costs):
            return None
        return sum(c for c in costs if c is not None)

    def restart(self) -> None:
        """A retry starts the answer over; the route and requests stay for the record, and
        the partial answer so far is kept in case the retry brings none."""
        if self.answer and self.status in ("failed", "cancelled") and not self.shows_kept_partial:
            self.kept_partial, self.kept_from = self.answer, self.attempt
        self.attempt += 1
        self.segments = [""]
        self.reasoning = ""
        self.tools = []
        self.message = None
        self.failure = None
        self.cancelled = False
        self.status = "routing"

    def _supersede(self, corrected_to: str) -> None:
        """Fold the answer so far away; the re-run that follows fills the turn anew."""
        self.superseded.append(
            Superseded(self.mode, corrected_to, self.answer, self.route, self.model)
        )
        self.segments = [""]
        self.reasoning = ""
        self.tools = []
        self.message = None
        self.failure = None
        self.cancelled = False
        self.requests = []
        self.usages = []
        self.mode_change = None
        self.status = "routing"

    @property
    def routed_route(self) -> Route | None:
        """The router's own route for this turn (before any correction re-ran it)."""
        return self.superseded[0].route if self.superseded else self.route

    def _tool_segment(self) -> int:
        """Tool calls close the current text segment; later text starts a new one."""
        if self.segments[-1]:
            self.segments.append("")
        return len(self.segments) - 2 if len(self.segments) > 1 else 0

    def tool(self, call_id: str) -> ToolActivity | None:
        """The activity for a call id."""
        for activity in self.tools:
            if activity.call.id == call_id:
                return activity
        return None

    def apply(self, event: ev.TurnEvent) -> None:
        """Remember what `event` says."""
        self.events.append(event)
        match event:
            case ev.RouteDecided() | ev.ModeChanged() | ev.TurnCorrected():
                self._apply_routing(event)
            case ev.RequestBuilt() | ev.ReasoningDelta() | ev.TextDelta() | ev.Usage():
                self._apply_answer(event)
            case ev.ToolCallRequested() | ev.ToolCallFinished():
                self._apply_tool(event)
            case ev.TurnFinished() | ev.TurnFailed() | ev.TurnCancelled():
                self._apply_ending(event)
            case ev.ConversationCompacted():
                self.compactions.append(event)
            case _:
                assert_never(event)

    def _apply_routing(self, event: ev.RouteDecided | ev.ModeChanged | ev.TurnCorrected) -> None:
        """Which mode takes the turn: the route, a change of mode, a correction."""
        match event:
            case ev.RouteDecided():
                self.route, self.setting = event.route, event.setting
                self.warnings = event.warnings
                self.decisions.append(event)
            case ev.ModeChanged():
                self.mode_change = event
            case ev.TurnCorrected():
                self.corrections.append(event)
                if event.rerun:
                    self._supersede(event.corrected_mode)
            case _:
                assert_never(event)

    def _apply_answer(
        self, event: ev.RequestBuilt | ev.ReasoningDelta | ev.TextDelta | ev.Usage
    ) -> None:
        """A model round: its request, the streamed text and reasoning, its usage."""
        match event:
            case ev.RequestBuilt():
                self.requests.append(event)
                if event.round > 1 and self.segments[-1]:
                    self.segments.append("")
                self.status = "answering"
            case ev.ReasoningDelta():
                self.reasoning += event.text
            case ev.TextDelta():
                self.segments[-1] += event.text
            case ev.Usage():
                self.usages.append(event)
            case _:
                assert_never(event)

    def _apply_tool(self, event: ev.ToolCallRequested | ev.ToolCallFinished) -> None:
        """A tool call asked for, then resolved (a result without a request still shows)."""
        if isinstance(event, ev.ToolCallRequested):
            self.tools.append(
                ToolActivity(event.call, event.needs_confirmation, segment=self._tool_segment())
            )
            return
        activity = self.tool(event.call.id)
        if activity is None:
            activity = ToolActivity(event.call, segment=self._tool_segment())
            self.tools.append(activity)
        activity.outcome = event.outcome
        activity.result = event.result
        activity.duration_ms = event.duration_ms

    def _apply_ending(self, event: ev.TurnFinished | ev.TurnFailed | ev.TurnCancelled) -> None:
        """How the attempt ended; a failed or cancelled one keeps its partial answer."""
        if isinstance(event, ev.TurnFinished):
            self.message = event.message
            self.status = "finished"
            if event.message.cancelled:
                self.cancelled = True
                self.status = "cancelled"
            return
        if isinstance(event, ev.TurnFailed):
            self.failure = event
            self.status = "failed"
        else:
            self.cancelled = True
            self.status = "cancelled"
        if event.partial and not self.answer:
            self.segments[-1] = event.partial
        self._keep_earlier_partial()

    @property
    def shows_kept_partial(self) -> bool:
        """The answer shown is an earlier attempt's partial one (this attempt gave none)."""
        return bool(self.kept_from) and self.answer == self.kept_partial

    def _keep_earlier_partial(self) -> None:
        """A retry that failed or was cancelled before any text: the earlier attempt's
        partial answer stays the turn's answer, rather than nothing."""
        if not self.answer and self.kept_partial:
            self.segments = [self.kept_partial]

    def summary(self) -> dict[str, Any]:
        """A short plain description (tests, debugging)."""
        return {
            "number": self.number,
            "mode": self.mode,
            "status": self.status,
            "answer": self.answer,
            "tools": [(t.call.name, t.outcome) for t in self.tools],
        }


def fold_turn(number: int, user_text: str, events: Iterable[ev.TurnEvent]) -> TurnTranscript:
    """A whole turn's events folded into its transcript (replays, exports, recaps)."""
    transcript = TurnTranscript(number, user_text)
    for event in events:
        transcript.apply(event)
    return transcript
