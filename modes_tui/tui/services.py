"""What the app needs from the rest of modes-tui, as protocols the CLI and the tests fill in.

The app never builds an engine, a model or a router itself: `AppServices.build_engine`
does, in a worker thread after the first paint, so importing litellm, llama_cpp or torch
never delays the screen. The engine's interface is `core.engine.ports.TurnEngine`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from modes_tui.core.engine.ports import Confirmer, TurnEngine
from modes_tui.tui.startup import LoadProgress

__all__ = [
    "AppServices",
    "ControlStore",
    "EngineFactory",
    "ReplayedSession",
    "RerouteResult",
    "SessionCatalog",
    "SessionSummary",
]

if TYPE_CHECKING:
    from modes_tui.core.control_setting import ControlReading
    from modes_tui.core.history.transcript import Reroute
    from modes_tui.core.packs.profiles import Pack
    from modes_tui.store.replay import ReplayedTurn
    from modes_tui.store.resume import CurrentSession, Resumption


class ControlStore(Protocol):
    """The control file (`modes_tui.store.control.ControlFile`)."""

    def read(self) -> ControlReading:
        """The setting now."""
        ...

    def write(self, mode: str) -> object:
        """Set auto, off or a mode name (atomically); raises UnknownMode for a bad name."""
        ...

    def watch(self) -> AsyncIterator[ControlReading]:
        """Every change, within a second, for as long as the app runs."""
        ...


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One recorded session in the picker."""

    id: str
    """What `/replay` takes."""
    title: str
    """The first user message, or the recorded title."""
    created: str
    """When it started (ISO 8601)."""
    turns: int | None = None
    """How many user turns, when known."""
    pack: str = ""
    """The pack it ran with."""


@dataclass
class ReplayedSession:
    """A recorded session as a stream of turns."""

    id: str
    """The session's id."""
    title: str
    """A short title."""
    turns: Sequence[ReplayedTurn]
    """Every turn, in order, as the store replays it (the events the live engine yielded)."""
    summary: str = ""
    """The re-route summary (agreement, modes that gained or lost turns)."""
    warnings: list[str] = field(default_factory=list)
    """Problems met while loading (a torn last line, an unknown mode)."""


@dataclass
class RerouteResult:
    """Today's router over a recorded session: per turn, and in total."""

    by_turn: dict[int, Reroute]
    """Turn number -> today's decision."""
    summary: str
    """Agreement, modes that gained or lost turns, latency."""


class SessionCatalog(Protocol):
    """Recorded sessions (`modes_tui.store`, adapted in `modes_tui.tui.sessions`)."""

    def list(self) -> Sequence[SessionSummary]:
        """Every session, newest first."""
        ...

    def load(self, session_id: str) -> ReplayedSession:
        """A session as events (fast: no routing); raises ModesError when it cannot."""
        ...

    def reroute(self, session_id: str) -> RerouteResult:
        """Today's router over the session's user turns (may take a while)."""
        ...

    def export(self, session_id: str) -> Path:
        """Write the session as Markdown; return where."""
        ...


EngineFactory = Callable[[Confirmer], TurnEngine]


@dataclass
class AppServices:
    """Everything the app is given; `Runtime.tui_services` and the tests build one."""

    pack: Pack
    """The pack of modes."""
    model: str
    """The default model id (shown in the header)."""
    control: ControlStore
    """The control file."""
    build_engine: EngineFactory
    """Builds the engine; runs in a worker thread, so it may import heavy libraries."""
    sessions: SessionCatalog | None = None
    """Recorded sessions, when the store is available."""
    preload: Callable[[], object] | None = None
    """Warms slow imports (litellm) after the first paint."""
    keymap: dict[str, str] = field(default_factory=dict)
    """Binding id -> keys, from the settings."""
    keymap_origin: str = "default"
    """Where `keymap` was set, for errors."""
    theme: str | None = None
    """A Textual theme name."""
    theme_origin: str = "default"
    """Where `theme` was set (the settings file, a variable, the command line), for errors."""
    load_progress: LoadProgress | None = None
    """How far building the engine is (assembling and loading a local model), for a bar."""
    save_theme: Callable[[str], object] | None = None
    """Keeps a theme the user picked (writes the `theme` setting); returns where."""
    session_id: Callable[[], str | None] = lambda: None
    """The id of the session being recorded, when there is one."""
    current: CurrentSession | None = None
    """The session being recorded: `/resume`, `/fork` and `/rename` act on it."""
    resumed: Resumption | None = None
    """The saved session the app starts in (`--resume`): its turns are shown at start."""
    tune_gc: bool = False
    """Tune the garbage collector for streaming once the engine is loaded (the CLI does)."""
    warnings: list[str] = field(default_factory=list)
    """Problems with the settings, shown once the app is up."""
