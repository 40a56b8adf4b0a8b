"""`/undo [N]`, as both front ends run it: plan, ask before overwriting, undo, say what.

A file changed on disk since the turn wrote it (the user edited it, or a formatter ran) is
not overwritten without a yes: the front end's `ask` shows which files, and a no (or no one
to ask) keeps them and undoes the rest.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from modes_tui.core.edits.checkpoints import UndoPlan, UndoResult
from modes_tui.core.engine.questions import Question
from modes_tui.frontend.commands import CommandError, check_argument

__all__ = ["Undoable", "run_undo"]


class Undoable(Protocol):
    """The engine as `/undo` needs it."""

    def plan_undo(self, count: int = 1) -> UndoPlan:
        """What undoing the last `count` turns would put back."""
        ...

    def undo(self, plan: UndoPlan, *, overwrite: bool = False) -> UndoResult:
        """Put it back."""
        ...


async def run_undo(
    engine: Undoable, argument: str, ask: Callable[[Question], Awaitable[bool]] | None
) -> str:
    """Undo the last N turns' file changes; the text to show (usage or a refusal too)."""
    text = argument.strip()
    try:  # the reader checked a typed line already; a caller may not have read one
        check_argument("/undo", text, (), "repl")
    except CommandError as error:
        return str(error)
    try:
        plan = engine.plan_undo(int(text or 1))
    except RuntimeError as error:  # a turn is running
        return str(error)
    overwrite = False
    if plan.changed and ask is not None:
        names = ", ".join(plan.changed)
        overwrite = await ask(
            Question(
                "overwrite",
                "Overwrite changed files?",
                f"Changed on disk since the turn wrote them: {names}. Overwrite them with "
                "what they held before the turn? (No keeps them and undoes the rest.)",
            )
        )
    return engine.undo(plan, overwrite=overwrite).text()
