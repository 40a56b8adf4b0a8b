"""Questions the engine asks the user outside tool calls: entering a mode, passing the budget.

The TUI answers with its confirm dialog, the REPL on the prompt, a pipe with no (nobody
can answer). The same object that confirms tool calls (`guards.Confirmer`) answers these
when it has an `ask` method; without one the answer is no.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

QuestionKind = Literal["enter_mode", "budget", "overwrite"]

ANSWER_ARMING_SECONDS = 1.0
"""How long typing must pause before a question (or a tool confirmation) takes answers.

A dialog that opens on its own while the user types would otherwise take the next `y`,
`n` or Enter of their sentence as its answer. Keys typed before it opens, or before this
much time has passed with no key (after it opened, or after the last key), go back to the
prompt (TUI) or are set aside for the next message (REPL); only a key pressed once the
question shows it is ready answers it. A second is longer than the gap between two keys
of someone typing on, and than most pauses mid-sentence, and shorter than reading the
question takes.
"""


@dataclass(frozen=True, slots=True)
class Question:
    """A yes/no question about the turn that is about to run."""

    kind: QuestionKind
    """enter_mode (a mode with `auto_enter: confirm`), budget (the turn would pass it) or
    overwrite (`/undo` would overwrite files changed on disk since the turn wrote them)."""
    title: str
    """A short heading, e.g. "Enter shell?"."""
    text: str
    """The whole question, with the numbers or the mode's name."""
