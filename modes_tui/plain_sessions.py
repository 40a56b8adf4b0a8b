"""The REPL's session commands: `/resume`, `/fork`, `/rename`, and showing a resumed session.

Separate from `plain.py` (the prompt and the event printer); no prompt_toolkit here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modes_tui.core.errors import ModesError
from modes_tui.core.transcript import fold_turn
from modes_tui.route_format import repl_line

if TYPE_CHECKING:
    from modes_tui.plain import Printer, ReplContext
    from modes_tui.store.resume import Resumption

SHOWN_TURNS = 5
"""How many of a resumed session's last turns the REPL prints."""
ANSWER_CHARS = 300


def show_resumed(
    resumed: Resumption, context: ReplContext, printer: Printer, *, about_pack: bool = True
) -> None:
    """A recap of a resumed session: what it is, its last turns, and anything to know
    (`about_pack`: whether it was recorded with another pack, unless that was said already).

    With `--json` the recap goes to stderr in one line: stdout carries engine events only.
    """
    title = resumed.session.title or "untitled"
    turns = resumed.replay.turns
    count = f"{len(turns)} turn" + ("" if len(turns) == 1 else "s")
    notes = list(resumed.notes)
    if about_pack and context.pack_name and (note := resumed.pack_note(context.pack_name)):
        notes.append(note)
    if printer.json_lines:
        printer.warn(f"(resumed session {resumed.id} · {title} · {count})\n")
        for note in notes:
            printer.warn(f"! {note}\n")
        return
    printer.write(f"(resumed session {resumed.id} · {title} · {count})\n")
    if len(turns) > SHOWN_TURNS:
        printer.write(f"(… {len(turns) - SHOWN_TURNS} earlier turns not shown)\n")
    for turn in turns[-SHOWN_TURNS:]:
        printer.write(f"› {turn.user or ''}\n")
        if turn.route is not None:
            printer.write(repl_line(turn.route) + "\n")
        answer = fold_turn(turn.turn, turn.user or "", turn.events).answer
        if answer:
            cut = answer if len(answer) <= ANSWER_CHARS else answer[: ANSWER_CHARS - 1] + "…"
            printer.write(cut + "\n")
    for note in notes:
        printer.write(f"! {note}\n")


def run_session_command(name: str, argument: str, context: ReplContext, printer: Printer) -> None:
    """Do `/resume`, `/fork` or `/rename`; errors are printed, the REPL goes on."""
    session = context.session
    if session is None:
        printer.write("error: sessions are not recorded in this REPL\n")
        return
    engine = context.engine
    try:
        if name == "/rename":
            if not argument:
                printer.write("usage: /rename TITLE\n")
                return
            title = session.rename(argument)
            printer.write(f"(session {session.id} is now titled: {title})\n")
        elif name == "/resume":
            resumed = session.prepare(argument or "latest")
            session.attach(resumed)
            resumed.restore_into(engine)
            show_resumed(resumed, context, printer)
        elif name == "/fork":
            if argument and not argument.isdigit():
                printer.write(f"error: /fork takes a turn number, not {argument!r}\n")
                return
            parent = session.id
            forked = session.fork(int(argument) if argument else None)
            forked.restore_into(engine)
            printer.write(
                f"(forked session {parent} at turn {forked.turn}: new turns go to session "
                f"{forked.id})\n"
            )
    except ModesError as error:
        printer.write(f"error: {error}\n")
