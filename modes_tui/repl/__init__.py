"""The plain REPL: the same engine as the TUI, in a prompt-toolkit prompt or a pipe.

At a terminal: streamed answers, one route line per turn, completion for slash commands
and mode names, persistent input history, Ctrl+C cancels a turn (a second Ctrl+C at the
prompt exits), Ctrl+D exits. With stdin not a terminal it reads one message per line and
prints the answers, so it can be scripted; `--json` prints one JSON event per line.
The only package that imports prompt_toolkit (in `prompt` and `questions`, inside
functions). Commands, session actions and corrections are `modes_tui.frontend`'s; this
package only shows their outcomes and asks.

    context     ReplContext: the engine and what slash commands touch (the SessionHost)
    printer     turn events as text (or JSON lines), folded into the turn for /why
    turns       playing a turn, Ctrl+C cancelling it
    commands    one handler per slash command; a typed line read (frontend) and dispatched
    sessions    /resume, /fork, /rename shown; a resumed session's recap
    pipe        lines from a pipe, and the pipe's answer to a question (no)
    prompt      the interactive prompt: completion, keys, input history
    questions   yes/no questions at a terminal, and keys typed before one set aside
"""

from __future__ import annotations

from modes_tui.repl.commands import run_line
from modes_tui.repl.context import ReplContext
from modes_tui.repl.pipe import PipeConfirmer, piped_lines, run_lines
from modes_tui.repl.printer import Printer, correction_text
from modes_tui.repl.prompt import input_history, run_interactive, send_keys, slash_completer
from modes_tui.repl.turns import ask, play

__all__ = ["PipeConfirmer", "ReplContext", "piped_lines", "run_line", "run_lines"]
__all__ += ["Printer", "correction_text"]
__all__ += ["ask", "input_history", "play", "run_interactive", "send_keys", "slash_completer"]
