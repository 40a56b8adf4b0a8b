"""What the conversation's slash commands do that is not a turn: `/clear`, `/compact`,
`/export`, `/undo`, `/wrong undo`, `/modes`, `/help`, `/sessions` and `/replay`.

Each takes the conversation as `ConversationParts` and says its outcome in the status line
or as a note in the chat; the table of command -> handler is the screen's
(`ConversationScreen.command_handlers`), checked against `frontend.commands.COMMANDS` by a
test. Slow work runs in a named worker of the app (its one `Worker.StateChanged` handler
names a worker that fails).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from modes_tui.core.errors import ModesError
from modes_tui.tui.messages import SessionLoaded
from modes_tui.tui.render import plural
from modes_tui.tui.status import reading_label

if TYPE_CHECKING:
    from modes_tui.core.control_setting import ControlReading
    from modes_tui.core.engine.ports import TurnEngine
    from modes_tui.frontend.commands import Command
    from modes_tui.frontend.dispatch import Handler
    from modes_tui.tui.parts import ConversationParts
    from modes_tui.tui.replay import PickedSession
    from modes_tui.tui.turn_runner import TurnRunner

RUNNING = "A turn is running: Esc cancels it first."
STILL_STARTING = "modes-tui is still starting; try again in a moment."


async def clear(parts: ConversationParts) -> None:
    """`/clear`: the engine and the chat forget the conversation; the panel keeps it."""
    if parts.turns.running:
        parts.status.error(RUNNING)
        return
    if parts.engine is not None:
        parts.engine.clear()
    await parts.chat.clear()
    parts.status.idle("Conversation cleared; the route panel keeps the session's decisions.")


async def compact(parts: ConversationParts) -> None:
    """`/compact`: the earlier turns summarised for the model, shown as a folded note."""
    if parts.turns.running or parts.engine is None:
        parts.status.error(RUNNING)
        return
    parts.status.busy("Summarising the earlier turns…")
    try:
        compaction = await parts.engine.compact()
    except ModesError as error:
        parts.status.error(str(error))
        return
    await parts.chat.add_compaction(compaction)
    parts.status.idle("Earlier turns summarised for the model; the chat keeps them all.")


def undo_files(parts: ConversationParts, argument: str) -> None:
    """`/undo [N]`: put back what the last N turns wrote, in a worker (it may ask before
    overwriting a file changed on disk since, and the question needs the app running)."""
    if parts.turns.running or parts.engine is None:
        parts.status.error(RUNNING)
        return
    parts.app.run_worker(_undo(parts, parts.engine, argument), group="undo", exit_on_error=False)


async def _undo(parts: ConversationParts, engine: TurnEngine, argument: str) -> None:
    from modes_tui.frontend.undo import run_undo

    asker = getattr(engine, "asker", None)
    await parts.chat.add_note(await run_undo(engine, argument, asker.ask if asker else None))


async def export(parts: ConversationParts) -> None:
    """`/export`: the conversation as a Markdown file, and where it went."""
    if not parts.records or parts.services is None:
        parts.status.error("Nothing to export yet: send a message first.")
        return
    sessions = parts.services.sessions
    session_id = parts.services.session_id()
    try:
        if sessions is not None and session_id is not None:
            path = sessions.export(session_id)
        else:
            from modes_tui.store.export import conversation_markdown, write_export

            path = Path.cwd() / "modes-tui-conversation.md"
            write_export(path, conversation_markdown(parts.records))
    except (ModesError, OSError) as error:
        parts.status.error(f"Export failed: {error}")
        return
    await parts.chat.add_note(f"Exported the conversation to `{path}`.")
    parts.status.idle(f"Exported to {path}")


def open_sessions(
    parts: ConversationParts, resume: Callable[[str], None], listed_ids: Callable[[list[str]], None]
) -> None:
    """`/sessions`: the picker; picking one replays it, `r` resumes it. `listed_ids` keeps
    the ids for `/replay`'s completion."""
    sessions = parts.services.sessions if parts.services is not None else None
    if sessions is None:
        parts.status.error("Sessions are not available in this build.")
        return
    listed = sessions.list()
    listed_ids([s.id for s in listed])

    from modes_tui.tui.replay import SessionsScreen

    def picked(choice: PickedSession | None) -> None:
        if choice is not None and choice.resume:
            resume(choice.id)
        elif choice is not None:
            replay(parts, choice.id)

    parts.app.push_screen(SessionsScreen(listed, tz=parts.tz), callback=picked)


def replay(parts: ConversationParts, session_id: str) -> None:
    """`/replay ID`: load the session in a thread; `SessionLoaded` shows it."""
    parts.status.busy(f"Loading session {session_id}…")
    services = parts.services

    def load() -> None:
        sessions = services.sessions if services is not None else None
        if sessions is None:
            raise ModesError("sessions are not available in this build")
        parts.post_message(SessionLoaded(sessions.load(session_id)))

    parts.app.run_worker(
        load, thread=True, exclusive=True, exit_on_error=False, group="replay", name="load session"
    )


def undo_correction(parts: ConversationParts) -> None:
    """Forget the latest correction of this session (`/wrong undo`); the answers stay."""
    if parts.engine is None:
        parts.status.error(STILL_STARTING)
        return
    from modes_tui.frontend import corrections  # with the first `/wrong`, after the first frame

    undone = corrections.undo(parts.engine)
    if isinstance(undone, corrections.CorrectionRefused):
        parts.status.error(undone.reason)
        return
    correction = undone.correction
    for record in parts.records:
        if any(c.correction == correction for c in record.corrections):
            record.undone.add(correction.id)
            parts.panel.refresh_record(record)
            view = parts.chat.view(record.number)
            if view is not None:
                view.show_route()
    parts.status.idle(
        f"Forgot the correction of turn {correction.turn} "
        f"({correction.routed_mode or 'no mode'} → {correction.corrected_mode}); "
        "the answers stay."
    )


def copy_answer(parts: ConversationParts) -> None:
    """Copy the last answer to the clipboard (OSC 52, through the terminal)."""
    answered = [r for r in parts.records if r.answer and r.superseded_by is None]
    if not answered:
        parts.status.error("No answer to copy yet.")
        return
    answer = answered[-1].answer
    parts.app.copy_to_clipboard(answer)
    # OSC 52 has no reply: the terminal may have ignored it, so say what to do then.
    parts.status.idle(
        f"Copied the answer of turn {answered[-1].number} ({plural(len(answer), 'character')})"
        " through the terminal; if your clipboard stays empty, /export writes it to a file."
    )


def show_help(parts: ConversationParts) -> None:
    """`/help`: keys and commands in an overlay, never in the conversation."""
    from modes_tui.tui.help import HelpScreen

    if not isinstance(parts.app.screen, HelpScreen):
        parts.app.push_screen(HelpScreen(parts.mode_keys))


def modes_text(parts: ConversationParts, reading: ControlReading) -> str:
    """`/modes`: the modes of the pack, as Markdown."""
    from modes_tui.frontend.modes import mode_rows  # loads with the first `/modes`

    assert parts.services is not None  # commands other than /help, /clear wait for the start
    pack = parts.services.pack
    keys = {mk.mode: mk.key for mk in parts.mode_keys}
    rows = ["| mode | key | thinking | tools | about |", "|---|---|---|---|---|"]
    for row in mode_rows(pack):
        name = row.name + (" (fallback)" if row.fallback else "")
        if not row.available:
            name += " (unavailable)"
        rows.append(
            f"| {name} | {keys.get(row.name) or ''} | {row.thinking} | "
            f"{', '.join(row.tools) or '-'} | {row.about} |"
        )
    setting = reading_label(reading)
    return "\n".join([f"**Modes of pack `{pack.name}`** · setting: {setting}", "", *rows])


class ConversationCommands:
    """The conversation's command -> handler table, and the handlers that need the screen's
    keys (`/mode`, `/why`, `/copy`, `/wrong`) or the one session worker."""

    def __init__(self, parts: ConversationParts, runner: TurnRunner) -> None:
        self._parts = parts
        self._runner = runner
        self.session_ids: list[str] = []
        """Ids `/replay` completes (listed by `/sessions`)."""

    async def run(self, command: Command) -> None:
        """Do what a slash command says (only `/help`, `/clear` and `/quit` before the start)."""
        if self._parts.services is None and command.name not in ("/help", "/clear", "/quit"):
            self._parts.status.error(STILL_STARTING)
            return
        from modes_tui.frontend.dispatch import dispatch

        await dispatch(command.name, command.argument, self.handlers(), _nothing)

    def handlers(self) -> dict[str, Handler[object]]:
        """Every app command of `frontend.commands.COMMANDS`, to what it does."""
        parts = self._parts
        return {
            "/mode": _sync(parts.set_setting),
            "/modes": lambda _: parts.chat.add_note(modes_text(parts, parts.reading)),
            "/clear": lambda _: clear(parts),
            "/compact": lambda _: compact(parts),
            "/sessions": _sync(lambda _: open_sessions(parts, self.resume, self._listed)),
            "/replay": _sync(partial(replay, parts)),
            "/resume": _sync(self.resume),
            "/fork": _sync(partial(self._session_action, "fork")),
            "/rename": _sync(partial(self._session_action, "rename")),
            "/export": lambda _: export(parts),
            "/why": _sync(lambda _: parts.action_why()),
            "/wrong": _sync(self.wrong),
            "/undo": _sync(partial(undo_files, parts)),
            "/help": _sync(lambda _: show_help(parts)),
            "/copy": _sync(lambda _: parts.action_copy_answer()),
            "/quit": lambda _: parts.app.action_quit(),
        }

    def wrong(self, argument: str) -> None:
        """`/wrong MODE|undo`, or the picker when no mode is given."""
        from modes_tui.frontend import corrections  # loads here, after the first frame

        match corrections.read_wrong(argument):
            case corrections.Undo():
                undo_correction(self._parts)
            case corrections.CorrectTo(mode=mode):
                records = self._parts.records
                self._runner.correct(records[-1] if records else None, mode)
            case corrections.PickMode():
                self._parts.action_correct()

    def resume(self, ref: str) -> None:
        """`/resume [ID|latest]` (see `tui.session_actions`), one session action at a time."""
        self._session_action("resume", ref)

    def _session_action(self, name: Literal["resume", "fork", "rename"], argument: str) -> None:
        """One of `session_actions` in the one session worker (it loads the replay's widgets:
        imported when first used)."""
        from modes_tui.tui import session_actions

        acts: dict[str, Callable[[ConversationParts, str], Awaitable[bool]]] = {
            "resume": session_actions.resume,
            "fork": session_actions.fork,
            "rename": session_actions.rename,
        }
        act, parts = acts[name], self._parts

        async def run() -> None:
            if not await act(parts, argument):
                # refused (no such session, no such turn): the line comes back to be fixed
                parts.prompt.put_back(f"/{name} {argument}".rstrip())

        parts.app.run_worker(
            run(),
            name=f"/{name}",
            group="session",
            exclusive=True,
            exit_on_error=False,
        )

    def _listed(self, ids: list[str]) -> None:
        self.session_ids = ids


async def _nothing(name: str) -> None:
    """A command read always has a handler (`read_line` checks the name)."""


def _sync(act: Callable[[str], object]) -> Handler[object]:
    """A handler of something done at once (it may start a worker or open a screen)."""

    async def run(argument: str) -> None:
        act(argument)

    return run
