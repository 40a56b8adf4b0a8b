"""The modes-tui app: chat on the left, routing decisions on the right, a prompt below.

It translates the engine's events into widgets and the user's keys into control-file
writes; it owns no routing or model logic. `build_app` is the one factory the CLI, the
tests, the screenshot script and the benchmarks use. Importing this module loads no
model library: the engine is built in a worker thread after the first paint.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from datetime import tzinfo
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TypeVar

from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingsMap
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import TextArea
from textual.worker import Worker, WorkerState

from modes_tui.core.control import AUTO, OFF, ControlReading
from modes_tui.core.errors import ModesError
from modes_tui.core.events import (
    RequestBuilt,
    RouteDecided,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    TurnCancelled,
    TurnCorrected,
    TurnEvent,
    TurnFailed,
    TurnFinished,
)
from modes_tui.core.terminal_text import safe_events, terminal_safe
from modes_tui.core.transcript import TurnTranscript
from modes_tui.tui.chat import ChatLog, RetryRequested
from modes_tui.tui.commands import (
    COMMANDS,
    UNDO,
    Command,
    CommandError,
    is_command,
    message_text,
    mode_settings,
    parse_command,
)
from modes_tui.tui.footer import KeysFooter
from modes_tui.tui.keys import MODE_BINDING_PREFIX, ModeKey, mode_keys, next_setting
from modes_tui.tui.panel import RoutePanel
from modes_tui.tui.pending import PendingMessages
from modes_tui.tui.prompt import CommandSuggester, PromptInput
from modes_tui.tui.render import plural, tool_outcome
from modes_tui.tui.services import AppServices, ReplayedSession, TurnEngine
from modes_tui.tui.startup import StartupProblem
from modes_tui.tui.status import ModeHeader, StatusLine, model_label, setting_label

if TYPE_CHECKING:
    from textual.command import Provider

    from modes_tui.tui.turn_view import TurnView

W = TypeVar("W", bound=Widget)


def mode_commands() -> type[Provider]:
    """The palette's "Force mode: X" entries (textual.command loads only when it opens)."""
    from modes_tui.tui.palette import ModeCommands

    return ModeCommands


def action_commands() -> type[Provider]:
    """The palette's entry for every action of the chat screen."""
    from modes_tui.tui.palette import ActionCommands

    return ActionCommands


NARROW = 100
"""Below this many columns the route panel leaves the layout (ctrl+b shows it over the chat)."""
OVERLAY_WIDTH = 52
"""Columns of the route panel shown over the chat on a narrow terminal."""


class ModesApp(App[None]):
    """The terminal chat whose every turn is routed to a mode, in plain sight."""

    CSS_PATH = "app.tcss"
    TITLE = "modes-tui"
    COMMANDS: ClassVar = App.COMMANDS | {mode_commands, action_commands}
    BINDINGS: ClassVar = [
        Binding("ctrl+b", "toggle_panel", "Routes", id="panel.toggle"),
        Binding("shift+tab", "cycle_mode", "Cycle mode", id="mode.cycle", priority=True),
        Binding("ctrl+g", "set_setting('auto')", "Auto", id="mode.auto"),
        Binding("ctrl+o", "set_setting('off')", "Off", id="mode.off", show=False),
        Binding("escape", "cancel_turn", "Cancel", id="turn.cancel"),
        Binding("ctrl+r", "retry", "Retry", id="turn.retry"),
        Binding("ctrl+e", "correct", "Wrong mode?", id="turn.correct", priority=True),
        Binding("ctrl+t", "why", "Why?", id="inspector.last"),
        Binding("ctrl+l", "copy_answer", "Copy answer", id="answer.copy", show=False),
        Binding("f1", "help", "Help", id="app.help"),
    ]

    def __init__(
        self,
        services: AppServices | None = None,
        *,
        prepare: Callable[[], AppServices] | None = None,
        tz: tzinfo | None = None,
    ) -> None:
        super().__init__()
        if services is None and prepare is None:
            raise ValueError("give the app its services, or a function that prepares them")
        self._services: AppServices | None = None
        self._prepare = prepare
        self.tz = tz
        """Time zone for times on screen (None: local); tests fix it."""
        self.mode_keys: list[ModeKey] = []
        self.engine: TurnEngine | None = None
        self.records: list[TurnTranscript] = []
        self.reading = ControlReading(AUTO)
        self._turn_running_flag = False
        self._engine_error: str | None = None
        self._startup_problem: StartupProblem | None = None
        self._engine_settled: asyncio.Event | None = None
        self._widgets: dict[str, Widget] = {}
        self._session_ids: list[str] = []
        self._editing: TurnTranscript | None = None
        """The turn whose message is back in the prompt to be edited and resent."""
        self._panel_wanted: bool | None = None
        """The user's choice for the route panel (None: by the terminal's width)."""
        self._theme_applied: str | None = None
        if services is not None:
            self._configure(services)

    @property
    def services(self) -> AppServices:
        """Everything the app was given (raises while it is still being prepared)."""
        if self._services is None:
            raise ModesError("modes-tui is still starting; try again in a moment")
        return self._services

    @property
    def started(self) -> bool:
        """The services are in place (the pack, the control file, the engine factory)."""
        return self._services is not None

    def _configure(self, services: AppServices) -> None:
        """Take the services: mode keys, the user's keymap, the theme."""
        self._services = services
        self.mode_keys = mode_keys(services.pack.available())
        # Mode keys depend on the pack, so they join the class bindings per instance.
        self._bindings = BindingsMap.merge(
            [
                self._bindings,
                BindingsMap(
                    Binding(
                        mk.key,
                        f"set_setting({mk.mode!r})",
                        mk.mode,
                        id=mk.binding_id,
                        tooltip=f"Force mode {mk.mode}",
                    )
                    for mk in self.mode_keys
                    if mk.key
                ),
            ]
        )
        if services.keymap:
            self.set_keymap(normal_keymap(services.keymap, [mk.mode for mk in self.mode_keys]))
        if services.theme:
            self.theme = services.theme
        self._theme_applied = self.theme

    @property
    def _turn_running(self) -> bool:
        return self._turn_running_flag

    @_turn_running.setter
    def _turn_running(self, running: bool) -> None:
        self._turn_running_flag = running
        self.refresh_bindings()

    @property
    def turn_running(self) -> bool:
        """A turn is running (or waiting for the engine)."""
        return self._turn_running_flag

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        services = self._services
        yield ModeHeader(
            model=services.model if services else "…",
            pack=services.pack.name if services else "…",
            id="header",
        )
        with Horizontal(id="main"):
            yield ChatLog(id="chat", tz=self.tz)
            yield RoutePanel(id="routes", tz=self.tz)
        yield StatusLine(id="status")
        yield PendingMessages(id="pending")
        yield PromptInput(
            placeholder="Ask anything · Enter sends · shift+enter or ctrl+j: new line",
            suggester=CommandSuggester(self.settings, self.session_ids),
            id="prompt",
        )
        yield KeysFooter()

    def _widget(self, selector: str, kind: type[W]) -> W:
        # Found on the chat screen even while the inspector or a dialog is on top.
        found = self._widgets.get(selector)
        if found is None:
            found = self.screen_stack[0].query_one(selector, kind)
            self._widgets[selector] = found
        assert isinstance(found, kind)
        return found

    @property
    def chat(self) -> ChatLog:
        """The chat log."""
        return self._widget("#chat", ChatLog)

    @property
    def panel(self) -> RoutePanel:
        """The route panel."""
        return self._widget("#routes", RoutePanel)

    @property
    def header(self) -> ModeHeader:
        """The header line."""
        return self._widget("#header", ModeHeader)

    @property
    def status(self) -> StatusLine:
        """The status line."""
        return self._widget("#status", StatusLine)

    @property
    def prompt(self) -> PromptInput:
        """The prompt."""
        return self._widget("#prompt", PromptInput)

    @property
    def pending(self) -> PendingMessages:
        """Messages sent while a turn runs, waiting their turn."""
        return self._widget("#pending", PendingMessages)

    def on_mount(self) -> None:
        self._engine_settled = asyncio.Event()
        self.prompt.focus()
        self.prompt.on_empty_up = self._recall
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self._fit_to_width()
        if self.started:
            self._start()
        else:
            self.status.busy("Starting…")
            # The pack, the settings and the stores load after the first frame is drawn.
            self.call_after_refresh(self.prepare_services)

    def _start(self) -> None:
        """The services are in: show them, then start the slow work after the next frame."""
        services = self.services
        self.header.show(model=services.model, pack=services.pack.name)
        self.show_reading(services.control.read())
        self.refresh_bindings()
        self.status.progress = services.load_progress
        self.status.busy(f"Loading {model_label(services.model)}…")
        for warning in services.warnings:
            self.notify(warning, title="Settings", severity="warning", timeout=10)
        if services.resumed is not None:  # --resume: its turns, before the engine is in
            from modes_tui.tui import session_actions

            resumed = services.resumed
            self.call_later(session_actions.show, self, resumed, f"Resumed session `{resumed.id}`")
        self.call_after_refresh(self._after_first_paint)

    def _after_first_paint(self) -> None:
        self.build_engine()
        self.watch_control()
        if self.services.preload is not None:
            self.preload()

    # ------------------------------------------------------------------ workers

    @work(thread=True, exclusive=True, exit_on_error=False, group="prepare", name="start up")
    def prepare_services(self) -> AppServices:
        """Read the settings, load the pack, open the stores (in a thread)."""
        assert self._prepare is not None
        return self._prepare()

    @work(thread=True, exclusive=True, exit_on_error=False, group="engine", name="build engine")
    def build_engine(self) -> TurnEngine:
        """Build the engine (may import litellm, load the model or the encoder)."""
        from modes_tui.tui.confirm import DialogConfirmer

        return self.services.build_engine(DialogConfirmer(self))

    @work(thread=True, exclusive=True, exit_on_error=False, group="preload", name="preload")
    def preload(self) -> None:
        """Import slow libraries in the background."""
        if self.services.preload is not None:
            self.services.preload()

    @work(exclusive=True, exit_on_error=False, group="control", name="watch control file")
    async def watch_control(self) -> None:
        """Show changes of the control file made by anyone, within a second."""
        async for reading in self.services.control.watch():
            self.show_reading(reading)

    @work(exclusive=True, exit_on_error=False, group="turn", name="turn")
    async def run_turn(self, text: str) -> None:
        """Route and answer one message, showing every event."""
        self._turn_running = True
        number = (self.records[-1].number if self.records else 0) + 1
        record = TurnTranscript(number, terminal_safe(text))  # a paste may hold escapes
        self.records.append(record)
        view = await self.chat.start_turn(record)
        try:
            engine = await self._wait_for_engine(record, view)
            if engine is None:
                return
            self.status.busy("Routing…")
            await self._play(record, view, engine.run_turn(text))
        finally:
            self._turn_running = False

    @work(exclusive=True, exit_on_error=False, group="turn", name="retry")
    async def retry_turn(self, record: TurnTranscript) -> None:
        """Run the last turn again."""
        if self.engine is None:
            return
        self._turn_running = True
        try:
            view = self.chat.view(record.number)
            record.restart()
            if view is not None:
                await view.restart()
            self.status.busy("Retrying: routing…")
            await self._play(record, view, self.engine.retry())
        finally:
            self._turn_running = False

    @work(thread=True, exclusive=True, exit_on_error=False, group="replay", name="load session")
    def load_replay(self, session_id: str) -> ReplayedSession:
        """Load a recorded session (and re-route it) off the event loop."""
        sessions = self.services.sessions
        if sessions is None:
            raise ModesError("sessions are not available in this build")
        return sessions.load(session_id)

    async def _wait_for_engine(self, record: TurnTranscript, view: TurnView) -> TurnEngine | None:
        settled = self._engine_settled
        if settled is not None and not settled.is_set():
            what = model_label(self.services.model) if self.started else "modes-tui"
            self.status.busy(f"Loading {what}; your message waits…")
            await settled.wait()
        if self.engine is None:
            failure = self._startup_failure()
            record.apply(failure)
            await view.apply(failure)
            return None
        return self.engine

    async def _play(
        self, record: TurnTranscript, view: TurnView | None, events: AsyncIterator[TurnEvent]
    ) -> None:
        async for event in safe_events(events):  # model text must not drive the terminal
            record.apply(event)
            if view is not None:
                await view.apply(event)
            self._reflect(record, event)

    def _reflect(self, record: TurnTranscript, event: TurnEvent) -> None:
        """Panel, header and status line for one event."""
        if isinstance(event, RouteDecided):
            self.panel.decided(record)
            self.header.show(active_mode=record.mode or "no mode")
            profile = self.services.pack.get(record.mode) if record.mode else None
            if profile is not None and profile.mcp:  # a server's first start takes seconds
                servers = ", ".join(profile.mcp)
                self.status.busy(f"Routed to {record.mode}; getting tools from MCP {servers}…")
            else:
                self.status.busy(f"Routed to {record.mode or 'no mode'}; asking the model…")
        elif isinstance(event, RequestBuilt):
            self.panel.refresh_record(record)
            self.status.busy(f"Waiting for {model_label(event.request.model)}…")
        elif isinstance(event, TextDelta):
            if self.status.activity and not self.status.activity.startswith("Answering"):
                self.status.busy(f"Answering in {record.mode or 'no mode'}…")
        elif isinstance(event, ToolCallRequested):
            what = "Asking before running" if event.needs_confirmation else "Running"
            self.status.busy(f"{what} {event.call.name}…")
        elif isinstance(event, ToolCallFinished):
            activity = record.tool(event.call.id)
            outcome = tool_outcome(activity) if activity is not None else event.outcome
            self.status.busy(f"{event.call.name}: {outcome}; asking the model…")
        elif isinstance(event, TurnFinished):
            self.panel.refresh_record(record)
            self.status.idle()
            self._show_cost()
        elif isinstance(event, TurnCancelled):
            self.panel.refresh_record(record)
            self.status.idle("Cancelled; the partial answer is kept.")
            self._show_cost()
        elif isinstance(event, TurnCorrected):
            self.panel.refresh_record(record)
            self._corrected(event)
        elif isinstance(event, TurnFailed):
            self.panel.refresh_record(record)
            self._show_cost()
            retry = " · ctrl+r or the Retry button tries again" if event.retryable else ""
            self.status.error(f"The turn failed: {event.error}{retry}")

    def _show_cost(self) -> None:
        """The session's cost in the header, once a turn had a known, non-zero price."""
        ledger = getattr(getattr(self.engine, "costs", None), "ledger", None)
        if ledger is not None and (ledger.total or ledger.budget is not None):
            self.header.show(cost=ledger.header())

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place that handles workers ending: success of the engine, every error."""
        worker = event.worker
        if not self.is_running:
            return  # shutting down: workers end because the screens are going away
        if event.state == WorkerState.SUCCESS and worker.group == "prepare":
            if isinstance(worker.result, AppServices):
                self._configure(worker.result)
                self._start()
        elif event.state == WorkerState.SUCCESS and worker.group == "engine":
            self.engine = worker.result
            self.status.progress = None
            self._settle_engine()
            if self.services.tune_gc:
                tune_gc()
            if not self._turn_running:
                self.status.idle()
        elif worker.group == "turn" and event.state in (
            WorkerState.SUCCESS,
            WorkerState.ERROR,
            WorkerState.CANCELLED,
        ):
            self.call_later(self._run_next)
        if event.state == WorkerState.SUCCESS and worker.group == "replay":
            from modes_tui.tui.replay import ReplayScreen

            session = worker.result
            if isinstance(session, ReplayedSession) and self.services.sessions is not None:
                catalog = self.services.sessions
                self.push_screen(
                    ReplayScreen(session, tz=self.tz, reroute=partial(catalog.reroute, session.id))
                )
            self.status.idle()
        elif event.state == WorkerState.ERROR:
            error = worker.error
            message = str(error) if isinstance(error, ModesError) else repr(error)
            if worker.group == "prepare":
                self._engine_error = message
                self._startup_problem = StartupProblem.of(error)
                self._settle_engine()
                self.status.error(f"modes-tui could not start: {self._startup_problem.hint}")
                self.call_later(self.chat.add_plain_note, self._startup_problem.note())
            elif worker.group == "engine":
                self.status.progress = None
                self._engine_error = message
                self._settle_engine()
                self.status.error(f"The model could not start: {message}")
            elif worker.group == "turn":
                self._turn_failed_unexpectedly(message)
            elif worker.group == "preload":
                self.log.warning(f"preload failed: {message}")
            else:
                self.status.error(f"{worker.name} failed: {message}")

    def _startup_failure(self) -> TurnFailed:
        """Why a message cannot run: the setup or the model failed, with the fix."""
        problem = self._startup_problem
        if problem is not None:
            return TurnFailed(
                error=f"modes-tui could not start: {problem.headline}",
                kind="startup",
                hint=problem.hint,
                retryable=False,
            )
        return TurnFailed(
            error=f"the model could not start: {self._engine_error}",
            kind="startup",
            hint="Check the model settings (modes-tui --help), then restart.",
            retryable=False,
        )

    def _settle_engine(self) -> None:
        if self._engine_settled is not None:
            self._engine_settled.set()

    def _turn_failed_unexpectedly(self, message: str) -> None:
        if not self.records:
            self.status.error(message)
            return
        record = self.records[-1]
        failure = TurnFailed(
            error=message,
            kind="app",
            hint="This is a bug in modes-tui; the conversation is kept. Retry may work.",
            retryable=True,
        )
        record.apply(failure)
        view = self.chat.view(record.number)
        if view is not None:
            self.call_later(view.apply, failure)
        self._reflect(record, failure)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Cancel shows only while a turn runs, retry only after a failed last turn."""
        chat_keys = (
            "set_setting",
            "cycle_mode",
            "toggle_panel",
            "why",
            "cancel_turn",
            "copy_answer",
            "correct",
        )
        if action in chat_keys and len(self.screen_stack) > 1:
            return False  # keys of the chat screen; the inspector and replay have their own
        if action == "cancel_turn":
            return self._turn_running or self._editing is not None
        if action == "retry":
            last = self.records[-1] if self.records else None
            return bool(last and last.failure and last.failure.retryable and not self._turn_running)
        return True

    # ------------------------------------------------------------------ settings

    def mode_names(self) -> list[str]:
        """The modes that can be forced now."""
        if not self.started:
            return []
        return [p.name for p in self.services.pack.available()]

    def settings(self) -> list[str]:
        """What `/mode` accepts."""
        return mode_settings(self.mode_names())

    def session_ids(self) -> list[str]:
        """Ids `/replay` completes (cached after `/sessions`)."""
        return list(self._session_ids)

    def show_reading(self, reading: ControlReading) -> None:
        """Show the control setting in the header and the panel."""
        self.reading = reading
        self.header.show(reading)
        self.panel.show_setting(setting_label(reading.mode), reading.warning)

    def set_setting(self, setting: str) -> bool:
        """Write the control file (keys, /mode, the palette); False when it was refused."""
        if not self.started:
            self.status.error("modes-tui is still starting; try again in a moment.")
            return False
        try:
            self.services.control.write(setting)
        except ModesError as error:
            self.status.error(str(error))
            return False
        self.show_reading(self.services.control.read())
        self.status.idle(f"Setting: {setting_label(setting)}")
        return True

    def action_set_setting(self, setting: str) -> None:
        """Force a mode, or auto/off."""
        self.set_setting(setting)

    def action_cycle_mode(self) -> None:
        """auto → each mode → auto."""
        self.set_setting(next_setting(self.reading.mode, self.mode_names()))

    def action_toggle_panel(self) -> None:
        """Show or hide the route panel (on a narrow terminal, over the chat)."""
        self._panel_wanted = not self.panel.display
        self._fit_to_width()

    def on_resize(self, event: events.Resize) -> None:
        self._fit_to_width(event.size.width)

    def _fit_to_width(self, columns: int | None = None) -> None:
        """Below NARROW columns the panel leaves the layout: each turn keeps its one-line
        route strip, and ctrl+b shows the whole panel over the chat."""
        columns = columns if columns is not None else self.size.width
        narrow = columns < NARROW
        was_narrow = self.screen_stack[0].has_class("-narrow")
        if narrow != was_narrow:
            self._panel_wanted = None  # crossing the line: the width decides again
        panel = self.panel
        shown = self._panel_wanted if self._panel_wanted is not None else not narrow
        if panel.display != shown:
            panel.display = shown
        if not narrow and not was_narrow:
            return  # the usual wide layout: nothing to restyle (keeps the first frame cheap)
        self.screen_stack[0].set_class(narrow, "-narrow")
        panel.set_class(narrow, "-overlay")
        if narrow:
            # Absolute: out of the row (the chat keeps the whole width), placed from the
            # row's left edge, so the offset puts it against the right one.
            width = min(OVERLAY_WIDTH, max(20, columns - 4))
            panel.styles.width = width
            panel.styles.offset = (columns - width, 0)
        else:
            panel.styles.width = None
            panel.styles.offset = (0, 0)

    def action_cancel_turn(self) -> None:
        """Stop the running turn (the partial answer stays), or stop editing a message."""
        if self._editing is not None and not self._turn_running:
            self._stop_editing()
            self.prompt.value = ""
            self.status.idle("Edit dropped; the turn stays as it was.")
            return
        if self._turn_running and self.engine is not None:
            self.engine.cancel()
            self.status.busy("Cancelling…")

    def action_retry(self) -> None:
        """Retry the last turn when it failed."""
        if not self.records or self._turn_running:
            return
        record = self.records[-1]
        if record.failure is None or not record.failure.retryable:
            self.status.error("Only a failed last turn can be retried.")
            return
        self.retry_turn(record)

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

    def _theme_changed(self, theme: object) -> None:
        """Keep a theme picked in the palette for the next start (the `theme` setting)."""
        name = self.theme
        if name == self._theme_applied or not self.started:
            return
        self._theme_applied = name
        save = self.services.save_theme
        if save is None:
            return
        try:
            where = save(name)
        except (ModesError, OSError) as error:
            self.status.error(f"Theme {name} is on, but could not be saved: {error}")
            return
        self.status.idle(f"Theme {name} saved to {where}")

    def palette_actions(self) -> list[tuple[str, str, Callable[[], object]]]:
        """Every action of the chat screen for the command palette: (title, help, run)."""
        keys = {b.action: b.key for _, b in self._bindings}

        def key(action: str) -> str:
            found = keys.get(action)
            return f" ({found})" if found else ""

        return [
            ("Show or hide the route panel" + key("toggle_panel"), "", self.action_toggle_panel),
            ("Why? The inspector for the last turn" + key("why"), "", self.action_why),
            ("Copy the last answer" + key("copy_answer"), "", self.action_copy_answer),
            ("Retry the failed turn" + key("retry"), "", self.action_retry),
            ("Cancel the running turn (esc)", "", self.action_cancel_turn),
            ("Cycle modes" + key("cycle_mode"), "auto, then each mode", self.action_cycle_mode),
            ("List the modes (/modes)", "", partial(self._command, "/modes")),
            ("Recorded sessions (/sessions)", "", partial(self._command, "/sessions")),
            ("Export the conversation (/export)", "", partial(self._command, "/export")),
            ("Clear the conversation (/clear)", "", partial(self._command, "/clear")),
            ("Help: keys and commands" + key("help"), "", partial(self._command, "/help")),
            ("Quit (/quit, ctrl+q)", "", self.exit),
        ]

    def _command(self, name: str) -> None:
        self.run_worker(self.run_command(Command(name)), group="command", exit_on_error=False)

    async def action_help(self) -> None:
        """Keys and commands."""
        await self.chat.add_note(self.help_text())

    # ------------------------------------------------------------------ input

    @on(PromptInput.Submitted, "#prompt")
    async def _submitted(self, event: PromptInput.Submitted) -> None:
        text = event.value
        if not text.strip():
            return
        if is_command(text):
            try:
                command = parse_command(text, self.settings())
            except CommandError as error:
                self.status.error(str(error))  # the text stays in the prompt to fix
                return
            self.prompt.remember(text)
            self.prompt.value = ""
            self._clear_error()
            await self.run_command(command)
            return
        self.prompt.remember(text)
        self.prompt.value = ""
        editing, self._editing = self._editing, None
        if editing is not None and not self._turn_running and not len(self.pending):
            self.resend_turn(editing, message_text(text))
        elif self._turn_running or len(self.pending):
            await self.pending.add(message_text(text))
            waiting = len(self.pending)
            self.notify_waiting(waiting)
        else:
            self._clear_error()
            self.run_turn(message_text(text))

    def _clear_error(self) -> None:
        """An error stays on screen until the user sends something else (typing does not
        clear it: a mistyped command keeps its hint in view while it is fixed)."""
        if self.status.has_class("-error"):
            self.status.idle()

    def notify_waiting(self, waiting: int) -> None:
        """Say that sent messages wait for the running turn (the rows show them)."""
        self.status.busy(
            f"{plural(waiting, 'message')} waiting · they run in order when this turn ends"
        )

    @on(TextArea.Changed, "#prompt")
    def _typing(self) -> None:
        if self._editing is not None and not self.prompt.value:
            self._stop_editing()
            self.status.idle()

    def _recall(self) -> bool:
        """Up in an empty prompt: take back the newest waiting message, else edit the last
        message (resending it replaces that turn). False lets up walk the history."""
        if len(self.pending):
            self.call_later(self._take_back_waiting)
            return True
        last = self.records[-1] if self.records else None
        if last is None or self._turn_running or last.superseded_by is not None:
            return False
        if self.chat.view(last.number) is None:
            return False  # cleared away (/clear): there is no turn on screen to replace
        self._editing = last
        self.prompt.recall(last.user_text)
        self.status.idle(f"Editing turn {last.number} · Enter replaces it · esc keeps it")
        return True

    async def _take_back_waiting(self) -> None:
        text = await self.pending.take_last()
        if text is not None:
            self.prompt.value = text
            self.status.idle("Took a waiting message back: Enter queues it again.")

    @on(PendingMessages.EditRequested)
    def _edit_waiting(self, event: PendingMessages.EditRequested) -> None:
        event.stop()
        draft = self.prompt.value
        # Nothing typed is lost: a draft already in the prompt stays, after the message.
        self.prompt.value = event.text + (f"\n{draft}" if draft.strip() else "")
        self.prompt.focus()
        self.status.idle("The waiting message is back in the prompt: Enter queues it again.")

    def _stop_editing(self) -> None:
        self._editing = None

    async def _run_next(self) -> None:
        """A turn ended: start the first waiting message, if any."""
        if self._turn_running or not len(self.pending):
            return
        text = await self.pending.take_first()
        if text is not None:
            self.run_turn(text)

    @work(exclusive=True, exit_on_error=False, group="turn", name="resend")
    async def resend_turn(self, old: TurnTranscript, text: str) -> None:
        """Run an edited last message in place of its turn."""
        engine = self.engine
        if engine is None:
            self.status.error("The model is not ready yet; your edit is in the prompt history.")
            return
        self._turn_running = True
        try:
            record = TurnTranscript(len(self.records) + 1, text)
            old.superseded_by = record.number
            self.records.append(record)
            view = self.chat.view(old.number)
            if view is not None:
                await view.remove()
            self.panel.refresh_record(old)
            new_view = await self.chat.start_turn(record)
            self.status.busy(f"Resending as turn {record.number}: routing…")
            await self._play(record, new_view, engine.resend(text))
        finally:
            self._turn_running = False

    async def run_command(self, command: Command) -> None:
        """Do what a slash command says."""
        name = command.name
        if not self.started and name not in ("/help", "/clear", "/quit"):
            self.status.error("modes-tui is still starting; try again in a moment.")
            return
        if name == "/mode":
            self.set_setting(command.argument)
        elif name == "/modes":
            await self.chat.add_note(self.modes_text())
        elif name == "/clear":
            if self._turn_running:
                self.status.error("A turn is running: Esc cancels it first.")
                return
            if self.engine is not None:
                self.engine.clear()
            await self.chat.clear()
            self.status.idle("Conversation cleared; the route panel keeps the session's decisions.")
        elif name == "/sessions":
            self.open_sessions()
        elif name == "/replay":
            self.status.busy(f"Loading session {command.argument}…")
            self.load_replay(command.argument)
        elif name in ("/resume", "/fork", "/rename"):
            self.session_command(command)
        elif name == "/export":
            await self.export()
        elif name == "/why":
            self.action_why()
        elif name == "/wrong":
            if command.argument == UNDO:
                self.undo_correction()
            elif command.argument:
                self.correct(self.records[-1] if self.records else None, command.argument)
            else:
                self.action_correct()
        elif name == "/help":
            await self.action_help()
        elif name == "/copy":
            self.action_copy_answer()
        elif name == "/quit":
            self.exit()

    def session_command(self, command: Command) -> None:
        """`/resume`, `/fork`, `/rename` (see `tui.session_actions`), one at a time."""
        from modes_tui.tui import session_actions

        argument = command.argument
        if command.name == "/resume":
            work = session_actions.resume(self, argument)
        elif command.name == "/fork":
            work = session_actions.fork(self, int(argument) if argument else None)
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
                path = write_markdown(self.records, Path.cwd() / "modes-tui-conversation.md")
        except (ModesError, OSError) as error:
            self.status.error(f"Export failed: {error}")
            return
        await self.chat.add_note(f"Exported the conversation to `{path}`.")
        self.status.idle(f"Exported to {path}")

    # ------------------------------------------------------------------ corrections

    def action_correct(self) -> None:
        """The picker for the last turn, or for the decision selected in the route panel."""
        record = self.panel.highlighted_record() or (self.records[-1] if self.records else None)
        if not self._can_correct(record):
            return
        assert record is not None
        from modes_tui.tui.correct import CorrectScreen

        def chosen(mode: str | None) -> None:
            if mode:
                self.correct(record, mode)

        self.push_screen(CorrectScreen(record, self.mode_names()), callback=chosen)

    def _can_correct(self, record: TurnTranscript | None) -> bool:
        if record is None:
            self.status.error("No turn to correct yet: send a message first.")
        elif self._turn_running:
            self.status.error("A turn is running: wait for it, or Esc cancels it; then correct.")
        elif self.engine is None:
            self.status.error("modes-tui is still starting; try again in a moment.")
        else:
            return True
        return False

    def correct(self, record: TurnTranscript | None, mode: str) -> None:
        """Say `record`'s turn belonged to `mode` (the last turn is answered again in it)."""
        if not self._can_correct(record):
            return
        assert record is not None and self.engine is not None
        try:
            events = self.engine.correct(mode, turn=record.number)
        except ModesError as error:
            self.status.error(str(error))
            return
        self._turn_running = True  # at once: a second correction must wait for this one
        self.status.busy(f"Correcting turn {record.number} to {mode}…")
        self.correct_turn(record, events)

    @work(exclusive=True, exit_on_error=False, group="turn", name="correct")
    async def correct_turn(self, record: TurnTranscript, events: AsyncIterator[TurnEvent]) -> None:
        """Show a correction: the folded first answer, then the re-run."""
        try:
            await self._play(record, self.chat.view(record.number), events)
        finally:
            self._turn_running = False

    def _corrected(self, event: TurnCorrected) -> None:
        if event.note:
            self.notify(event.note, title="Correction", severity="warning", timeout=8)
        if event.rerun:
            self.status.busy(
                f"Turn {event.turn}: answered in {event.answered_mode or 'no mode'}, "
                f"corrected to {event.corrected_mode}; answering again…"
            )
        elif event.correction is not None:
            self.status.idle(
                f"Turn {event.turn} recorded as {event.corrected_mode} for the router to learn "
                "· /wrong undo forgets it"
            )

    def undo_correction(self) -> None:
        """Forget the latest correction of this session (`/wrong undo`); the answers stay."""
        if self.engine is None:
            self.status.error("modes-tui is still starting; try again in a moment.")
            return
        try:
            correction = self.engine.undo_correction()
        except ModesError as error:
            self.status.error(str(error))
            return
        for record in self.records:
            if any(c.correction == correction for c in record.corrections):
                record.undone.add(correction.id)
                self.panel.refresh_record(record)
                view = self.chat.view(record.number)
                if view is not None:
                    view.show_route()
        self.status.idle(
            f"Forgot the correction of turn {correction.turn} "
            f"({correction.routed_mode or 'no mode'} → {correction.corrected_mode}); "
            "the answers stay."
        )

    @on(RetryRequested)
    def _retry_pressed(self, event: RetryRequested) -> None:
        event.stop()
        if self.records and event.number != self.records[-1].number:
            self.status.error("Only the last turn can be retried.")
            return
        self.action_retry()

    @on(RoutePanel.InspectRequested)
    def _inspect(self, event: RoutePanel.InspectRequested) -> None:
        from modes_tui.tui.inspector import InspectorScreen

        event.stop()
        self.push_screen(InspectorScreen(event.record, tz=self.tz))

    # ------------------------------------------------------------------ texts

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
            *[f"- `{spec.usage}`: {spec.help}" for spec in COMMANDS],
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
        setting = setting_label(self.reading.mode)
        return "\n".join(
            [
                f"**Modes of pack `{self.services.pack.name}`** · setting: {setting}",
                "",
                *rows,
            ]
        )


def write_markdown(records: list[TurnTranscript], path: Path) -> Path:
    """The conversation as Markdown (used when no session store is wired in)."""
    parts = ["# modes-tui conversation", ""]
    for record in records:
        parts += [f"## Turn {record.number}", "", f"**You:** {record.user_text}", ""]
        mode = record.mode or "no mode"
        parts += [f"**{mode}:**", "", record.answer or "_(no answer)_", ""]
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def tune_gc() -> None:
    """Keep the garbage collector from stalling the screen while answers stream.

    Everything loaded so far (textual, litellm, the model, the pack) lives as long as the
    app, so it is frozen out of full collections; young collections run less often, since
    streaming makes many short-lived objects and each full pass over a large heap stalls
    the event loop for 50-150 ms.
    """
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


def normal_keymap(keymap: Mapping[str, str], modes: Sequence[str]) -> dict[str, str]:
    """The user's keymap with short names expanded: `auto`, `off`, `cycle` and a bare mode
    name mean `mode.auto`, `mode.off`, `mode.cycle` and `mode.NAME`."""
    short = {"auto", "off", "cycle", *modes}
    return {
        (f"{MODE_BINDING_PREFIX}{name}" if name in short else name): keys
        for name, keys in keymap.items()
    }


def build_app(
    services: AppServices | None = None,
    *,
    prepare: Callable[[], AppServices] | None = None,
    tz: tzinfo | None = None,
) -> ModesApp:
    """The one way to make the app: the CLI, tests, screenshots and benchmarks call this.

    Give `services`, or `prepare` to have them built in a thread after the first frame
    (the CLI does, so settings, the pack and the stores never delay the first paint).
    """
    return ModesApp(services, prepare=prepare, tz=tz)


__all__ = ["OFF", "ModesApp", "build_app"]
