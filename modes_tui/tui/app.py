"""The modes-tui app: chat on the left, routing decisions on the right, a prompt below.

`ModesApp` is the one App class. It translates the engine's events into widgets and the
user's keys into control-file writes; it owns no routing or model logic. Beside it:

- `turn_queue.TurnQueue`: whether a turn runs, what waits, what is being edited, and the
  rules between them (the app asks it; nothing else sets that state);
- `messages`: one typed message per worker result, each handled below with `@on(...)`;
- the widgets and screens, which own their behaviour: `StatusLine.follow` and
  `RoutePanel.follow` show a turn's events, `TurnView` draws them, `PromptInput` keeps what
  was typed, `PendingMessages` the waiting messages, `confirm.DialogConfirmer` the dialogs.

Where new things plug in: a new dialog the engine asks through is a screen shown by
`DialogConfirmer`; a new item in the chat is drawn by `TurnView.apply` (or `ChatLog.add_note`
for a note between turns) and said by `StatusLine.follow`; a new slow job is a worker that
posts its own message from `messages`.

`build_app` is the one factory the CLI, the tests, the screenshot script and the benchmarks
use. Importing this module loads no model library: the engine is built in a worker thread
after the first paint.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
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

from modes_tui.core.config.control import AUTO, OFF, ControlReading
from modes_tui.core.errors import ModesError
from modes_tui.core.terminal_text import terminal_safe
from modes_tui.frontend import corrections
from modes_tui.frontend.commands import (
    ONE_SHOT_HELP,
    ONE_SHOT_USAGE,
    Command,
    CommandError,
    commands_for,
    mode_settings,
)
from modes_tui.frontend.dispatch import Handler, dispatch
from modes_tui.frontend.lines import read_line
from modes_tui.frontend.modes import mode_rows, set_mode
from modes_tui.tui.chat import ChatLog
from modes_tui.tui.footer import KeysFooter
from modes_tui.tui.gc_tuning import freeze_what_is_loaded
from modes_tui.tui.keys import ModeKey, mode_keys, next_setting, normal_keymap
from modes_tui.tui.messages import (
    EngineBuilt,
    EngineFailed,
    ServicesPrepared,
    SessionLoaded,
    StartupFailed,
    TurnEnded,
    error_text,
)
from modes_tui.tui.panel import RoutePanel
from modes_tui.tui.pending import PendingMessages
from modes_tui.tui.prompt import CommandSuggester, PromptInput
from modes_tui.tui.render import plural
from modes_tui.tui.status import NOT_KNOWN, ModeHeader, StatusLine, model_label, reading_label
from modes_tui.tui.turn_messages import RetryRequested
from modes_tui.tui.turn_queue import TurnQueue, typed_line

if TYPE_CHECKING:
    from textual.command import Provider

    from modes_tui.core.edits.policy import Policy
    from modes_tui.core.engine.ports import TurnEngine
    from modes_tui.core.history.events import TurnCorrected, TurnEvent, TurnFailed
    from modes_tui.core.history.transcript import TurnTranscript
    from modes_tui.core.routing.router import Route
    from modes_tui.tui.services import AppServices
    from modes_tui.tui.startup import StartupProblem
    from modes_tui.tui.turn_view import TurnView

# The event and transcript types load with the first turn, not on the way to the first
# frame (`modes_tui.core.history.events` alone is a dozen dataclasses).

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
STILL_STARTING = "modes-tui is still starting; try again in a moment."


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
        Binding("escape", "focus_prompt", "Prompt", id="prompt.focus", show=False),
        Binding("ctrl+r", "retry", "Retry", id="turn.retry"),
        Binding("ctrl+e", "correct", "Wrong mode?", id="turn.correct", priority=True),
        Binding("ctrl+n", "accept_hand_off", "Keep hand-off", id="turn.keep_hand_off", show=False),
        Binding("ctrl+n", "accept_hand_off", "Keep hand-off", id="turn.keep_hand_off", show=False),
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
        self.turns = TurnQueue(lambda: self.pending, changed=self.refresh_bindings)
        """Running, waiting and editing (the waiting messages are shown by `pending`)."""
        self._engine_error: str | None = None
        self._startup_problem: StartupProblem | None = None
        self._engine_settled: asyncio.Event | None = None
        self._widgets: dict[str, Widget] = {}
        self._session_ids: list[str] = []
        self._panel_wanted: bool | None = None
        """The user's choice for the route panel (None: by the terminal's width)."""
        self._theme_applied: str | None = None
        if services is not None:
            self._configure(services)

    # ------------------------------------------------------------------ services and widgets

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

    @property
    def turn_running(self) -> bool:
        """A turn is running (or waiting for the engine); see `turns` for the rest."""
        return self.turns.running

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

    # ------------------------------------------------------------------ starting up

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
    def prepare_services(self) -> None:
        """Read the settings, load the pack, open the stores (in a thread)."""
        assert self._prepare is not None
        try:
            services = self._prepare()
        except Exception as error:  # noqa: BLE001 - shown whole in the chat, with the fix
            self.post_message(StartupFailed(error))
            return
        self.post_message(ServicesPrepared(services))

    @work(thread=True, exclusive=True, exit_on_error=False, group="engine", name="build engine")
    def build_engine(self) -> None:
        """Build the engine (may import litellm, load the model or the encoder)."""
        from modes_tui.tui.confirm import DialogConfirmer

        try:
            engine = self.services.build_engine(DialogConfirmer(self))
        except Exception as error:  # noqa: BLE001 - every message sent afterwards says it
            self.post_message(EngineFailed(error_text(error)))
            return
        self.post_message(EngineBuilt(engine))

    @work(thread=True, exclusive=True, exit_on_error=False, group="preload", name="preload")
    def preload(self) -> None:
        """Import slow libraries in the background (a failure only costs time later)."""
        if self.services.preload is None:
            return
        try:
            self.services.preload()
        except Exception as error:  # noqa: BLE001 - the library loads again when used
            self.log.warning(f"preload failed: {error_text(error)}")

    @work(exclusive=True, exit_on_error=False, group="control", name="watch control file")
    async def watch_control(self) -> None:
        """Show changes of the control file made by anyone, within a second."""
        async for reading in self.services.control.watch():
            self.show_reading(reading)

    @on(ServicesPrepared)
    def _services_prepared(self, message: ServicesPrepared) -> None:
        self._configure(message.services)
        self._start()

    @on(StartupFailed)
    def _startup_failed(self, message: StartupFailed) -> None:
        from modes_tui.tui.startup import StartupProblem

        self._engine_error = error_text(message.error)
        self._startup_problem = problem = StartupProblem.of(message.error)
        self._settle_engine()
        self.status.error(f"modes-tui could not start: {problem.hint}")
        self.call_later(self.chat.add_plain_note, problem.note())

    @on(EngineBuilt)
    def _engine_built(self, message: EngineBuilt) -> None:
        self.engine = message.engine
        self.status.progress = None
        self._settle_engine()
        if self.services.tune_gc:
            freeze_what_is_loaded()
        if not self.turns.running:
            self.status.idle()

    @on(EngineFailed)
    def _engine_failed(self, message: EngineFailed) -> None:
        self.status.progress = None
        self._engine_error = message.error
        self._settle_engine()
        self.status.error(f"The model could not start: {message.error}")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that does not report its own errors failed: say which one."""
        if event.state != WorkerState.ERROR or not self.is_running:
            return  # shutting down: workers end because the screens are going away
        self.status.error(f"{event.worker.name} failed: {error_text(event.worker.error)}")

    def _settle_engine(self) -> None:
        if self._engine_settled is not None:
            self._engine_settled.set()

    def _show_cost(self) -> None:
        """The session's cost in the header, once a turn had a known, non-zero price."""
        ledger = getattr(getattr(self.engine, "costs", None), "ledger", None)
        if ledger is not None and (ledger.total or ledger.budget is not None):
            self.header.show(cost=ledger.header())

    # ------------------------------------------------------------------ the prompt

    @on(PromptInput.Submitted, "#prompt")
    async def _submitted(self, event: PromptInput.Submitted) -> None:
        text = event.value
        if not text.strip():
            return
        try:
            read = read_line(text, self.mode_names(), "app")
        except CommandError as error:
            self.status.error(self._command_error(error))
            self.prompt.put_back(text)  # to be fixed, before anything typed since Enter
            return
        self.prompt.remember(text)
        if isinstance(read, Command):
            self._clear_error()
            await self.run_command(read)
            return
        submission = await self.turns.submit(text)
        if submission.action == "replace":
            self.send_line(text, replacing=submission.replacing)  # `/MODE text` too
        elif submission.action == "wait":
            self.notify_waiting(submission.waiting)
        else:
            self._clear_error()
            self.send_line(text)

    def _command_error(self, error: CommandError) -> str:
        """The error as shown: before the pack is in, `/code text` cannot be told from a typo."""
        if self.started:
            return str(error)
        return f"{error} (modes-tui is still starting: `/MODE text` works once the modes load)"

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
        if self.turns.editing is not None and not self.prompt.value:
            self.turns.stop_editing()
            self.status.idle()

    def _recall(self) -> bool:
        """Up in an empty prompt: take back the newest waiting message, else edit the last
        message (resending it replaces that turn). False lets up walk the history."""
        last = self.records[-1] if self.records else None
        if last is not None and self.chat.view(last.number) is None:
            last = None  # cleared away (/clear): there is no turn on screen to replace
        recall = self.turns.recall(last)
        if recall == "take back":
            self.call_later(self._take_back_waiting)
        elif recall == "edit" and last is not None:
            self.prompt.recall(typed_line(last))
            self.status.idle(f"Editing turn {last.number} · Enter replaces it · esc keeps it")
        return recall is not None

    async def _take_back_waiting(self) -> None:
        text = await self.turns.take_back()
        if text is not None:
            self.prompt.value = text
            self.status.idle("Took a waiting message back: Enter queues it again.")

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

    def send_line(self, text: str, *, replacing: TurnTranscript | None = None) -> None:
        """Run a typed line as a turn: `/MODE text` in MODE for this message only, `//x` as
        `/x`, anything else as it is; in place of turn `replacing` when one is edited."""
        try:
            read = read_line(text, self.mode_names(), "app")
        except CommandError as error:  # cannot happen for a line checked when it was sent
            self.status.error(str(error))
            return
        if isinstance(read, Command):  # cannot happen: a command runs when it is sent
            return
        if replacing is not None:
            self.resend_turn(replacing, read.text, force=read.force)
        else:
            self.ask(read.text, force=read.force)

    def ask(self, text: str, *, force: str | None = None) -> None:
        """Route and answer one message as a new turn; `force` names the mode of this message
        only (`/MODE text`), the control file is not touched."""
        self._begin_turn(partial(self._new_turn, text, force))

    def retry_turn(self, record: TurnTranscript) -> None:
        """Run the last turn again."""
        engine = self.engine
        if engine is None:
            return
        self._begin_turn(partial(self._retried_turn, record, engine))

    def resend_turn(self, old: TurnTranscript, text: str, *, force: str | None = None) -> None:
        """Run an edited last message in place of its turn (`force`: its `/MODE`)."""
        engine = self.engine
        if engine is None:
            self.status.error("The model is not ready yet; your edit is in the prompt history.")
            return
        self._begin_turn(partial(self._resent_turn, old, text, force, engine))

    def action_accept_hand_off(self) -> None:
        """Count the last turn's hand-off as a correction: the router learns the mode the
        model handed it to (nothing is answered again)."""
        record = self.records[-1] if self.records else None
        route = record.route if record is not None else None
        if route is None or route.decided_by != "model":
            self.status.error("The last turn was not handed to another mode: nothing to keep.")
            return
        self.correct(record, route.mode_name, rerun=False)

    def correct(self, record: TurnTranscript | None, mode: str, *, rerun: bool = True) -> None:
        """Say `record`'s turn belonged to `mode` (the last turn is answered again in it,
        unless `rerun` is False: a hand-off the user keeps)."""
        if not self._can_correct(record):
            return
        assert record is not None and self.engine is not None
        outcome = corrections.correct(self.engine, mode, turn=record.number, rerun=rerun)
        if isinstance(outcome, corrections.CorrectionRefused):
            self.status.error(outcome.reason)
            return
        events = outcome.events
        self.status.busy(f"Correcting turn {record.number} to {mode}…")
        self._begin_turn(partial(self._corrected_turn, record, events))

    def _begin_turn(self, turn: Callable[[], Awaitable[None]]) -> None:
        """Every kind of turn starts here: the queue knows at once (a second Enter or a second
        correction in the same instant waits), then the one turn worker runs it."""
        self.turns.start()
        self._turn_worker(turn)

    @work(exclusive=True, exit_on_error=False, group="turn", name="turn")
    async def _turn_worker(self, turn: Callable[[], Awaitable[None]]) -> None:
        """The one worker every kind of turn runs in; the turn runs until it ends."""
        crash: str | None = None
        try:
            await turn()
        except Exception as error:  # noqa: BLE001 - a bug must not take the conversation along
            crash = error_text(error)
        finally:
            self.turns.finish()
            self.post_message(TurnEnded(crash))

    async def _new_turn(self, text: str, force: str | None) -> None:
        from modes_tui.core.history.transcript import TurnTranscript

        number = (self.records[-1].number if self.records else 0) + 1
        record = TurnTranscript(number, terminal_safe(text))  # a paste may hold escapes
        self.records.append(record)
        view = await self.chat.start_turn(record)
        engine = await self._wait_for_engine(record, view)
        if engine is None:
            return
        self.status.busy("Routing…")
        await self._show_events(record, view, engine.run_turn(text, force=force))

    async def _retried_turn(self, record: TurnTranscript, engine: TurnEngine) -> None:
        view = self.chat.view(record.number)
        record.restart()
        if view is not None:
            await view.restart()
        self.status.busy("Retrying: routing…")
        await self._show_events(record, view, engine.retry())

    async def _resent_turn(
        self, old: TurnTranscript, text: str, force: str | None, engine: TurnEngine
    ) -> None:
        from modes_tui.core.history.transcript import TurnTranscript

        record = TurnTranscript(len(self.records) + 1, text)
        old.superseded_by = record.number
        self.records.append(record)
        view = self.chat.view(old.number)
        if view is not None:
            await view.remove()
        self.panel.refresh_record(old)
        new_view = await self.chat.start_turn(record)
        self.status.busy(f"Resending as turn {record.number}: routing…")
        await self._show_events(record, new_view, engine.resend(text, force=force))

    async def _corrected_turn(
        self, record: TurnTranscript, events: AsyncIterator[TurnEvent]
    ) -> None:
        """A correction: the folded first answer, then the re-run."""
        await self._show_events(record, self.chat.view(record.number), events)

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

    async def _show_events(
        self, record: TurnTranscript, view: TurnView | None, events: AsyncIterator[TurnEvent]
    ) -> None:
        from modes_tui.core.history.safe_events import safe_events

        async for event in safe_events(events):  # model text must not drive the terminal
            record.apply(event)
            if view is not None:
                await view.apply(event)
            self._reflect(record, event)

    def _reflect(self, record: TurnTranscript, event: TurnEvent) -> None:
        """Panel, header and status line for one event (the turn's view draws the rest)."""
        self.panel.follow(record, event)
        if event.type == "route_decided":
            self.header.show(active_mode=record.mode or "no mode")
            self._note_hand_off(event.route)
            self._show_policy(record.mode)
            self.status.follow(record, event, self._mcp_servers(record.mode))
        elif event.type == "turn_corrected":
            self._corrected(event)
        else:
            self.status.follow(record, event)
        if event.type in ("turn_finished", "turn_cancelled", "turn_failed"):
            self._show_cost()

    def _show_policy(self, mode: str | None) -> None:
        """The route panel says what the answering mode may do with its tools."""
        profile = self.services.pack.get(mode) if mode else None
        if profile is None:
            self.panel.show_policy(mode, None, ())
        else:
            self.panel.show_policy(mode, profile.policy, profile.tools)

    def _note_hand_off(self, route: Route) -> None:
        """Say that the model handed the turn over, and how to keep that as a correction."""
        if route.decided_by != "model":
            return
        self.notify(
            terminal_safe(f"{route.mode_name}: {route.reason}"),  # the model wrote the reason
            title=f"Handed to {route.mode_name} · ctrl+n: keep it as a correction",
            timeout=8,
            markup=False,
        )

    def policy_of(self, mode: str | None) -> Policy | None:
        """What `mode` of this app's pack may do (None: no mode, or not one of the pack)."""
        profile = self.services.pack.get(mode) if mode is not None else None
        return profile.policy if profile is not None else None

    def _mcp_servers(self, mode: str | None) -> tuple[str, ...]:
        profile = self.services.pack.get(mode) if mode else None
        return tuple(profile.mcp) if profile is not None else ()

    @on(TurnEnded)
    async def _turn_ended(self, message: TurnEnded) -> None:
        if not self.is_running:
            return  # shutting down: the turn was cancelled with the screens
        if message.crash is not None:
            self._turn_failed_unexpectedly(message.crash)
        text = await self.turns.next_waiting()
        if text is not None:
            self.send_line(text)

    def _startup_failure(self) -> TurnFailed:
        """Why a message cannot run: the setup or the model failed, with the fix."""
        from modes_tui.core.history.events import TurnFailed

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

    def _turn_failed_unexpectedly(self, message: str) -> None:
        from modes_tui.core.history.events import TurnFailed

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
        self.retry_turn(record)

    @on(RetryRequested)
    def _retry_pressed(self, event: RetryRequested) -> None:
        event.stop()
        self.prompt.focus()  # the clicked button goes with the old answer: keys to the prompt
        if self.records and event.number != self.records[-1].number:
            self.status.error("Only the last turn can be retried.")
            return
        self.action_retry()

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

        fallback = self.services.pack.router.fallback
        self.push_screen(CorrectScreen(record, self.mode_names(), fallback), callback=chosen)

    def _can_correct(self, record: TurnTranscript | None) -> bool:
        if record is None:
            self.status.error("No turn to correct yet: send a message first.")
        elif self.turns.running:
            self.status.error("A turn is running: wait for it, or Esc cancels it; then correct.")
        elif self.engine is None:
            self.status.error(STILL_STARTING)
        else:
            return True
        return False

    def _corrected(self, event: TurnCorrected) -> None:
        if event.note:
            note = terminal_safe(event.note)  # it quotes the corrected message
            self.notify(note, title="Correction", severity="warning", timeout=8, markup=False)
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
            self.status.error(STILL_STARTING)
            return
        undone = corrections.undo(self.engine)
        if isinstance(undone, corrections.CorrectionRefused):
            self.status.error(undone.reason)
            return
        correction = undone.correction
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

    # ------------------------------------------------------------------ commands and screens

    @work(thread=True, exclusive=True, exit_on_error=False, group="replay", name="load session")
    def load_replay(self, session_id: str) -> None:
        """Load a recorded session (and re-route it) off the event loop."""
        sessions = self.services.sessions
        if sessions is None:
            raise ModesError("sessions are not available in this build")
        self.post_message(SessionLoaded(sessions.load(session_id)))

    @on(SessionLoaded)
    def _session_loaded(self, message: SessionLoaded) -> None:
        from modes_tui.tui.replay import ReplayScreen

        session, catalog = message.session, self.services.sessions
        if catalog is not None:
            reroute = partial(catalog.reroute, session.id)
            self.push_screen(ReplayScreen(session, tz=self.tz, reroute=reroute))
        self.status.idle()

    def action_why(self) -> None:
        """The inspector for the last turn."""
        if not self.records:
            self.status.error("No turn yet: send a message first.")
            return
        from modes_tui.tui.inspector import InspectorScreen

        record = self.records[-1]
        self.push_screen(InspectorScreen(record, tz=self.tz, policy=self.policy_of(record.mode)))

    @on(RoutePanel.InspectRequested)
    def _inspect(self, event: RoutePanel.InspectRequested) -> None:
        from modes_tui.tui.inspector import InspectorScreen

        event.stop()
        policy = self.policy_of(event.record.mode)
        self.push_screen(InspectorScreen(event.record, tz=self.tz, policy=policy))

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
            "/compact": lambda _: self.compact(),
            "/sessions": _sync(lambda _: self.open_sessions()),
            "/replay": _sync(self.replay_session),
            "/resume": _sync(self.resume_session),
            "/fork": _sync(self.fork_session),
            "/rename": _sync(self.rename_session),
            "/export": lambda _: self.export(),
            "/why": _sync(lambda _: self.action_why()),
            "/wrong": _sync(self.wrong),
            "/undo": _sync(self.undo_files),
            "/help": lambda _: self.action_help(),
            "/copy": _sync(lambda _: self.action_copy_answer()),
            "/quit": _sync(lambda _: self.exit()),
        }

    def undo_files(self, argument: str) -> None:
        """`/undo [N]`: put back what the last N turns wrote, in a worker (it may ask before
        overwriting a file changed on disk since, and the question needs the app running)."""
        if self.turns.running or self.engine is None:
            self.status.error("A turn is running: Esc cancels it first.")
            return
        self.run_worker(self._undo(self.engine, argument), group="undo", exit_on_error=False)

    async def _undo(self, engine: TurnEngine, argument: str) -> None:
        from modes_tui.frontend.undo import run_undo

        asker = getattr(engine, "asker", None)
        await self.chat.add_note(await run_undo(engine, argument, asker.ask if asker else None))

    async def clear_conversation(self) -> None:
        """`/clear`: the engine and the chat forget the conversation; the panel keeps it."""
        if self.turns.running:
            self.status.error("A turn is running: Esc cancels it first.")
            return
        if self.engine is not None:
            self.engine.clear()
        await self.chat.clear()
        self.status.idle("Conversation cleared; the route panel keeps the session's decisions.")

    async def compact(self) -> None:
        """`/compact`: the earlier turns summarised for the model, shown as a folded note."""
        if self.turns.running or self.engine is None:
            self.status.error("A turn is running: Esc cancels it first.")
            return
        self.status.busy("Summarising the earlier turns…")
        try:
            compaction = await self.engine.compact()
        except ModesError as error:
            self.status.error(str(error))
            return
        await self.chat.add_compaction(compaction)
        self.status.idle("Earlier turns summarised for the model; the chat keeps them all.")

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

    def resume_session(self, ref: str) -> None:
        """`/resume [ID|latest]` (see `tui.session_actions`), one session action at a time."""
        from modes_tui.tui import session_actions

        self._session_worker(session_actions.resume(self, ref), "/resume")

    def fork_session(self, turn: str) -> None:
        """`/fork [N]`."""
        from modes_tui.tui import session_actions

        self._session_worker(session_actions.fork(self, turn), "/fork")

    def rename_session(self, title: str) -> None:
        """`/rename TITLE`."""
        from modes_tui.tui import session_actions

        self._session_worker(session_actions.rename(self, title), "/rename")

    def _session_worker(self, work: Awaitable[None], name: str) -> None:
        self.run_worker(work, name=name, group="session", exclusive=True, exit_on_error=False)

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
                self.resume_session(choice.id)
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
            "| `ctrl+n` | keep a hand-off as a correction (the router learns it) |",
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
        rows = ["| mode | key | thinking | tools | about |", "|---|---|---|---|---|"]
        for row in mode_rows(self.services.pack):
            name = row.name + (" (fallback)" if row.fallback else "")
            if not row.available:
                name += " (unavailable)"
            rows.append(
                f"| {name} | {keys.get(row.name) or ''} | {row.thinking} | "
                f"{', '.join(row.tools) or '-'} | {row.about} |"
            )
        setting = reading_label(self.reading)
        return "\n".join(
            [
                f"**Modes of pack `{self.services.pack.name}`** · setting: {setting}",
                "",
                *rows,
            ]
        )

    # ------------------------------------------------------------------ modes and the control file

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
        self.panel.show_setting(reading_label(reading), reading.warning)

    def set_setting(self, setting: str) -> bool:
        """Write the control file (keys, /mode, the palette); False when it was refused."""
        if not self.started:
            self.status.error(STILL_STARTING)
            return False
        try:
            reading = set_mode(self.services.control, setting)
        except ModesError as error:
            self.status.error(str(error))
            return False
        self.show_reading(reading)
        self.status.idle(f"Setting: {reading_label(reading)}")
        return True

    def action_set_setting(self, setting: str) -> None:
        """Force a mode, or auto/off."""
        self.set_setting(setting)

    def action_cycle_mode(self) -> None:
        """auto → each mode → auto."""
        self.set_setting(next_setting(self.reading.mode, self.mode_names()))

    # ------------------------------------------------------------------ keys, focus, layout

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
            return self.turns.can_cancel
        if action == "focus_prompt":  # esc after a click on the panel, the chat, a button
            return len(self.screen_stack) == 1 and self.focused is not self.prompt
        if action == "retry":
            return self.turns.can_retry(self.records[-1] if self.records else None)
        return True

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
        panel.lay_out(columns, narrow=narrow)

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


async def _nothing(name: str) -> None:
    """A command read always has a handler (`read_line` checks the name)."""


def _sync(act: Callable[[str], object]) -> Handler[object]:
    """A handler of something done at once (it may start a worker or open a screen)."""

    async def run(argument: str) -> None:
        act(argument)

    return run


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
