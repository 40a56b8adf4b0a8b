"""What the app's workers report: one typed message per result, each handled by the app with
`@on(...)`.

Each message is a class with its own `__init__` rather than a dataclass: they load before the
first frame, and a dataclass compiles its methods when its module is imported (eight of them
cost about 1 ms of the start, `bench/tui_startup.py`).

A worker that can fail in a way the user must see whole (the start, the engine, a turn)
catches its own error and posts it as a message; any other worker's error reaches the app's
one `Worker.StateChanged` handler, which names the worker. New slow work gets its own
message here rather than a branch on a worker's group.

When a worker fails:

| worker | message | what the user sees |
|---|---|---|
| start up (settings, pack, stores) | `StartupFailed` | a note in the chat naming the file to fix; every message sent fails with it |
| build engine | `EngineFailed` | the error in the status line; every message sent fails with it |
| a turn | `TurnEnded(crash=...)` | a failure card on the turn ("a bug in modes-tui"), Retry offered; waiting messages still run |
| preload | none | a line in the log (the library loads again when used) |
| load session, watch control file, commands, /resume /fork /rename | none | "<worker> failed: <error>" in the status line |
| re-route a replayed session (the replay screen's) | `Rerouted` / `RerouteFailed` | today's decisions on the turns, or "re-route: failed: <error>" in the replay's title |
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from modes_tui.core.engine.ports import TurnEngine
    from modes_tui.tui.services import AppServices, ReplayedSession, RerouteResult


def error_text(error: BaseException | None) -> str:
    """An error as the status line shows it: our own errors say what to fix; anything else
    is a bug, shown with its type."""
    from modes_tui.core.errors import ModesError

    return str(error) if isinstance(error, ModesError) else repr(error)


class ServicesPrepared(Message):
    """The settings, the pack and the stores are in (read after the first frame)."""

    def __init__(self, services: AppServices) -> None:
        super().__init__()
        self.services = services
        """Everything the app runs on."""


class StartupFailed(Message):
    """The settings, the pack or the stores could not be read."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error
        """What went wrong (a broken pack names its files)."""


class EngineBuilt(Message):
    """The engine is ready: messages can be answered."""

    def __init__(self, engine: TurnEngine) -> None:
        super().__init__()
        self.engine = engine
        """The engine every turn runs on."""


class EngineFailed(Message):
    """The engine could not be built (the model or the encoder did not load)."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error
        """The error, as shown."""


class SessionLoaded(Message):
    """A recorded session was read (and re-routed) for the replay screen."""

    def __init__(self, session: ReplayedSession) -> None:
        super().__init__()
        self.session = session
        """The session's turns and decisions."""


class Rerouted(Message):
    """Today's router went over a replayed session's turns (for the replay screen)."""

    def __init__(self, result: RerouteResult) -> None:
        super().__init__()
        self.result = result
        """Today's decision by turn, and the summary."""


class RerouteFailed(Message):
    """Re-routing a replayed session failed; the replay itself stays."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error
        """The error, as shown."""


class TurnEnded(Message):
    """A turn's worker ended: answered, failed, cancelled, or broken by a bug."""

    def __init__(self, crash: str | None = None) -> None:
        super().__init__()
        self.crash = crash
        """The unexpected error that broke the turn (a bug in modes-tui), if one did."""
