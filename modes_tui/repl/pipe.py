"""The REPL without a terminal: one message (or slash command) per line from a pipe, the
answers printed, and nobody to confirm a tool call (always no, with the reason)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any

from modes_tui.core.engine.questions import RuleNote
from modes_tui.core.model.wire import ToolCall
from modes_tui.core.terminal_text import decode_typed, terminal_safe
from modes_tui.repl.commands import run_line

if TYPE_CHECKING:
    from modes_tui.repl.context import ReplContext
    from modes_tui.repl.printer import Printer


def piped_lines(stream: IO[bytes], err: IO[str]) -> Iterator[str]:
    """Lines from a pipe as text: a line that is not UTF-8 or holds NUL bytes is still read
    (nothing typed is dropped), and what was changed is named on `err`, with its line."""
    for number, raw in enumerate(stream, 1):
        text, notes = decode_typed(raw, f"stdin line {number}")
        for note in notes:
            err.write(terminal_safe(f"modes-tui: warning: {note}\n"))
            err.flush()
        yield text


async def run_lines(lines: Iterable[str], context: ReplContext, printer: Printer) -> int:
    """Non-interactive: one message (or slash command) per line."""
    for raw in lines:
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        if not await run_line(line, context, printer):
            break
    return 1 if printer.failures else 0


class PipeConfirmer:
    """Without a terminal nobody can confirm: refuse, with a reason the model reads."""

    async def confirm(self, call: ToolCall, tool: Any, preview: Any = None) -> bool:
        sys.stderr.write(
            terminal_safe(f"modes-tui: refused {call.name}: no terminal to confirm it\n")
        )
        return False

    async def confirm_by_rule(
        self, call: ToolCall, tool: Any, preview: Any, rule: RuleNote
    ) -> bool:
        """Refused, naming the rule that would have asked."""
        sys.stderr.write(
            terminal_safe(
                f"modes-tui: refused {call.name}: no terminal to confirm it ({rule.line()})\n"
            )
        )
        return False

    def allowed_by_rule(self, call: ToolCall, rule: RuleNote) -> None:
        """A rule let the call run unasked: say which (on stderr, beside the refusals)."""
        sys.stderr.write(terminal_safe(f"modes-tui: {call.name} {rule.line()}\n"))

    # No `ask`: with nobody to answer, the engine keeps the turn out of a confirm-first mode
    # and refuses a turn past the budget, and says why in the route and the error.
