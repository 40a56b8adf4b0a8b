"""Playing a turn in the REPL: its events printed, Ctrl+C cancelling it, not the process."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from modes_tui.core.history.transcript import TurnTranscript

if TYPE_CHECKING:
    from modes_tui.core.history.events import TurnEvent
    from modes_tui.repl.context import ReplContext
    from modes_tui.repl.printer import Printer


async def ask(
    text: str, context: ReplContext, printer: Printer, *, force: str | None = None
) -> None:
    """One turn, with Ctrl+C (SIGINT) cancelling it instead of killing the process;
    `force` names the mode of this message only (`/MODE text`)."""
    context.turns_sent += 1
    context.last_turn = TurnTranscript(context.turns_sent, text)
    await play(context.engine.run_turn(text, force=force), context, printer)


async def play(events: AsyncIterator[TurnEvent], context: ReplContext, printer: Printer) -> None:
    """Print a turn's events; Ctrl+C (SIGINT) cancels the turn instead of the process."""
    loop = asyncio.get_running_loop()
    installed = False
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGINT, context.engine.cancel)
        installed = True
    try:
        async for event in events:
            printer.event(event, context)
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)
