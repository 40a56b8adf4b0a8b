"""What a turn may use: `TurnContext`, the explicit parts the phases work over.

The engine builds one context per turn from its own parts; a phase reads and writes only
what is here (and its `TurnState`), never the engine. `Recorder` writes the session log
without ever failing the turn: a failed write is reported by the next turn's route.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from modes_tui.core.config.ports import ControlSource
from modes_tui.core.edits.checkpoints import Checkpoint, CheckpointRecord
from modes_tui.core.engine.cancelling import TurnSlot, TurnStopper
from modes_tui.core.engine.config import EngineConfig
from modes_tui.core.engine.costs import TurnCosts
from modes_tui.core.engine.fitter import RequestFitter
from modes_tui.core.engine.ports import Asker, Guard
from modes_tui.core.engine.rerun import TurnCorrections
from modes_tui.core.engine.setup import ModeSetups
from modes_tui.core.engine.state import EngineState
from modes_tui.core.errors import ToolError
from modes_tui.core.history.events import TurnCorrected
from modes_tui.core.history.ports import SessionWriter
from modes_tui.core.history.records import SessionRecord, UiEventRecord, write_record
from modes_tui.core.model.ports import ChatModel
from modes_tui.core.packs.profiles import Pack
from modes_tui.core.routing.router import Router

__all__ = ["Recorder", "TurnContext"]

log = logging.getLogger("modes_tui.engine")


class Recorder:
    """Writes the session log; a failed write never stops a turn."""

    def __init__(self, session: SessionWriter | None) -> None:
        self.session = session
        """Where records go (None: nowhere)."""
        self.failure: str | None = None
        """The first failed write since the last `take_failure` (shown by the next route)."""

    def write(self, record: SessionRecord) -> None:
        if self.session is None:
            return
        try:
            write_record(self.session, record)
        except Exception as error:  # the turn goes on; the next RouteDecided warns
            log.exception("could not write a %s record", record.kind)
            if self.failure is None:
                self.failure = f"{type(error).__name__}: {error}"

    def checkpoint(self, checkpoint: Checkpoint) -> None:
        """Keep what a write replaces before it happens; unlike other records, a failed write
        stops the edit (`ToolError`): without its checkpoint, `/undo` could not put it back."""
        if self.session is None:
            return
        try:
            write_record(self.session, CheckpointRecord(checkpoint))
        except Exception as error:
            log.exception("could not write the checkpoint of %s", checkpoint.path)
            raise ToolError(
                f"the session log could not keep the previous content of {checkpoint.path} "
                f"({type(error).__name__}); nothing was written"
            ) from None

    def take_failure(self) -> str | None:
        """The failed write to report now, forgotten once taken."""
        failure, self.failure = self.failure, None
        return failure

    def correction(self, turn: int, event: TurnCorrected) -> None:
        """A `ui_event` `correction`: which turn, from what mode to what, re-run or not."""
        correction = event.correction.to_dict() if event.correction is not None else None
        details = {
            "of": event.turn,
            "answered_mode": event.answered_mode,
            "corrected_mode": event.corrected_mode,
            "rerun": event.rerun,
            "correction": correction,
            "note": event.note,
        }
        self.write(UiEventRecord(turn, "correction", details))


@dataclass(frozen=True, slots=True)
class TurnContext:
    """The parts one turn works over (built by the engine per turn)."""

    config: EngineConfig
    """The settings this turn runs with."""
    pack: Pack
    """The modes."""
    router: Router
    """Routes (or forces) the user's message."""
    model: ChatModel
    """The chat model adapter every request goes through."""
    control: ControlSource | None
    """The control file (None: always `auto`)."""
    state: EngineState
    """The shared history and where the conversation stands (updated by the turn)."""
    recorder: Recorder
    """The session log."""
    slot: TurnSlot
    """The engine's one running turn; its stopper is where a cancel lands."""
    setups: ModeSetups
    """Resolves a mode into how it runs."""
    costs: TurnCosts
    """Prices, the ledger and the budget."""
    corrections: TurnCorrections
    """What the router decided per turn, and the user's corrections."""
    guards: Sequence[Guard]
    """What every tool call passes before it runs, in order."""
    asker: Asker | None
    """Answers questions about a turn (entering a confirm-first mode, the budget)."""
    fitter: RequestFitter
    """Fits each request into its model's context window; compacts older turns."""

    @property
    def stopper(self) -> TurnStopper:
        return self.slot.stopper
