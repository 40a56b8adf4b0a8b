"""`/resume`, `/fork` and `/rename` in the conversation: switching the session being recorded.

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
    from modes_tui.tui.parts import ConversationParts


@dataclass(frozen=True, slots=True)
class _Host:
    """The conversation as `frontend.sessions` reads it (at every step: a turn may start
    meanwhile)."""

    parts: ConversationParts

    @property
    def current_session(self) -> CurrentSession | None:
        services = self.parts.services
        return services.current if services is not None else None

    @property
    def turn_running(self) -> bool:
        return self.parts.turns.running

    @property
    def turn_engine(self) -> TurnEngine | None:
        return self.parts.engine


async def resume(conversation: ConversationParts, ref: str) -> bool:
    """Continue the saved session `ref` here (read in a thread; switched on the loop)."""

    def loading(ref: str) -> None:
        conversation.status.busy(f"Loading session {ref}…")

    outcome = await sessions.resume(_Host(conversation), ref, loading=loading)
    return await _shown(conversation, outcome)


async def fork(conversation: ConversationParts, turn: str) -> bool:
    """Start a new session from turn `turn` of this one ("": the last turn)."""
    return await _shown(conversation, sessions.fork(_Host(conversation), turn))


async def rename(conversation: ConversationParts, title: str) -> bool:
    """Give the session being recorded a title."""
    return await _shown(conversation, sessions.rename(_Host(conversation), title))


async def _shown(conversation: ConversationParts, outcome: sessions.SessionOutcome) -> bool:
    """What a session action did, or why not, in the status line (and the chat); False
    when it was refused (the caller puts the command line back, to be fixed)."""
    match outcome:
        case Refused(action="rename", kind="no-sessions"):
            conversation.status.error("Sessions are not recorded in this build.")
            return False
        case Refused(action=action, reason=reason):
            conversation.status.error(f"Cannot {action}: {reason}")
            return False
        case Renamed(session_id=session_id, title=title):
            conversation.status.idle(f"Session {session_id} is now titled “{title}”")
        case Switched(resumption=forked, parent=str(parent)):
            headline = f"Forked session `{parent}` at turn {forked.turn} into `{forked.id}`"
            await show(conversation, forked, headline)
        case Switched(resumption=resumed):
            await show(conversation, resumed, f"Resumed session `{resumed.id}`")
    return True


async def show(conversation: ConversationParts, resumption: Resumption, headline: str) -> None:
    """Draw the session's turns in the chat and its decisions in the panel."""
    records = records_from_turns(resumption.replay.turns)
    conversation.records = records
    await conversation.chat.clear()
    await conversation.chat.show_records(records)
    conversation.panel.set_records(records)
    if records:
        conversation.header.show(active_mode=records[-1].mode or "no mode")
    title = resumption.session.title or "untitled"
    count = f"{len(records)} turn" + ("" if len(records) == 1 else "s")
    lines = [f"**{headline}** · {title} · {count}; new turns are added to it."]
    notes = list(resumption.notes)
    pack_note = resumption.pack_note(
        conversation.services.pack.name if conversation.services is not None else ""
    )
    if pack_note:
        notes.append(pack_note)
    lines += [f"- ⚠ {note}" for note in notes]
    await conversation.chat.add_note("\n".join(lines))
    conversation.status.idle(f"In session {resumption.id}: {title}")
