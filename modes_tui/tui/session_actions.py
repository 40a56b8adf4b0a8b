"""`/resume`, `/fork` and `/rename` in the app: switching the session being recorded.

The checks, the switch and the engine's restore are `frontend.sessions` (shared with the
REPL); this module says the outcome in the status line and redraws the chat and the route
panel from the session's records, the way a replay draws them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from modes_tui.frontend import sessions
from modes_tui.frontend.sessions import Refused, Renamed, Switched
from modes_tui.tui.replay import records_from_turns

if TYPE_CHECKING:
    from modes_tui.core.engine.ports import TurnEngine
    from modes_tui.store.resume import CurrentSession, Resumption
    from modes_tui.tui.app import ModesApp


@dataclass(frozen=True, slots=True)
class _Host:
    """The app as `frontend.sessions` reads it (at every step: a turn may start meanwhile)."""

    app: ModesApp

    @property
    def current_session(self) -> CurrentSession | None:
        return self.app.services.current

    @property
    def turn_running(self) -> bool:
        return self.app.turn_running

    @property
    def turn_engine(self) -> TurnEngine | None:
        return self.app.engine


async def resume(app: ModesApp, ref: str) -> None:
    """Continue the saved session `ref` here (read in a thread; switched on the loop)."""

    def loading(ref: str) -> None:
        app.status.busy(f"Loading session {ref}…")

    await _shown(app, await sessions.resume(_Host(app), ref, loading=loading))


async def fork(app: ModesApp, turn: str) -> None:
    """Start a new session from turn `turn` of this one ("": the last turn)."""
    await _shown(app, sessions.fork(_Host(app), turn))


async def rename(app: ModesApp, title: str) -> None:
    """Give the session being recorded a title."""
    await _shown(app, sessions.rename(_Host(app), title))


async def _shown(app: ModesApp, outcome: sessions.SessionOutcome) -> None:
    """What a session action did, or why not, in the status line (and the chat)."""
    match outcome:
        case Refused(action="rename", kind="no-sessions"):
            app.status.error("Sessions are not recorded in this build.")
        case Refused(action=action, reason=reason):
            app.status.error(f"Cannot {action}: {reason}")
        case Renamed(session_id=session_id, title=title):
            app.status.idle(f"Session {session_id} is now titled “{title}”")
        case Switched(resumption=forked, parent=str(parent)):
            headline = f"Forked session `{parent}` at turn {forked.turn} into `{forked.id}`"
            await show(app, forked, headline)
        case Switched(resumption=resumed):
            await show(app, resumed, f"Resumed session `{resumed.id}`")


async def show(app: ModesApp, resumption: Resumption, headline: str) -> None:
    """Draw the session's turns in the chat and its decisions in the panel."""
    records = records_from_turns(resumption.replay.turns)
    app.records = records
    await app.chat.clear()
    await app.chat.show_records(records)
    app.panel.set_records(records)
    if records:
        app.header.show(active_mode=records[-1].mode or "no mode")
    title = resumption.session.title or "untitled"
    count = f"{len(records)} turn" + ("" if len(records) == 1 else "s")
    lines = [f"**{headline}** · {title} · {count}; new turns are added to it."]
    notes = list(resumption.notes)
    pack_note = resumption.pack_note(app.services.pack.name)
    if pack_note:
        notes.append(pack_note)
    lines += [f"- ⚠ {note}" for note in notes]
    await app.chat.add_note("\n".join(lines))
    app.status.idle(f"In session {resumption.id}: {title}")
