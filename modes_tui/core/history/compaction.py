"""What a conversation's fit into a model's window left behind: the summary that stands for
older turns (`Compaction`, carried by the conversation and recorded in the session), and how
one request was fitted (`ContextReport`, on the request record and its event).

Values only: `core.context` computes them, the engine records them, replay and resume read
them back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Compaction", "ContextReport", "Trigger"]

Trigger = Literal["auto", "command", "context_error"]
"""Why older turns were compacted."""


@dataclass(frozen=True, slots=True)
class Compaction:
    """Older turns of a conversation, summarised for the model."""

    summary: str
    """The summary (of the earlier summary too, if there was one)."""
    upto: int
    """How many messages of the conversation, from its start, the summary stands for."""
    turns: int
    """How many user turns it stands for, all compactions together."""
    model: str | None
    """The model that wrote it (None: the openings of the turns, no model answered)."""
    trigger: Trigger
    """Why: `auto` (near the limit), `command` (`/compact`), `context_error` (a provider
    refused a request as too long)."""
    tokens_before: int = 0
    """Tokens of the conversation the model would have been given without it."""
    tokens_after: int = 0
    """Tokens with the summary in place of those turns."""
    note: str = ""
    """Why no model summary was written, when none was."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the session record."""
        return {
            "summary": self.summary,
            "upto": self.upto,
            "turns": self.turns,
            "model": self.model,
            "trigger": self.trigger,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "note": self.note,
        }

    def describe(self) -> str:
        """One line for the chat, the REPL and the export (the summary itself is folded)."""
        why = {"auto": "near the context limit", "command": "/compact"}.get(
            self.trigger, "the provider said the request was too long"
        )
        who = f"by {self.model}" if self.model else f"their openings kept: {self.note}"
        tokens = f"{self.tokens_before} → {self.tokens_after} tokens"
        return f"compacted {self.turns} earlier turn(s) for the model ({why}; {tokens}; {who})"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Compaction:
        """The inverse of to_dict; raises KeyError/TypeError/ValueError on a damaged one."""
        trigger = data.get("trigger")
        model = data.get("model")
        return cls(
            summary=str(data["summary"]),
            upto=int(data["upto"]),
            turns=int(data.get("turns") or 0),
            model=None if model is None else str(model),
            trigger=trigger if trigger in ("auto", "command", "context_error") else "auto",
            tokens_before=int(data.get("tokens_before") or 0),
            tokens_after=int(data.get("tokens_after") or 0),
            note=str(data.get("note") or ""),
        )


@dataclass(frozen=True, slots=True)
class ContextReport:
    """How a request was fitted into the model's context window."""

    tokens: int
    """Tokens of the request as sent (counted as `tokenizer` says)."""
    budget: int
    """Tokens the request could hold (the window minus room for the answer)."""
    window: int
    """The model's context window."""
    tokenizer: str
    """How the tokens were counted: a tokenizer's name, or the stated estimate."""
    dropped_turns: int = 0
    """Earlier turns left out of this request."""
    cut_results: int = 0
    """Tool results cut for the model (kept whole in the session log)."""
    fits: bool = True
    """False when even this turn alone is over the budget (the provider may refuse it)."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the request record."""
        return {
            "tokens": self.tokens,
            "budget": self.budget,
            "window": self.window,
            "tokenizer": self.tokenizer,
            "dropped_turns": self.dropped_turns,
            "cut_results": self.cut_results,
            "fits": self.fits,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ContextReport:
        """The inverse of to_dict; raises KeyError/TypeError/ValueError on a damaged one."""
        return cls(
            int(data["tokens"]),
            int(data["budget"]),
            int(data["window"]),
            str(data["tokenizer"]),
            int(data.get("dropped_turns") or 0),
            int(data.get("cut_results") or 0),
            bool(data.get("fits", True)),
        )

    def describe(self) -> str:
        """One line for the inspector and the REPL's `/why`."""
        parts = [f"{self.tokens} of {self.budget} tokens ({self.tokenizer}); window {self.window}"]
        if self.dropped_turns:
            parts.append(f"{self.dropped_turns} earlier turn(s) left out")
        if self.cut_results:
            parts.append(f"{self.cut_results} tool result(s) cut")
        if not self.fits:
            parts.append("over the budget even with this turn alone")
        return "; ".join(parts)
