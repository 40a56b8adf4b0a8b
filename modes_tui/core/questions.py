"""Questions the engine asks the user outside tool calls: entering a mode, passing the budget.

The TUI answers with its confirm dialog, the REPL on the prompt, a pipe with no (nobody
can answer). The same object that confirms tool calls (`guards.Confirmer`) answers these
when it has an `ask` method; without one the answer is no.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

QuestionKind = Literal["enter_mode", "budget"]


@dataclass(frozen=True, slots=True)
class Question:
    """A yes/no question about the turn that is about to run."""

    kind: QuestionKind
    """enter_mode (a mode with `auto_enter: confirm`) or budget (the turn would pass it)."""
    title: str
    """A short heading, e.g. "Enter shell?"."""
    text: str
    """The whole question, with the numbers or the mode's name."""


@runtime_checkable
class Asker(Protocol):
    """Whoever can answer a Question."""

    async def ask(self, question: Question) -> bool:
        """True for yes."""
        ...
