"""The app's state and the widgets it reaches: what every part of `ModesApp` shares.

`ModesApp` is assembled from layers, each a small module (base → turns → commands →
input → app); this one holds the services, the turn records, the control setting and the
widget lookups, plus the keymap helpers the app uses at start.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from datetime import tzinfo
from typing import TYPE_CHECKING, TypeVar

from textual.app import App
from textual.binding import Binding, BindingsMap
from textual.widget import Widget

from modes_tui.core.control import AUTO, ControlReading
from modes_tui.core.errors import ModesError
from modes_tui.frontend.commands import mode_settings
from modes_tui.tui.chat import ChatLog
from modes_tui.tui.keys import MODE_BINDING_PREFIX, ModeKey, mode_keys
from modes_tui.tui.panel import RoutePanel
from modes_tui.tui.pending import PendingMessages
from modes_tui.tui.prompt import PromptInput
from modes_tui.tui.status import ModeHeader, StatusLine, reading_label

if TYPE_CHECKING:
    from modes_tui.core.transcript import TurnTranscript
    from modes_tui.tui.services import AppServices, TurnEngine
    from modes_tui.tui.startup import StartupProblem

W = TypeVar("W", bound=Widget)


class AppBase(App[None]):
    """Services, records, the control setting and the widgets of the chat screen."""

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

    def _show_cost(self) -> None:
        """The session's cost in the header, once a turn had a known, non-zero price."""
        ledger = getattr(getattr(self.engine, "costs", None), "ledger", None)
        if ledger is not None and (ledger.total or ledger.budget is not None):
            self.header.show(cost=ledger.header())

    def _settle_engine(self) -> None:
        if self._engine_settled is not None:
            self._engine_settled.set()

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
            self.status.error("modes-tui is still starting; try again in a moment.")
            return False
        try:
            self.services.control.write(setting)
        except ModesError as error:
            self.status.error(str(error))
            return False
        reading = self.services.control.read()
        self.show_reading(reading)
        self.status.idle(f"Setting: {reading_label(reading)}")
        return True

    def _stop_editing(self) -> None:
        self._editing = None


def normal_keymap(keymap: Mapping[str, str], modes: Sequence[str]) -> dict[str, str]:
    """The user's keymap with short names expanded: `auto`, `off`, `cycle` and a bare mode
    name mean `mode.auto`, `mode.off`, `mode.cycle` and `mode.NAME`."""
    short = {"auto", "off", "cycle", *modes}
    return {
        (f"{MODE_BINDING_PREFIX}{name}" if name in short else name): keys
        for name, keys in keymap.items()
    }
