"""The REPL's slash commands: one handler per command of the table, over `frontend`.

A line is read by `frontend.lines.read_line` (a message, `/MODE text`, or a command with its
argument checked); a command goes through `frontend.dispatch` to the handler below. The session actions and `/wrong` are
`frontend.sessions` and `frontend.corrections`; this module only prints their outcomes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from modes_tui.core.errors import ModesError
from modes_tui.frontend import corrections
from modes_tui.frontend.commands import (
    ONE_SHOT_HELP,
    ONE_SHOT_USAGE,
    Command,
    CommandError,
    commands_for,
)
from modes_tui.frontend.dispatch import dispatch
from modes_tui.frontend.lines import read_line
from modes_tui.repl.sessions import fork, rename, resume
from modes_tui.repl.turns import ask, play

if TYPE_CHECKING:
    from modes_tui.repl.context import ReplContext
    from modes_tui.repl.printer import Printer

ReplHandler = Callable[[str, "ReplContext", "Printer"], Awaitable[bool | None]]
"""Does one command; False stops the REPL."""


async def run_line(line: str, context: ReplContext, printer: Printer) -> bool:
    """One typed line: a command, `/MODE text` (that message in MODE, nothing forced for
    what follows), `//text` (sends `/text`) or a message. False: the REPL should stop."""
    try:
        read = read_line(line, context.mode_names(), "repl")
    except CommandError as error:
        # a usage line or an unknown command's hint is printed as it is
        printer.write(f"error: {error}\n" if error.kind == "error" else f"{error}\n")
        return True
    if isinstance(read, Command):
        return await _run(read, context, printer)
    await ask(read.text, context, printer, force=read.force)
    return True


async def _run(command: Command, context: ReplContext, printer: Printer) -> bool:
    handlers = {name: _bound(handler, context, printer) for name, handler in HANDLERS.items()}
    return await dispatch(command.name, command.argument, handlers, _unknown) is not False


async def _unknown(name: str) -> bool:
    """A command read always has a handler (`read_line` checks the name)."""
    return True


def _bound(
    handler: ReplHandler, context: ReplContext, printer: Printer
) -> Callable[[str], Awaitable[bool | None]]:
    async def run(argument: str) -> bool | None:
        return await handler(argument, context, printer)

    return run


async def quit_(argument: str, context: ReplContext, printer: Printer) -> bool:
    return False


async def help_(argument: str, context: ReplContext, printer: Printer) -> None:
    for spec in commands_for("repl"):
        printer.write(f"{spec.usage:<20} {spec.help_for('repl')}\n")
    printer.write(f"{ONE_SHOT_USAGE:<20} {ONE_SHOT_HELP}\n")


async def modes(argument: str, context: ReplContext, printer: Printer) -> None:
    printer.write(context.describe_modes() + "\n")


async def mode(argument: str, context: ReplContext, printer: Printer) -> None:
    """`/mode NAME|auto|off` (checked by `read_line`; the control may still refuse)."""
    try:
        printer.write(context.set_mode(argument) + "\n")
    except ModesError as error:
        printer.write(f"error: {error}\n")


async def clear(argument: str, context: ReplContext, printer: Printer) -> None:
    context.engine.clear()
    printer.write("(conversation cleared)\n")


async def undo(argument: str, context: ReplContext, printer: Printer) -> None:
    """`/undo [N]`: put back the files of the last N turns (asks before overwriting)."""
    from modes_tui.frontend.undo import run_undo

    asker = getattr(context.engine, "asker", None)
    printer.write(await run_undo(context.engine, argument, asker.ask if asker else None) + "\n")


async def compact(argument: str, context: ReplContext, printer: Printer) -> None:
    """`/compact`: the earlier turns summarised for the model; one line says so."""
    try:
        compaction = await context.engine.compact()
    except ModesError as error:
        printer.write(f"error: {error}\n")
        return
    printer.write(f"({compaction.describe()})\n")


async def wrong(argument: str, context: ReplContext, printer: Printer) -> None:
    """`/wrong MODE` re-runs the last turn in MODE; `/wrong undo` forgets the last correction."""
    outcome: corrections.Rerun | corrections.Undone | corrections.CorrectionRefused
    match corrections.read_wrong(argument):
        case corrections.PickMode():
            printer.write("usage: /wrong MODE | undo\n")
            return
        case corrections.Undo():
            outcome = corrections.undo(context.engine)
        case corrections.CorrectTo(mode=chosen):
            outcome = corrections.correct(context.engine, chosen)
    match outcome:
        case corrections.CorrectionRefused(reason=reason):
            printer.write(f"error: {reason}\n")
        case corrections.Undone():
            printer.write(
                f"(forgot the correction of turn {outcome.correction.turn}: {outcome.change()}; "
                "the answers stay)\n"
            )
        case corrections.Rerun(events=events):
            await play(events, context, printer)


async def why(argument: str, context: ReplContext, printer: Printer) -> None:
    """`/why`: the last turn's decision in the route panel's words (`route_format`), then
    the request it sent: its model, notes, and how it was fitted into the window."""
    from modes_tui.route_format import panel_text, repl_line

    turn = context.last_turn
    if turn is None or turn.route is None:
        printer.write("no turn yet\n")
        return
    lines = [f"turn {turn.number}: {repl_line(turn.route)}", *panel_text(turn.route)]
    lines += [f"  ! {warning}" for warning in turn.warnings]
    if turn.requests:
        built = turn.requests[-1]
        request = built.request
        role = f" ({built.role} role)" if built.role else ""
        count = len(request.messages)
        tools = f", {len(request.tools)} tool(s)" if request.tools else ""
        lines.append(f"  request: {request.model}{role}, {count} message(s){tools}")
        lines += [f"  ! {note}" for note in built.notes]
        if built.context is not None:  # how the request was fitted into the model's window
            lines.append(f"  context: {built.context.describe()}")
    printer.write("\n".join(lines) + "\n")


HANDLERS: dict[str, ReplHandler] = {
    "/quit": quit_,
    "/help": help_,
    "/modes": modes,
    "/mode": mode,
    "/wrong": wrong,
    "/clear": clear,
    "/undo": undo,
    "/compact": compact,
    "/resume": resume,
    "/fork": fork,
    "/rename": rename,
    "/why": why,
}
"""The REPL's command -> handler (every REPL command of `frontend.commands.COMMANDS`)."""
