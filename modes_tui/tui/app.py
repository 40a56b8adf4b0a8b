"""The modes-tui app: chat on the left, routing decisions on the right, a prompt below.

It translates the engine's events into widgets and the user's keys into control-file
writes; it owns no routing or model logic. `build_app` is the one factory the CLI, the
tests, the screenshot script and the benchmarks use. Importing this module loads no
model library: the engine is built in a worker thread after the first paint.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import tzinfo
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.worker import Worker, WorkerState

from modes_tui.core.control import OFF
from modes_tui.core.errors import ModesError
from modes_tui.core.terminal_text import terminal_safe
from modes_tui.tui.app_input import InputApp
from modes_tui.tui.app_turns import retryable
from modes_tui.tui.chat import ChatLog
from modes_tui.tui.footer import KeysFooter
from modes_tui.tui.gc_tuning import freeze_what_is_loaded
from modes_tui.tui.keys import next_setting
from modes_tui.tui.panel import RoutePanel
from modes_tui.tui.pending import PendingMessages
from modes_tui.tui.prompt import CommandSuggester, PromptInput
from modes_tui.tui.status import NOT_KNOWN, ModeHeader, StatusLine, model_label

if TYPE_CHECKING:
    from textual.command import Provider

    from modes_tui.tui.services import AppServices, TurnEngine


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


class ModesApp(InputApp):
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
        Binding("escape", "focus_prompt", "Prompt", id="prompt.focus", show=False),
        Binding("ctrl+r", "retry", "Retry", id="turn.retry"),
        Binding("ctrl+e", "correct", "Wrong mode?", id="turn.correct", priority=True),
        Binding("ctrl+t", "why", "Why?", id="inspector.last"),
        Binding("ctrl+l", "copy_answer", "Copy answer", id="answer.copy", show=False),
        Binding("f1", "help", "Help", id="app.help"),
    ]

    def compose(self) -> ComposeResult:
        services = self._services
        yield ModeHeader(
            model=services.model if services else NOT_KNOWN,
            pack=services.pack.name if services else NOT_KNOWN,
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

    def on_mount(self) -> None:
        self._engine_settled = asyncio.Event()
        self.prompt.focus()
        self.prompt.on_empty_up = self._recall
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.screen_change_signal.subscribe(self, self._screen_changed)
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
            shown = terminal_safe(warning)  # it may quote a value from config.yaml
            self.notify(shown, title="Settings", severity="warning", timeout=10, markup=False)
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

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place that handles workers ending: success of the engine, every error."""
        worker = event.worker
        if not self.is_running:
            return  # shutting down: workers end because the screens are going away
        # The services and the start-up problem load with the first worker, after the
        # first frame; nothing before it needs them.
        from modes_tui.tui.services import AppServices, ReplayedSession
        from modes_tui.tui.startup import StartupProblem

        if event.state == WorkerState.SUCCESS and worker.group == "prepare":
            if isinstance(worker.result, AppServices):
                self._configure(worker.result)
                self._start()
        elif event.state == WorkerState.SUCCESS and worker.group == "engine":
            self.engine = worker.result
            self.status.progress = None
            self._settle_engine()
            if self.services.tune_gc:
                freeze_what_is_loaded()
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
        if action == "focus_prompt":  # esc after a click on the panel, the chat, a button
            return len(self.screen_stack) == 1 and self.focused is not self.prompt
        if action == "retry":
            last = self.records[-1] if self.records else None
            return bool(last and retryable(last) and not self._turn_running)
        return True

    def action_set_setting(self, setting: str) -> None:
        """Force a mode, or auto/off."""
        self.set_setting(setting)

    def action_cycle_mode(self) -> None:
        """auto → each mode → auto."""
        self.set_setting(next_setting(self.reading.mode, self.mode_names()))

    def action_focus_prompt(self) -> None:
        """Esc away from the prompt: back to it, so the next keys are typed there."""
        self.prompt.focus()

    def _screen_changed(self, screen: object) -> None:
        """An overlay closed (inspector, picker, sessions, palette, replay, a dialog): the
        keys go to the prompt again, wherever the focus was when it opened."""
        if len(self.screen_stack) == 1 and screen is self.screen_stack[0]:
            self.prompt.focus()

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
            ("Retry the failed or cancelled turn" + key("retry"), "", self.action_retry),
            ("Cancel the running turn (esc)", "", self.action_cancel_turn),
            ("Cycle modes" + key("cycle_mode"), "auto, then each mode", self.action_cycle_mode),
            ("List the modes (/modes)", "", partial(self._command, "/modes")),
            ("Recorded sessions (/sessions)", "", partial(self._command, "/sessions")),
            ("Export the conversation (/export)", "", partial(self._command, "/export")),
            ("Clear the conversation (/clear)", "", partial(self._command, "/clear")),
            ("Help: keys and commands" + key("help"), "", partial(self._command, "/help")),
            ("Quit (/quit, ctrl+q)", "", self.exit),
        ]


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
