"""`/wrong` and the picker's choice, once for both front ends: what the argument asks, and
the engine's correction or undo as an outcome the front end shows in its own words.

`/wrong MODE` says the last turn belonged to MODE (it is answered again there, see
`core.engine.rerun`); `/wrong undo` forgets the latest correction (the answers stay);
`/wrong` alone asks which mode (the app opens a picker, the REPL says how to type it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from modes_tui.core.errors import ModesError
from modes_tui.frontend.commands import UNDO

if TYPE_CHECKING:
    from modes_tui.core.engine.ports import TurnEngine
    from modes_tui.core.history.events import TurnEvent
    from modes_tui.core.values.correction import Correction

__all__ = [
    "CorrectTo",
    "CorrectionRefused",
    "PickMode",
    "Rerun",
    "Undo",
    "Undone",
    "WrongRequest",
    "correct",
    "read_wrong",
    "undo",
]


@dataclass(frozen=True, slots=True)
class CorrectTo:
    """`/wrong MODE` (or a picker's choice): the turn belonged to `mode`."""

    mode: str


@dataclass(frozen=True, slots=True)
class Undo:
    """`/wrong undo`: forget the latest correction."""


@dataclass(frozen=True, slots=True)
class PickMode:
    """`/wrong` alone: the user has not said which mode yet."""


WrongRequest = CorrectTo | Undo | PickMode


def read_wrong(argument: str) -> WrongRequest:
    """What `/wrong ARGUMENT` asks for (the argument is checked by the command table)."""
    if not argument:
        return PickMode()
    return Undo() if argument == UNDO else CorrectTo(argument)


@dataclass(frozen=True, slots=True)
class Rerun:
    """The correction is accepted: play `events` (the folded first answer, the re-run)."""

    events: AsyncIterator[TurnEvent]


@dataclass(frozen=True, slots=True)
class Undone:
    """The latest correction is forgotten; the answers stay."""

    correction: Correction

    def change(self) -> str:
        """`chat → code`: what the correction had said."""
        gone = self.correction
        return f"{gone.routed_mode or 'no mode'} → {gone.corrected_mode}"


@dataclass(frozen=True, slots=True)
class CorrectionRefused:
    """The engine refused (no turn yet, nothing to undo, an unknown mode); `reason` says why."""

    reason: str


def correct(
    engine: TurnEngine, mode: str, *, turn: int | None = None, rerun: bool = True
) -> Rerun | CorrectionRefused:
    """Say turn `turn` (None: the last) belonged to `mode` (`rerun=False`: keep a hand-off,
    record it only)."""
    try:
        return Rerun(engine.correct(mode, turn=turn, rerun=rerun))
    except ModesError as error:
        return CorrectionRefused(str(error))


def undo(engine: TurnEngine) -> Undone | CorrectionRefused:
    """Forget the latest correction of this session."""
    try:
        return Undone(engine.undo_correction())
    except ModesError as error:
        return CorrectionRefused(str(error))
