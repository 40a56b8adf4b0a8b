"""Slash commands and the screens they open: modes, sessions, replay, export, help.

`run_command` is the one place a parsed command (`modes_tui.frontend.commands.Command`) is
carried out, through `frontend.dispatch` and the handlers of `command_handlers`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work

from modes_tui.core.errors import ModesError
from modes_tui.frontend import corrections
from modes_tui.frontend.commands import ONE_SHOT_HELP, ONE_SHOT_USAGE, Command, commands_for
from modes_tui.frontend.dispatch import Handler, dispatch
from modes_tui.tui.app_turns import TurnsApp
from modes_tui.tui.panel import RoutePanel
from modes_tui.tui.render import plural
from modes_tui.tui.status import reading_label

if TYPE_CHECKING:
    from modes_tui.tui.services import ReplayedSession


class CommandsApp(TurnsApp):
    """Slash commands, the inspector, copying, export and the help and mode texts."""

    @work(thread=True, exclusive=True, exit_on_error=False, group="replay", name="load session")
    def load_replay(self, session_id: str) -> ReplayedSession:
        """Load a recorded session (and re-route it) off the event loop."""
        sessions = self.services.sessions
        if sessions is None:
            raise ModesError("sessions are not available in this build")
        return sessions.load(session_id)

    def action_why(self) -> None:
        """The inspector for the last turn."""
        if not self.records:
            self.status.error("No turn yet: send a message first.")
            return
        from modes_tui.tui.inspector import InspectorScreen

        self.push_screen(InspectorScreen(self.records[-1], tz=self.tz))

    def action_copy_answer(self) -> None:
        """Copy the last answer to the clipboard (OSC 52, through the terminal)."""
        answered = [r for r in self.records if r.answer and r.superseded_by is None]
        if not answered:
            self.status.error("No answer to copy yet.")
            return
        answer = answered[-1].answer
        self.copy_to_clipboard(answer)
        # OSC 52 has no reply: the terminal may have ignored it, so say what to do then.
        self.status.idle(
            f"Copied the answer of turn {answered[-1].number} ({plural(len(answer), 'character')})"
            " through the terminal; if your clipboard stays empty, /export writes it to a file."
        )

    def _command(self, name: str) -> None:
        self.run_worker(self.run_command(Command(name)), group="command", exit_on_error=False)

    async def action_help(self) -> None:
        """Keys and commands."""
        await self.chat.add_note(self.help_text())

    async def run_command(self, command: Command) -> None:
        """Do what a slash command says (its handler in `command_handlers`)."""
        if not self.started and command.name not in ("/help", "/clear", "/quit"):
            self.status.error("modes-tui is still starting; try again in a moment.")
            return
        await dispatch(command.name, command.argument, self.command_handlers(), _nothing)

    def command_handlers(self) -> dict[str, Handler[object]]:
        """The app's command -> handler (every app command of `frontend.commands.COMMANDS`)."""
        return {
            "/mode": _sync(self.set_setting),
            "/modes": lambda _: self.chat.add_note(self.modes_text()),
            "/clear": lambda _: self.clear_conversation(),
            "/sessions": _sync(lambda _: self.open_sessions()),
            "/replay": _sync(self.replay_session),
            "/resume": _sync(lambda ref: self.session_command(Command("/resume", ref))),
            "/fork": _sync(lambda turn: self.session_command(Command("/fork", turn))),
            "/rename": _sync(lambda title: self.session_command(Command("/rename", title))),
            "/export": lambda _: self.export(),
            "/why": _sync(lambda _: self.action_why()),
            "/wrong": _sync(self.wrong),
            "/help": lambda _: self.action_help(),
            "/copy": _sync(lambda _: self.action_copy_answer()),
            "/quit": _sync(lambda _: self.exit()),
        }

    async def clear_conversation(self) -> None:
        """`/clear`: the engine and the chat forget the conversation; the panel keeps it."""
        if self._turn_running:
            self.status.error("A turn is running: Esc cancels it first.")
            return
        if self.engine is not None:
            self.engine.clear()
        await self.chat.clear()
        self.status.idle("Conversation cleared; the route panel keeps the session's decisions.")

    def replay_session(self, session_id: str) -> None:
        """`/replay ID`: load the session in a worker, then show it."""
        self.status.busy(f"Loading session {session_id}…")
        self.load_replay(session_id)

    def wrong(self, argument: str) -> None:
        """`/wrong MODE|undo`, or the picker when no mode is given."""
        match corrections.read_wrong(argument):
            case corrections.Undo():
                self.undo_correction()
            case corrections.CorrectTo(mode=mode):
                self.correct(self.records[-1] if self.records else None, mode)
            case corrections.PickMode():
                self.action_correct()

    def session_command(self, command: Command) -> None:
        """`/resume`, `/fork`, `/rename` (see `tui.session_actions`), one at a time."""
        from modes_tui.tui import session_actions

        argument = command.argument
        if command.name == "/resume":
            work = session_actions.resume(self, argument)
        elif command.name == "/fork":
            work = session_actions.fork(self, argument)
        else:
            work = session_actions.rename(self, argument)
        self.run_worker(
            work, name=command.name, group="session", exclusive=True, exit_on_error=False
        )

    def open_sessions(self) -> None:
        """The session picker; picking one replays it."""
        sessions = self.services.sessions
        if sessions is None:
            self.status.error("Sessions are not available in this build.")
            return
        listed = sessions.list()
        self._session_ids = [s.id for s in listed]

        from modes_tui.tui.replay import PickedSession, SessionsScreen

        def picked(choice: PickedSession | None) -> None:
            if choice is not None and choice.resume:
                self.session_command(Command("/resume", choice.id))
            elif choice is not None:
                self.status.busy(f"Loading session {choice.id}…")
                self.load_replay(choice.id)

        self.push_screen(SessionsScreen(listed, tz=self.tz), callback=picked)

    async def export(self) -> None:
        """Write the conversation to a Markdown file and say where."""
        if not self.records:
            self.status.error("Nothing to export yet: send a message first.")
            return
        sessions = self.services.sessions
        session_id = self.services.session_id()
        try:
            if sessions is not None and session_id is not None:
                path = sessions.export(session_id)
            else:
                from modes_tui.store.export import conversation_markdown, write_export

                path = Path.cwd() / "modes-tui-conversation.md"
                write_export(path, conversation_markdown(self.records))
        except (ModesError, OSError) as error:
            self.status.error(f"Export failed: {error}")
            return
        await self.chat.add_note(f"Exported the conversation to `{path}`.")
        self.status.idle(f"Exported to {path}")

    @on(RoutePanel.InspectRequested)
    def _inspect(self, event: RoutePanel.InspectRequested) -> None:
        from modes_tui.tui.inspector import InspectorScreen

        event.stop()
        self.push_screen(InspectorScreen(event.record, tz=self.tz))

    def help_text(self) -> str:
        """Keys and commands, as Markdown."""
        keys = [f"| `{mk.key}` | force **{mk.mode}** |" for mk in self.mode_keys if mk.key]
        lines = [
            "**Keys**",
            "",
            "| key | does |",
            "|---|---|",
            *keys,
            "| `shift+tab` | cycle: auto → each mode → auto |",
            "| `ctrl+g` / `ctrl+o` | auto / modes off |",
            "| `ctrl+b` | show or hide the route panel |",
            "| `ctrl+t` | inspector for the last turn (`/why`) |",
            "| `esc` | cancel the running answer |",
            "| `ctrl+r` | retry a failed turn |",
            "| `ctrl+e` | wrong mode? pick the mode that should have answered (`/wrong`) |",
            "| `enter` | send (while a turn runs, the message waits its turn) |",
            "| `shift+enter` / `ctrl+j` / `alt+enter` | new line |",
            "| `up` | in an empty prompt: edit the last message (resend replaces the turn) |",
            "| `ctrl+l` | copy the last answer (`/copy`) |",
            '| `ctrl+p` | command palette ("Force mode: …") |',
            "| `tab` | take the completion shown in the prompt |",
            "| `ctrl+q` | quit (`/quit`) |",
            "",
            "**Commands**",
            "",
            *[f"- `{spec.usage}`: {spec.help}" for spec in commands_for("app")],
            f"- `{ONE_SHOT_USAGE}`: {ONE_SHOT_HELP}",
            "",
            "Keys can be rebound with `keymap:` in config.yaml (ids such as `mode.code`, "
            "`mode.cycle`, `mode.auto`, `panel.toggle`).",
        ]
        return "\n".join(lines)

    def modes_text(self) -> str:
        """The modes of the pack, as Markdown."""
        keys = {mk.mode: mk.key for mk in self.mode_keys}
        fallback = self.services.pack.router.fallback
        rows = ["| mode | key | thinking | tools | about |", "|---|---|---|---|---|"]
        for profile in self.services.pack.profiles:
            about = profile.description.strip().split(". ")[0].rstrip(".")
            name = profile.name + (" (fallback)" if profile.name == fallback else "")
            if not profile.is_available():
                name += " (unavailable)"
            rows.append(
                f"| {name} | {keys.get(profile.name) or ''} | {profile.thinking} | "
                f"{', '.join(profile.tools) or '-'} | {about} |"
            )
        setting = reading_label(self.reading)
        return "\n".join(
            [
                f"**Modes of pack `{self.services.pack.name}`** · setting: {setting}",
                "",
                *rows,
            ]
        )


async def _nothing(name: str) -> None:
    """A parsed command always has a handler (`parse_command` checks the name)."""


def _sync(act: Callable[[str], object]) -> Handler[object]:
    """A handler of something done at once (it may start a worker or open a screen)."""

    async def run(argument: str) -> None:
        act(argument)

    return run
