"""The file checkpoints a saved session holds, for `/undo` after a resume or a fork.

`checkpoint` records (core.records) keep what each file held before a turn changed it;
`ui_event` `undo` records name the turns already undone. A record that cannot be read is
skipped (the load problems already name broken lines); a checkpoint without a usable path
is never restored from.
"""

from __future__ import annotations

from modes_tui.core.edits.checkpoints import Checkpoint, CheckpointRecord, Checkpoints
from modes_tui.core.errors import RecordError
from modes_tui.core.history.records import UiEventRecord, parse_record
from modes_tui.store.session_reader import LoadedSession

__all__ = ["saved_checkpoints"]


def saved_checkpoints(session: LoadedSession, *, up_to_turn: int | None = None) -> Checkpoints:
    """The session's checkpoints and undone turns (a fork: only those up to `up_to_turn`)."""
    items: list[Checkpoint] = []
    undone: set[int] = set()
    for raw in session.records:
        try:
            record = parse_record(raw)
        except (RecordError, ValueError, TypeError):
            continue
        if up_to_turn is not None and record is not None and record.turn > up_to_turn:
            continue
        if isinstance(record, CheckpointRecord):
            items.append(record.checkpoint)
        elif isinstance(record, UiEventRecord) and record.event == "undo":
            undone.update(turn for turn in record.get("turns") or () if isinstance(turn, int))
    checkpoints = Checkpoints()
    checkpoints.load(items, undone)
    return checkpoints
