"""The conversation: the screen the app opens with, chat on the left, routing decisions on
the right, a prompt below.

`ConversationScreen` owns what a conversation is on screen: its turns (`records`, numbered
by `turn_runner`), the turn queue, the prompt's keys, the corrections and the commands. Its
state from outside comes in as reactive values the app sets (`services`, `engine`,
`reading`, `startup_problem`); each has a `watch_` method that shows it. Beside it:

- `turn_queue.TurnQueue`: whether a turn runs, what waits, what is being edited;
- `turn_runner.TurnRunner`: one turn's events into the chat, the panel and the status line;
- `conversation_commands`: what `/clear`, `/export`, `/sessions`... do;
- `session_actions`: `/resume`, `/fork` and `/rename`.

Lines typed in the prompt are read once, by `frontend.lines.read_line` (loaded with the first
line), when Enter is pressed; a waiting message waits as the value read (`turn_queue.Sent`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import tzinfo
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.css.query import QueryType
from textual.reactive import var
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import OptionList, Static

from modes_tui.core.control_setting import AUTO, ControlReading
from modes_tui.core.errors import ModesError
from modes_tui.core.terminal_text import terminal_safe
from modes_tui.tui.chat import ChatLog
from modes_tui.tui.conversation_commands import ConversationCommands, copy_answer
from modes_tui.tui.early_prompt import EarlyPrompt
from modes_tui.tui.focus import next_part, type_into
from modes_tui.tui.keys import next_setting
from modes_tui.tui.messages import SessionLoaded, TurnEnded
from modes_tui.tui.panel import RoutePanel
from modes_tui.tui.parts import LatePart, Part
from modes_tui.tui.pending import PendingMessages
from modes_tui.tui.render import plural
from modes_tui.tui.status import NOT_KNOWN, ModeHeader, StatusLine, model_label, reading_label
from modes_tui.tui.turn_messages import RetryRequested
from modes_tui.tui.turn_queue import Sent, TurnQueue
from modes_tui.tui.turn_runner import TurnRunner

if TYPE_CHECKING:
    from modes_tui.core.engine.ports import TurnEngine
    from modes_tui.core.history.events import TurnFailed
    from modes_tui.core.history.transcript import TurnTranscript
    from modes_tui.frontend.commands import Command
    from modes_tui.frontend.dispatch import Handler
    from modes_tui.tui.keys import ModeKey
    from modes_tui.tui.prompt import PromptInput
    from modes_tui.tui.services import AppServices
    from modes_tui.tui.startup import StartupProblem

STILL_STARTING = "modes-tui is still starting; try again in a moment."
STARTING_HINT = " (modes-tui is still starting: `/MODE text` works once the modes load)"
PLACEHOLDER = "Ask anything · Enter sends · shift+enter or ctrl+j: new line"


def _editor() -> type[PromptInput]:
    from modes_tui.tui.prompt import PromptInput  # after the first frame: see early_prompt

    return PromptInput


class ConversationScreen(Screen[None]):
    """One conversation: its turns, the queue of sent messages, and the parts that show them."""

    BINDINGS: ClassVar = [
        Binding("ctrl+b", "toggle_panel", "Routes", id="panel.toggle"),
        Binding("shift+tab", "cycle_mode", "Cycle mode", id="mode.cycle", priority=True),
        Binding("ctrl+g", "set_setting('auto')", "Auto", id="mode.auto"),
        Binding("ctrl+o", "set_setting('off')", "Off", id="mode.off", show=False),
        Binding("escape", "cancel_turn", "Cancel", id="turn.cancel"),
        Binding("escape", "focus_prompt", "Prompt", id="prompt.focus"),
        Binding("ctrl+r", "retry", "Retry", id="turn.retry"),
        Binding("ctrl+e", "correct", "Wrong mode?", id="turn.correct", priority=True),
        Binding("ctrl+n", "accept_hand_off", "Keep hand-off", id="turn.keep_hand_off", show=False),
        Binding("ctrl+t", "why", "Why?", id="inspector.last"),
        Binding("ctrl+l", "copy_answer", "Copy answer", id="answer.copy", show=False),
        Binding("tab", "app.focus_next", "Next", id="focus.next"),
    ]
    """The conversation's keys (the mode keys and f1 are the app's: they follow these in
    the footer). Esc cancels the running turn if there is one, else goes back to the prompt."""

    services: var[AppServices | None] = var(None, init=False)
    """What the app was given (None while it is being prepared after the first frame)."""
    engine: var[TurnEngine | None] = var(None, init=False)
    """The engine every turn runs on, once the app has built it."""
    engine_error: var[str | None] = var(None, init=False)
    """Why the engine could not be built."""
    startup_problem: var[StartupProblem | None] = var(None, init=False)
    """Why the app could not start (a broken pack, a bad setting)."""
    reading: var[ControlReading] = var(ControlReading(AUTO), init=False, always_update=True)
    """The control file's setting, as last read."""

    def __init__(
        self,
        services: AppServices | None = None,
        *,
        tz: tzinfo | None = None,
        mode_keys: Callable[[], list[ModeKey]] = list,
    ) -> None:
        super().__init__()
        self.set_reactive(ConversationScreen.services, services)
        self.tz = tz
        """Time zone for times on screen (None: local); tests fix it."""
        self._mode_keys = mode_keys
        self.editor_in = False
        """The editor has replaced the early prompt (right after the first frame)."""
        self.records: list[TurnTranscript] = []
        """Every turn on screen, in order (numbered by `TurnRunner.new_record`)."""
        self.turns: TurnQueue[Sent] = TurnQueue(lambda: self.pending, changed=self.refresh_bindings)
        """Running, waiting and editing (the waiting messages are shown by `pending`)."""
        self.runner = TurnRunner(self)
        self.commands = ConversationCommands(self, self.runner)
        self._settled = asyncio.Event()

    # ------------------------------------------------------------------ parts

    @property
    def mode_keys(self) -> list[ModeKey]:
        """The keys that force each mode (the app's, from the pack)."""
        return self._mode_keys()

    chat = Part("#chat", ChatLog)
    panel = Part("#routes", RoutePanel)
    header = Part("#header", ModeHeader)
    status = Part("#status", StatusLine)
    prompt = LatePart("#prompt", _editor)
    """The editor; until it is in, right after the first frame, `EarlyPrompt` keeps the keys."""
    pending = Part("#pending", PendingMessages)
    """Messages sent while a turn runs, waiting their turn."""

    @property
    def draft(self) -> str:
        """What is typed and not sent: the editor's text, or the early prompt's keys."""
        return self.prompt.value if self.editor_in else self.query_one(EarlyPrompt).typed()

    @property
    def turn_running(self) -> bool:
        """A turn is running (or waiting for the engine); see `turns` for the rest."""
        return self.turns.running

    def compose(self) -> ComposeResult:
        services = self.services
        yield ModeHeader(
            model=services.model if services else NOT_KNOWN,
            pack=services.pack.name if services else NOT_KNOWN,
            id="header",
            tz=self.tz,
        )
        with Horizontal(id="main"):
            yield ChatLog(id="chat", tz=self.tz)
            yield RoutePanel(id="routes", tz=self.tz)
        yield StatusLine(id="status")
        yield PendingMessages(id="pending")
        yield EarlyPrompt(Text(PLACEHOLDER), id="early-prompt")  # the editor's place until `_late`
        yield Static(id="footer-bar")  # the footer's place until `_late`

    def on_mount(self) -> None:
        self.call_after_refresh(self._late)
        self.query_one(EarlyPrompt).focus()
        self.panel.fit(self.app.size.width)
        if self.services is not None:
            self.watch_services(self.services)
        else:
            self.status.busy("Starting…")

    async def _late(self) -> None:
        from modes_tui.tui import early_prompt, footer, prompt  # after the first frame

        made = prompt.editor(
            PLACEHOLDER, self.mode_names, self.session_ids, self.runner.recall, lambda: self.engine
        )
        await early_prompt.take_place(self, self.query_one(EarlyPrompt), made)
        self.editor_in = True
        await footer.take_place(self, self.query_one("#footer-bar"))

    # ------------------------------------------------------------------ state from the app

    def watch_services(self, services: AppServices | None) -> None:
        """The services are in: the header, the setting, the load, the warnings."""
        if services is None:
            return
        self.header.show(model=services.model, pack=services.pack.name)
        self.reading = services.control.read()
        self.refresh_bindings()
        self.status.progress = services.load_progress
        self.status.busy(f"Loading {model_label(services.model)}…")
        for warning in services.warnings:
            shown = terminal_safe(warning)  # it may quote a value from config.yaml
            self.notify(shown, title="Settings", severity="warning", timeout=10, markup=False)
        if services.resumed is not None:  # --resume: its turns, before the engine is in
            from modes_tui.tui import session_actions  # with the replay's widgets: loaded late

            resumed = services.resumed
            self.call_later(session_actions.show, self, resumed, f"Resumed session `{resumed.id}`")

    def watch_engine(self, engine: TurnEngine | None) -> None:
        self.status.progress = None
        self._settled.set()
        if not self.turns.running:
            self.status.idle()

    def watch_engine_error(self, error: str | None) -> None:
        self.status.progress = None
        self._settled.set()
        self.status.error(f"The model could not start: {error}")

    def watch_startup_problem(self, problem: StartupProblem | None) -> None:
        if problem is None:
            return
        self._settled.set()
        self.status.error(f"modes-tui could not start: {problem.hint}")
        self.call_later(self.chat.add_plain_note, problem.note())

    def watch_reading(self, reading: ControlReading) -> None:
        """The control setting in the header and the panel."""
        self.header.show(reading)
        self.status.show_setting(reading, self.tz)  # forced: since when, how to hand it back
        self.panel.show_setting(reading_label(reading, self.tz), reading.warning)

    async def engine_settled(self) -> TurnEngine | None:
        """The engine once built, or None once it failed (a message waits meanwhile)."""
        if not self._settled.is_set():
            what = model_label(self.services.model) if self.services else "modes-tui"
            self.status.busy(f"Loading {what}; your message waits…")
            await self._settled.wait()
        return self.engine

    def startup_failure(self) -> TurnFailed:
        """Why a message cannot run: the setup or the model failed, with the fix."""
        from modes_tui.tui.startup import startup_failure  # only when start-up failed

        return startup_failure(self.startup_problem, self.engine_error)

    # ------------------------------------------------------------------ the prompt

    async def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        text = event.value
        if not text.strip():
            return
        from modes_tui.frontend.commands import Command, CommandError
        from modes_tui.frontend.lines import read_line

        try:
            read = read_line(text, self.mode_names(), "app")
        except CommandError as error:
            # before the pack is in, `/code text` cannot be told from a typo
            self.status.error(f"{error}{'' if self.services else STARTING_HINT}")
            self.prompt.put_back(text)  # to be fixed, before anything typed since Enter
            return
        self.prompt.remember(text)
        if isinstance(read, Command):
            self._clear_error()
            await self.run_command(read)
            return
        sent = Sent(text, read)
        submission = await self.turns.submit(sent)
        if submission.action == "replace":
            self.runner.send(sent, replacing=submission.replacing)  # `/MODE text` too
        elif submission.action == "wait":
            self.status.busy(
                f"{plural(submission.waiting, 'message')} waiting · "
                "they run in order when this turn ends"
            )
        else:
            self._clear_error()
            self.runner.send(sent)

    def _clear_error(self) -> None:
        """An error stays on screen until the user sends something else (typing does not
        clear it: a mistyped command keeps its hint in view while it is fixed)."""
        if self.status.has_class("-error"):
            self.status.idle()

    def on_text_area_changed(self) -> None:
        if self.turns.editing is not None and not self.prompt.value:
            self.turns.stop_editing()
            self.status.idle()

    @on(PendingMessages.EditRequested)
    def _edit_waiting(self, event: PendingMessages.EditRequested) -> None:
        event.stop()
        # Nothing typed is lost: a draft already in the prompt stays, after the message.
        self.prompt.put_back(event.text, keep_blank_draft=False)
        self.prompt.focus()
        self.status.idle("The waiting message is back in the prompt: Enter queues it again.")

    @on(PendingMessages.Removed)
    def _waiting_removed(self, event: PendingMessages.Removed) -> None:
        event.stop()
        self.prompt.focus()  # the clicked ✕ is gone: the keys go to the prompt, not nowhere

    # ------------------------------------------------------------------ turns

    @on(TurnEnded)
    async def _turn_ended(self, message: TurnEnded) -> None:
        message.stop()  # the conversation's own report: the app has nothing to do with it
        if not self.app.is_running:
            return  # shutting down: the turn was cancelled with the screens
        if message.crash is not None:
            self.runner.failed_unexpectedly(message.crash)
        sent = await self.turns.next_waiting()
        if sent is not None:
            self.runner.send(sent)

    @on(RetryRequested)
    def _retry_pressed(self, event: RetryRequested) -> None:
        event.stop()
        self.prompt.focus()  # the clicked button goes with the old answer: keys to the prompt
        if self.records and event.number != self.records[-1].number:
            self.status.error("Only the last turn can be retried.")
            return
        self.action_retry()

    # ------------------------------------------------------------------ modes

    def mode_names(self) -> list[str]:
        """The modes that can be forced now."""
        if self.services is None:
            return []
        return [p.name for p in self.services.pack.available()]

    def session_ids(self) -> list[str]:
        """Ids `/replay` completes (cached after `/sessions`)."""
        return list(self.commands.session_ids)

    def set_setting(self, setting: str) -> bool:
        """Write the control file (keys, /mode, the palette); False when it was refused."""
        if self.services is None:
            self.status.error(STILL_STARTING)
            return False
        from modes_tui.frontend.modes import set_mode  # with the first forced mode

        try:
            reading = set_mode(self.services.control, setting)
        except ModesError as error:
            self.status.error(str(error))
            return False
        self.reading = reading
        self.status.idle(f"Setting: {reading_label(reading, self.tz)}")
        return True

    def action_cycle_mode(self) -> None:
        """auto → each mode → auto."""
        self.set_setting(next_setting(self.reading.mode, self.mode_names()))

    # ------------------------------------------------------------------ keys and layout

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Cancel shows only while a turn runs, retry only after a failed last turn."""
        if action == "cancel_turn":
            return self.turns.can_cancel
        if action == "focus_prompt":  # esc after a click on the panel, the chat, a button
            return self.editor_in and self.focused is not self.prompt
        if action in ("cycle_mode", "correct") and not self.editor_in:
            return False  # priority keys: until the editor is in, kept in order with the rest
        if action == "retry":
            return self.turns.can_retry(self.records[-1] if self.records else None)
        return True

    def on_screen_resume(self) -> None:
        """Back on top (an overlay closed: inspector, picker, palette, a dialog): the keys go
        to the prompt again, wherever the focus was when it opened."""
        if self.editor_in:
            self.prompt.focus()

    def focus_next(self, selector: str | type[QueryType] = "*") -> Widget | None:
        """Tab: prompt → chat → route panel (when shown) → prompt (`focus.next_part`)."""
        if not self.editor_in:
            return None
        return next_part(self.focused, [self.prompt, self.chat, *self.panel.query(OptionList)])

    def on_key(self, event: events.Key) -> None:
        """Keys typed after a click on the chat, the panel, the header reach the prompt."""
        if self.editor_in:
            type_into(self.prompt, self.focused, event)
        else:
            self.query_one(EarlyPrompt).keep(event)  # the editor will have them, in order

    def action_focus_prompt(self) -> None:
        """Esc away from the prompt: back to it, so the next keys are typed there."""
        self.prompt.focus()

    def action_set_setting(self, setting: str) -> None:
        """Force a mode, or auto/off."""
        self.set_setting(setting)

    def action_toggle_panel(self) -> None:
        """Show or hide the route panel (on a narrow terminal, over the chat)."""
        self.panel.toggle(self.app.size.width)

    def action_cancel_turn(self) -> None:
        """Stop the running turn (the partial answer stays), or stop editing a message."""
        cancelled = self.turns.cancel()
        if cancelled == "edit":
            self.prompt.value = ""
            self.status.idle("Edit dropped; the turn stays as it was.")
        elif cancelled == "turn" and self.engine is not None:
            self.engine.cancel()
            self.status.busy("Cancelling…")

    def action_retry(self) -> None:
        """Retry the last turn when it failed or was cancelled."""
        if not self.records or self.turns.running:
            return
        record = self.records[-1]
        if not self.turns.can_retry(record):
            self.status.error("Only a failed or cancelled last turn can be retried.")
            return
        self.runner.retry(record)

    def action_correct(self) -> None:
        """The picker for the last turn, or for the decision selected in the route panel."""
        record = self.panel.highlighted_record() or (self.records[-1] if self.records else None)
        if not self.runner.can_correct(record) or record is None or self.services is None:
            return
        from modes_tui.tui.correct import CorrectScreen

        def chosen(mode: str | None) -> None:
            if mode:
                self.runner.correct(record, mode)

        fallback = self.services.pack.router.fallback
        self.app.push_screen(CorrectScreen(record, self.mode_names(), fallback), callback=chosen)

    def action_accept_hand_off(self) -> None:
        """Count the last turn's hand-off as a correction: the router learns the mode the
        model handed it to (nothing is answered again)."""
        self.runner.keep_hand_off(self.records[-1] if self.records else None)

    def action_why(self) -> None:
        """The inspector for the last turn."""
        if not self.records:
            self.status.error("No turn yet: send a message first.")
            return
        self._inspect_record(self.records[-1])

    @on(RoutePanel.InspectRequested)
    def _inspect(self, event: RoutePanel.InspectRequested) -> None:
        event.stop()
        self._inspect_record(event.record)

    def _inspect_record(self, record: TurnTranscript) -> None:
        from modes_tui.tui.inspector import InspectorScreen

        profile = self.services.pack.get(record.mode) if self.services and record.mode else None
        policy = profile.policy if profile is not None else None
        self.app.push_screen(InspectorScreen(record, tz=self.tz, policy=policy))

    def action_copy_answer(self) -> None:
        """Copy the last answer to the clipboard (OSC 52, through the terminal)."""
        copy_answer(self)

    def palette_actions(self) -> list[tuple[str, str, Callable[[], object]]]:
        """Every action of the conversation for the command palette: (title, help, run)."""
        from modes_tui.tui.palette import conversation_actions

        return conversation_actions(self, [*self.BINDINGS, *self.app.BINDINGS])

    # ------------------------------------------------------------------ commands

    async def run_command(self, command: Command) -> None:
        """Do what a slash command says (its handler in `command_handlers`)."""
        await self.commands.run(command)

    def command_handlers(self) -> dict[str, Handler[object]]:
        """The conversation's command -> handler (every app command of
        `frontend.commands.COMMANDS`)."""
        return self.commands.handlers()

    def run_command_later(self, name: str) -> None:
        """Run `/name` in a worker (the palette's entries and f1)."""
        from modes_tui.frontend.commands import Command

        self.app.run_worker(self.run_command(Command(name)), group="command", exit_on_error=False)

    @on(SessionLoaded)
    def _session_loaded(self, message: SessionLoaded) -> None:
        message.stop()
        from modes_tui.tui.replay import ReplayScreen

        session, catalog = message.session, self.services.sessions if self.services else None
        if catalog is not None:
            reroute = partial(catalog.reroute, session.id)
            self.app.push_screen(ReplayScreen(session, tz=self.tz, reroute=reroute))
        self.status.idle()
