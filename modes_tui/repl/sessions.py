"""The REPL's session commands: `/resume`, `/fork`, `/rename` (done by `frontend.sessions`),
and showing their outcome and a resumed session. No prompt_toolkit here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modes_tui.core.history.transcript import fold_turn
from modes_tui.frontend import sessions
from modes_tui.frontend.sessions import Refused, Renamed, SessionOutcome, Switched
from modes_tui.route_format import repl_line

if TYPE_CHECKING:
    from modes_tui.repl.context import ReplContext
    from modes_tui.repl.printer import Printer
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


def show_outcome(outcome: SessionOutcome, context: ReplContext, printer: Printer) -> None:
    """What a session action did, or why it did not."""
    match outcome:
        case Refused(kind="no-sessions"):
            printer.write("error: sessions are not recorded in this REPL\n")
        case Refused(kind="usage", reason=usage):
            printer.write(usage + "\n")
        case Refused(reason=reason):
            printer.write(f"error: {reason}\n")
        case Renamed(session_id=session_id, title=title):
            printer.write(f"(session {session_id} is now titled: {title})\n")
        case Switched(resumption=forked, parent=str(parent)):
            printer.write(
                f"(forked session {parent} at turn {forked.turn}: new turns go to session "
                f"{forked.id})\n"
            )
        case Switched(resumption=resumed):
            show_resumed(resumed, context, printer)


async def resume(argument: str, context: ReplContext, printer: Printer) -> None:
    """`/resume [ID|latest]`: continue a saved session here."""
    show_outcome(await sessions.resume(context, argument), context, printer)


async def fork(argument: str, context: ReplContext, printer: Printer) -> None:
    """`/fork [N]`: a new session from turn N of this one."""
    show_outcome(sessions.fork(context, argument), context, printer)


async def rename(argument: str, context: ReplContext, printer: Printer) -> None:
    """`/rename TITLE`: give this session a title."""
    show_outcome(sessions.rename(context, argument), context, printer)
