"""Questions the engine asks the user outside tool calls: entering a mode, passing the budget.

The TUI answers with its confirm dialog, the REPL on the prompt, a pipe with no (nobody
can answer). The same object that confirms tool calls (`guards.Confirmer`) answers these
when it has an `ask` method; without one the answer is no.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from modes_tui.core.redaction import redact_values
from modes_tui.core.values.doubt import Unsure

QuestionKind = Literal["enter_mode", "budget", "overwrite"]

ANSWER_ARMING_SECONDS = 0.7
"""How long typing must pause before a question (or a tool confirmation) takes answers.

A dialog that opens on its own while the user types would otherwise take the next `y`,
`n` or Enter of their sentence as its answer. Keys typed before it opens, or before this
much time has passed with no key (after it opened, or after the last key), go back to the
prompt (TUI) or are set aside for the next message (REPL); only a key pressed once the
question shows it is ready answers it. In the app a printable key that is not an answer
starts the wait again even then, so the `y` of "lately" typed on after reading never answers.

0.7 s: the gap between two keys of a word is 0.1-0.3 s even for a slow typist (0.5 s for
hunting keys), so every letter after the first of a word falls inside the wait; reading a
question takes longer than 0.7 s, so a deliberate y after reading answers at once, and a
lone y pressed after a pause does not feel ignored.
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
    """The whole question, with the numbers or the mode's name and why."""
    rule: str = ""
    """The rule that asks, in the pack's words (e.g. "shell's auto_enter: confirm")."""


@dataclass(frozen=True, slots=True)
class ModeChoice:
    """Which mode answers this message? Asked before the turn runs when the router is unsure
    (`Route.unsure`); the answer is a mode name (None: nobody chose, the pick runs)."""

    unsure: Unsure
    """The router's pick (the mode that runs unless the user takes another) and runner-up."""
    message: str
    """The user's message, as routed."""
    reason: str
    """The router's reason for its pick."""
    modes: tuple[str, ...]
    """Every mode the user may take instead (available now, in roster order)."""


@dataclass(frozen=True, slots=True)
class RuleNote:
    """Which rule of which mode decided a tool call, in the words the user reads."""

    mode: str | None
    """The mode answering (None: no mode, the `off` setting)."""
    tool: str
    """The tool called."""
    permission: str
    """allow, ask or deny."""
    source: str
    """`permissions.<key>`, `permissions.default`, `paths.deny`, `paths.write` or `default`."""

    def words(self) -> str:
        """The rule as the pack spells it: "code's run_command: allow"; with no rule
        written, the shipped default: "shell's default for run_command: ask"."""
        owner = f"{self.mode}'s" if self.mode else "no mode's"
        if self.source.startswith("permissions."):
            key = self.source.removeprefix("permissions.")
            return (
                f"{owner} {'permissions default' if key == 'default' else key}: {self.permission}"
            )
        if self.source.startswith("paths."):
            return f"{owner} {self.source}"
        return f"{owner} default for {self.tool}: {self.permission}"

    def line(self) -> str:
        """What happened and why: "allowed by code's run_command: allow"."""
        done = {"allow": "allowed", "ask": "asked", "deny": "refused"}.get(self.permission, "")
        return f"{done or self.permission} by {self.words()}"


_SHOWN_ESCAPED = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\u180e"
    "\ufff9-\ufffb\U000e0000-\U000e007f]"
)
"""What a terminal would obey or hide: every control but newline and tab, bidi controls,
zero-width and invisible characters."""


def verbatim(text: str) -> str:
    """`text` (a command about to run) shown exactly: newlines and tabs kept, every character
    a terminal would obey or hide written as a visible escape (`\\x1b`, `\\u202e`), so what
    runs is what is read, and nothing drives the screen. CRLF stays visible as `\\r`."""
    return _SHOWN_ESCAPED.sub(_escape, redact_values(text))


def _escape(found: re.Match[str]) -> str:
    if found.group() == "\r":
        return "\\r"
    code = ord(found.group())
    return (
        f"\\x{code:02x}"
        if code <= 0xFF
        else f"\\u{code:04x}"
        if code <= 0xFFFF
        else (f"\\U{code:08x}")
    )
