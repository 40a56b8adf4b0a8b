"""What the TUI and the REPL share: one layer between the user's line and the engine.

Written once over `core.engine.ports.TurnEngine`; it returns values (outcomes, messages' parts,
events to play) and never prints or draws: each front end only shows and asks. No textual,
no prompt_toolkit here (tests/test_architecture.py checks it).

    commands      the one slash-command table, argument checks, completion, "did you mean"
    lines         read_line: a typed line as a message, a one-shot `/MODE text`, or a checked
                  command (the one reader of both front ends)
    dispatch      a command's name -> the front end's handler (one entry + one handler)
    sessions      /resume, /fork, /rename: the checks, the switch, the engine's restore
    corrections   /wrong MODE|undo and the picker's choice, as outcomes
    undo          /undo [N]: plan, ask before overwriting a changed file, undo, say what
    modes         /modes and /mode NAME: what the listing holds, what a setting does
    startup       why the app could not start: a bad setting's file, line and column
    tool_text     a tool call and its result as a person writes them: `$ ls`, output lines
    drafts        when the text being typed is prepared for its route (`TurnEngine.prepare`)
"""

from __future__ import annotations

from modes_tui.frontend.commands import (
    COMMANDS,
    Command,
    CommandError,
    CommandSpec,
    OneShot,
)
from modes_tui.frontend.dispatch import dispatch, missing_handlers
from modes_tui.frontend.lines import Read, Send, read_line

__all__ = ["COMMANDS", "Command", "CommandError", "CommandSpec", "OneShot"]
__all__ += ["Read", "Send", "dispatch", "missing_handlers", "read_line"]
