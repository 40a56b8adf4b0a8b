"""The modes-tui app: start-up, screens and global keys.

`ModesApp` starts up in steps that never hold the first frame: the services (settings, the
pack, the stores) are prepared in a worker after the first paint when the command line
hands over a `prepare` function, and the engine (which may import litellm, load the model
or the encoder) is built in another worker after that. Each worker posts one typed message
(`messages`), handled below with `@on(...)`, and the app hands the result to the
conversation as a reactive value (`ConversationScreen.services`, `.engine`, ...), whose
`watch_` method shows it.

The conversation itself (turns, chat, panel, status, prompt, commands) is
`conversation.ConversationScreen`, the screen the app opens with. The app's own keys are
those that hold on every screen (f1) and the mode keys of the pack, which act on the
conversation only while it is on top.

`build_app` is the one factory the CLI, the tests, the screenshot script and the
benchmarks use. Importing this module loads no model library.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from datetime import tzinfo
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.app import App
from textual.binding import Binding, BindingsMap
from textual.worker import Worker, WorkerState

from modes_tui.core.control_setting import OFF
from modes_tui.core.errors import ModesError, cut_repr
from modes_tui.core.terminal_text import terminal_safe
from modes_tui.tui.conversation import ConversationScreen
from modes_tui.tui.gc_tuning import freeze_what_is_loaded
from modes_tui.tui.keymap_check import keymap_problems
from modes_tui.tui.keys import ModeKey, mode_keys, normal_keymap
from modes_tui.tui.messages import (
    EngineBuilt,
    EngineFailed,
    ServicesPrepared,
    StartupFailed,
    error_text,
)
from modes_tui.tui.turn_queue import unsent

QUIT_AGAIN_SECONDS = 5.0
"""A quit that would drop a draft or waiting messages asks for a second quit within this."""

if TYPE_CHECKING:
    from textual.command import Provider

    from modes_tui.tui.services import AppServices


def mode_commands() -> type[Provider]:
    """The palette's "Force mode: X" entries (textual.command loads only when it opens)."""
    from modes_tui.tui.palette import ModeCommands

    return ModeCommands


def action_commands() -> type[Provider]:
    """The palette's entry for every action of the conversation."""
    from modes_tui.tui.palette import ActionCommands

    return ActionCommands


class ModesApp(App[None]):
    """The terminal chat whose every turn is routed to a mode, in plain sight."""

    CSS_PATH = "app.tcss"
    TITLE = "modes-tui"
    COMMANDS: ClassVar = App.COMMANDS | {mode_commands, action_commands}
    BINDINGS: ClassVar = [Binding("f1", "help", "Help", id="app.help")]
    """Keys of every screen; the conversation's own are `ConversationScreen.BINDINGS`, and
    the pack's mode keys join these per app (`_configure`)."""

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
        self._theme_applied: str | None = None
        self._quit_warned = -QUIT_AGAIN_SECONDS
        """When a quit last warned that it would drop something (monotonic seconds)."""
        if services is not None:
            self._configure(services)
        self._conversation = ConversationScreen(services, tz=tz, mode_keys=lambda: self.mode_keys)

    @property
    def conversation(self) -> ConversationScreen:
        """The conversation (the first screen, under any other)."""
        return self._conversation

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

    def get_default_screen(self) -> ConversationScreen:
        return self._conversation

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
            keymap = normal_keymap(services.keymap, [mk.mode for mk in self.mode_keys])
            self.set_keymap(keymap)
            problems = keymap_problems(keymap, self.mode_keys)
            if problems:
                self.notify(
                    terminal_safe(
                        f"{services.keymap_origin}: keymap: " + "; ".join(problems) + "."
                    ),
                    title="Settings",
                    severity="error",
                    timeout=20,
                    markup=False,
                )
        if services.theme and services.theme in self.available_themes:
            self.theme = services.theme
        elif services.theme:  # a misspelt theme is a settings error, not a crash screen
            self.notify(
                terminal_safe(
                    unknown_theme(services.theme, services.theme_origin, self.available_themes)
                ),
                title="Settings",
                severity="error",
                timeout=20,
                markup=False,
            )
        self._theme_applied = self.theme

    # ------------------------------------------------------------------ starting up

    def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        if self.started:
            self.call_after_refresh(self._after_first_paint)
        else:
            # The pack, the settings and the stores load after the first frame is drawn.
            self.call_after_refresh(self.prepare_services)

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
            self.conversation.reading = reading

    @on(ServicesPrepared)
    def _services_prepared(self, message: ServicesPrepared) -> None:
        self._configure(message.services)
        self.conversation.services = message.services
        self.call_after_refresh(self._after_first_paint)

    @on(StartupFailed)
    def _startup_failed(self, message: StartupFailed) -> None:
        from modes_tui.tui.startup import StartupProblem

        self.conversation.startup_problem = StartupProblem.of(message.error)

    @on(EngineBuilt)
    def _engine_built(self, message: EngineBuilt) -> None:
        self.conversation.engine = message.engine
        if self.services.tune_gc:
            freeze_what_is_loaded()

    @on(EngineFailed)
    def _engine_failed(self, message: EngineFailed) -> None:
        self.conversation.engine_error = message.error

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that does not report its own errors failed: say which one."""
        if event.state != WorkerState.ERROR or not self.is_running:
            return  # shutting down: workers end because the screens are going away
        error = error_text(event.worker.error)
        self.conversation.status.error(f"{event.worker.name} failed: {error}")

    # ------------------------------------------------------------------ global keys, looks

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Mode keys act on the conversation only while it is on top."""
        if action in ("set_setting", "help"):  # f1 over a dialog would hide it
            return self.screen is self.conversation
        if action == "command_palette":  # a priority key: kept in order until the editor is in
            return self.conversation.editor_in
        return True

    def action_set_setting(self, setting: str) -> None:
        """Force a mode (the pack's keys)."""
        self.conversation.set_setting(setting)

    async def action_quit(self) -> None:
        """Quit (ctrl+q, /quit). When that would drop what the user typed and never sent (a
        draft in the prompt, messages waiting for their turn), the first quit says what and
        only a second one within `QUIT_AGAIN_SECONDS` quits."""
        conversation = self.conversation
        dropped = (
            unsent(conversation.draft, conversation.turns.waiting)
            if conversation.is_mounted
            else ""
        )
        now = time.monotonic()
        if dropped and now - self._quit_warned > QUIT_AGAIN_SECONDS:
            self._quit_warned = now
            keys = [
                key for key, bound in self.active_bindings.items() if bound.binding.action == "quit"
            ]
            again = f"{keys[0]} or /quit" if keys else "/quit"
            conversation.status.error(
                f"Quitting drops {dropped}: {again} again within {QUIT_AGAIN_SECONDS:.0f} s quits"
            )
            return
        self.exit()

    def action_help(self) -> None:
        """Keys and commands, in an overlay (f1 or esc closes it)."""
        from modes_tui.tui.help import HelpScreen

        self.push_screen(HelpScreen(self.mode_keys))

    def on_resize(self, event: events.Resize) -> None:
        """The route panel fits the width, whichever screen is on top (the conversation fits
        itself when it mounts)."""
        if self.conversation.is_mounted:
            self.conversation.panel.fit(event.size.width)

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
            self.conversation.status.error(f"Theme {name} is on, but could not be saved: {error}")
            return
        self.conversation.status.idle(f"Theme {name} saved to {where}")


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


def unknown_theme(name: str, origin: str, themes: Iterable[str]) -> str:
    """The error for a `theme` setting that names no theme: where it was set, the themes
    there are, and what to do (the default theme is used meanwhile)."""
    names = ", ".join(sorted(themes))
    if origin.startswith("MODES_TUI_"):
        fix = f"set {origin} to one of them, or unset it"
    else:
        fix = f"edit `theme:` in {origin}, or pick one with ctrl+p > Change theme"
    return (
        f"{origin}: theme {cut_repr(name)} is not one of the app's themes, so the default is "
        f"used. Themes: {names}. {fix}."
    )
