"""`/resume`, `/fork` and `/rename` in the app: switching the session being recorded.

The store does the work (`store.resume.CurrentSession`); this module checks that the app
can switch now (no turn running, the engine built), restores the engine, and redraws the
chat and the route panel from the session's records, the way a replay draws them.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from modes_tui.core.errors import ModesError
from modes_tui.tui.replay import records_from_turns

if TYPE_CHECKING:
    from modes_tui.store.resume import CurrentSession, Resumption
    from modes_tui.tui.app_base import AppBase
    from modes_tui.tui.services import TurnEngine


def _ready(app: AppBase, what: str) -> tuple[CurrentSession, TurnEngine]:
    """The session and the engine, or ModesError saying why `what` cannot happen now."""
    current = app.services.current
    if current is None:
        raise ModesError("sessions are not recorded in this build")
    if app.turn_running:
        raise ModesError(f"a turn is running: Esc cancels it, then {what} again")
    if app.engine is None:
        raise ModesError(f"the model is still loading; {what} again in a moment")
    return current, app.engine


async def resume(app: AppBase, ref: str) -> None:
    """Continue the saved session `ref` here (read in a thread; switched on the loop)."""
    try:
        current, _ = _ready(app, f"/resume {ref}")
        app.status.busy(f"Loading session {ref}…")
        resumption = await asyncio.to_thread(current.prepare, ref)
        current, engine = _ready(app, f"/resume {ref}")  # a turn may have started meanwhile
        current.attach(resumption)
    except ModesError as error:
        app.status.error(f"Cannot resume: {error}")
        return
    resumption.restore_into(engine)
    await show(app, resumption, f"Resumed session `{resumption.id}`")


async def fork(app: AppBase, turn: int | None) -> None:
    """Start a new session from turn `turn` of this one (None: the last turn)."""
    try:
        current, engine = _ready(app, "/fork")
        parent = current.id
        forked = current.fork(turn)  # on the loop: no turn can start while records move
    except ModesError as error:
        app.status.error(f"Cannot fork: {error}")
        return
    forked.restore_into(engine)
    await show(app, forked, f"Forked session `{parent}` at turn {forked.turn} into `{forked.id}`")


async def rename(app: AppBase, title: str) -> None:
    """Give the session being recorded a title."""
    current = app.services.current
    if current is None:
        app.status.error("Sessions are not recorded in this build.")
        return
    try:
        title = current.rename(title)
    except ModesError as error:
        app.status.error(f"Cannot rename: {error}")
        return
    app.status.idle(f"Session {current.id} is now titled “{title}”")


async def show(app: AppBase, resumption: Resumption, headline: str) -> None:
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
