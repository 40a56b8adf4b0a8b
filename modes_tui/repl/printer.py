"""Turn events as text on a stream (or one JSON event per line).

Every event is folded into the turn's `TurnTranscript` (what `/why` reads); what the REPL
shows of a turn is its progress (the route line, notes, the streamed answer, tool calls) and
how it ended (cost, cancelled, corrected, failed). Reasoning, usage and mode changes are
only folded: the route line already names the mode, the cost comes at the end.
"""

from __future__ import annotations

import json
from typing import IO, TYPE_CHECKING, Union, assert_never

from modes_tui.core.history.ledger import money
from modes_tui.core.terminal_text import TerminalStream, json_terminal_safe, terminal_safe
from modes_tui.frontend.tool_text import EMPTY_ANSWER, fold, tool_result, tool_title
from modes_tui.route_format import repl_line

if TYPE_CHECKING:
    from modes_tui.core.history.events import (
        TurnCancelled,
        TurnCorrected,
        TurnEvent,
        TurnFailed,
        TurnFinished,
    )
    from modes_tui.repl.context import ReplContext

TOOL_LINES = 6
"""Output lines shown under a tool call (`/export` writes all)."""

Ending = Union["TurnFinished", "TurnCancelled", "TurnCorrected", "TurnFailed"]
"""Events that end what streams (a correction ends the first answer)."""


class Printer:
    """Turns events into text on a stream (or JSON lines)."""

    def __init__(
        self, out: IO[str], *, json_lines: bool = False, err: IO[str] | None = None
    ) -> None:
        self.out = out
        self.err = err if err is not None else out
        self.json_lines = json_lines
        self._in_text = False
        self._text = TerminalStream()
        """The answer streaming now: a sequence cut between two chunks is removed whole."""
        self.failures = 0
        """Turns that failed: a script reading our output needs the exit code to say so."""

    def write(self, text: str) -> None:
        # Model text, tool output and provider errors must not drive the terminal.
        self._emit(terminal_safe(text))

    def warn(self, text: str) -> None:
        """`write` on the error stream (errors quote providers, notes quote sessions)."""
        self.err.write(terminal_safe(text))
        self.err.flush()

    def _emit(self, text: str) -> None:
        self.out.write(text)  # callers pass text already made safe
        self.out.flush()

    def _end_text(self) -> None:
        if self._in_text:
            self.write(self._text.flush() + "\n")
            self._in_text = False

    def event(self, event: TurnEvent, context: ReplContext) -> None:
        """Fold `event` into the last turn and show it."""
        if context.last_turn is not None:
            context.last_turn.apply(event)  # the fold `/why` reads
        if event.type == "turn_failed":
            self.failures += 1
        if self.json_lines:
            line = json.dumps(event.to_dict(), ensure_ascii=False, default=str)
            self._emit(json_terminal_safe(line + "\n"))  # the same value, inert on a terminal
        else:
            self._show(event, context)

    def _show(self, event: TurnEvent, context: ReplContext) -> None:
        """The route line, the request's notes, the streamed answer, tool calls, the end."""
        match event.type:
            case "route_decided":
                for warning in event.warnings:
                    self.write(f"! {warning}\n")
                self.write(repl_line(event.route) + "\n")
            case "mode_changed" | "usage" | "reasoning_delta":
                pass  # folded only: the route line names the mode, /why shows the request
            case "request_built":
                if event.role and event.round == 1:  # which model the mode's role gave
                    self.write(f"({event.role} role: {event.request.model})\n")
                for note in event.notes:
                    self.write(f"({note})\n")
            case "text_delta":
                self._in_text = True
                self._emit(self._text.feed(event.text))
            case "tool_call_requested":
                self._end_text()
                self.write(f"→ {tool_title(event.call.name, event.call.arguments)}\n")
            case "tool_call_finished":
                self.write(tool_lines(event.call.name, event.outcome, event.result))
            case "turn_finished" | "turn_cancelled" | "turn_corrected" | "turn_failed":
                self._end_text()
                self._ending(event, context)
            case "conversation_compacted":
                self._end_text()
                self.write(f"({event.compaction.describe()})\n")
            case _:
                assert_never(event)

    def _ending(self, event: Ending, context: ReplContext) -> None:
        """The cost of a finished turn, or why it stopped."""
        match event.type:
            case "turn_finished":
                if context.last_turn is not None and context.last_turn.said_nothing:
                    self.write(f"({EMPTY_ANSWER})\n")
                ledger = getattr(getattr(context.engine, "costs", None), "ledger", None)
                if ledger is not None and ledger.turns and ledger.turns[-1].cost:
                    cost = money(ledger.turns[-1].cost)
                    self.write(f"(cost {cost} · session {ledger.header()})\n")
            case "turn_cancelled":
                self.write("(cancelled; the partial answer is kept)\n")
            case "turn_corrected":
                self.write(correction_text(event) + "\n")
            case "turn_failed":
                self.warn(f"error: {event.error}\n")
                if event.hint:
                    self.warn(f"hint: {event.hint}\n")
            case _:
                assert_never(event)


def correction_text(event: TurnCorrected) -> str:
    """`↺ turn 2 answered in chat, corrected to code: answering again`, and the like."""
    was = event.answered_mode or "no mode"
    if event.rerun:
        text = f"↺ turn {event.turn} answered in {was}, corrected to {event.corrected_mode}"
        text += ": answering again"
    else:
        text = f"↺ counts as a correction of turn {event.turn}: {was} → {event.corrected_mode}"
    if event.correction is not None:
        text += " (/wrong undo forgets it)"
    if event.note:
        text += f"\n! {event.note}"
    return text


def tool_lines(name: str, outcome: str, result: str) -> str:
    """`← run_command: failed: exit code 1` and the output's first lines, indented."""
    found = tool_result(outcome, result)
    folded = fold(found.lines, TOOL_LINES)
    lines = [f"← {name}: {found.status}", *(f"  {line}" for line in folded.lines)]
    if folded.hidden:
        lines.append(f"  {folded.note} (/export writes all)")
    return "\n".join(lines) + "\n"
