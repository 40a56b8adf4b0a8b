"""What the TUI and the REPL share: one layer between the user's line and the engine.

Written once over `core.engine.ports.TurnEngine`; it returns values (outcomes, messages' parts,
events to play) and never prints or draws: each front end only shows and asks. No textual,
no prompt_toolkit here (tests/test_architecture.py checks it).

    commands      the one slash-command table, parsing, checks, completion, "did you mean"
    lines         what a typed line is: a message, a one-shot `/MODE text`, or a command
    dispatch      a command's name -> the front end's handler (one entry + one handler)
    sessions      /resume, /fork, /rename: the checks, the switch, the engine's restore
    corrections   /wrong MODE|undo and the picker's choice, as outcomes
    undo          /undo [N]: plan, ask before overwriting a changed file, undo, say what
"""

from __future__ import annotations

from modes_tui.frontend.commands import (
    COMMANDS,
    Command,
    CommandError,
    CommandSpec,
    OneShot,
    parse_command,
)
from modes_tui.frontend.dispatch import dispatch, missing_handlers
from modes_tui.frontend.lines import Send, Typed, read_line

__all__ = [
    "COMMANDS",
    "Command",
    "CommandError",
    "CommandSpec",
    "OneShot",
    "Send",
    "Typed",
    "dispatch",
    "missing_handlers",
    "parse_command",
    "read_line",
]
