"""`/resume`, `/fork` and `/rename`, once for both front ends: the checks, the store's work
and the engine's restore. Each returns an outcome the front end shows in its own words.

The store does the work (`store.resume.CurrentSession`); this module checks that the front
end can switch now (sessions recorded, no turn running, the engine built), switches, and
restores the engine. Drawing the switched session is the front end's part.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from modes_tui.core.errors import ModesError
from modes_tui.frontend.commands import CommandError, check_argument

if TYPE_CHECKING:
    from modes_tui.core.engine.ports import TurnEngine
    from modes_tui.store.resume import CurrentSession, Resumption

__all__ = [
    "NOT_RECORDED",
    "Refused",
    "Renamed",
    "SessionHost",
    "SessionOutcome",
    "Switched",
    "fork",
    "rename",
    "resume",
]

NOT_RECORDED = "sessions are not recorded in this build"

SessionAction = Literal["resume", "fork", "rename"]


class SessionHost(Protocol):
    """The front end as the session actions see it; read again at every step (a turn may
    start while a session is read in a thread)."""

    @property
    def current_session(self) -> CurrentSession | None:
        """The session being recorded (None: this front end records none)."""
        ...

    @property
    def turn_running(self) -> bool:
        """Whether a turn is running now."""
        ...

    @property
    def turn_engine(self) -> TurnEngine | None:
        """The engine, or None while it is still loading."""
        ...


@dataclass(frozen=True, slots=True)
class Refused:
    """The action did not happen; `reason` says why and what to do."""

    action: SessionAction
    """What was asked."""
    reason: str
    """Why not (a ModesError's text, or a usage line when `kind` is usage)."""
    kind: Literal["no-sessions", "usage", "refused"] = "refused"
    """no-sessions: this front end records none; usage: the argument is wrong."""


@dataclass(frozen=True, slots=True)
class Switched:
    """The session being recorded is now `resumption`, and the engine carries it on."""

    resumption: Resumption
    """The session switched to, with its turns and notes."""
    parent: str | None = None
    """The session it was forked from (None: resumed)."""


@dataclass(frozen=True, slots=True)
class Renamed:
    """The session being recorded has a new title."""

    session_id: str | None
    """As `CurrentSession.id` has it."""
    title: str
    """The title as stored (cleaned)."""


SessionOutcome = Refused | Switched | Renamed


def _ready(host: SessionHost, what: str) -> tuple[CurrentSession, TurnEngine]:
    """The session and the engine, or ModesError saying why `what` cannot happen now."""
    current = host.current_session
    if current is None:
        raise _NoSessions(NOT_RECORDED)
    engine = host.turn_engine
    if host.turn_running:
        raise ModesError(f"a turn is running: Esc cancels it, then {what} again")
    if engine is None:
        raise ModesError(f"the model is still loading; {what} again in a moment")
    return current, engine


class _NoSessions(ModesError):
    """This front end records no sessions."""


def _checked(name: str, argument: str) -> str:
    """The argument as the command reader checks it (a caller may not have read a line):
    CommandError in the REPL's words, which a `Refused` carries."""
    return check_argument(name, argument, (), "repl")


def _refused(action: SessionAction, error: ModesError) -> Refused:
    kind: Literal["no-sessions", "refused"] = (
        "no-sessions" if isinstance(error, _NoSessions) else "refused"
    )
    return Refused(action, str(error), kind)


async def resume(
    host: SessionHost, ref: str, *, loading: Callable[[str], object] | None = None
) -> SessionOutcome:
    """Continue the saved session `ref` ("" = latest): read in a thread, switched here.
    `loading` is told the ref once the checks passed (a front end may say it is reading)."""
    ref = ref or "latest"
    try:
        current, _ = _ready(host, f"/resume {ref}")
        if loading is not None:
            loading(ref)
        resumption = await asyncio.to_thread(current.prepare, ref)
        current, engine = _ready(host, f"/resume {ref}")  # a turn may have started meanwhile
        current.attach(resumption)
    except ModesError as error:
        return _refused("resume", error)
    resumption.restore_into(engine)
    return Switched(resumption)


def fork(host: SessionHost, at: str) -> SessionOutcome:
    """Start a new session from turn `at` of this one ("" = the last turn)."""
    try:
        current, engine = _ready(host, "/fork")
        at = _checked("/fork", at)
        parent = current.id
        forked = current.fork(int(at) if at else None)  # no turn can start while records move
    except CommandError as error:
        return Refused("fork", str(error))
    except ModesError as error:
        return _refused("fork", error)
    forked.restore_into(engine)
    return Switched(forked, parent)


def rename(host: SessionHost, title: str) -> SessionOutcome:
    """Give the session being recorded a title (a turn may run meanwhile)."""
    current = host.current_session
    if current is None:
        return Refused("rename", NOT_RECORDED, "no-sessions")
    try:
        title = _checked("/rename", title)
    except CommandError as error:
        return Refused("rename", str(error), "usage")
    try:
        return Renamed(current.id, current.rename(title))
    except ModesError as error:
        return _refused("rename", error)
