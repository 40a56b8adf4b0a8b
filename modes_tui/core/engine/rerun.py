"""Correcting a turn: which turn, which mode, what is recorded, and what the engine re-runs.

The engine owns one `TurnCorrections`. After every route it is told what the router saw
(`routed`), so that a later correction records exactly that: the message and the history
window as the classifier read them, the mode it picked, the classifier and its encoder.

Four ways in, one record:
- `plan(turn, mode)`: the picker, `ctrl+e` and `/wrong MODE`. The latest turn is re-run in
  the chosen mode (the engine does that); an earlier turn only gets the correction recorded,
  because re-running it would leave the turns after it answering a reply that is gone.
- `chosen(turn, mode)`: the router was unsure and the user took `mode` before the turn ran
  (the doubt dialog); nothing is re-run.
- `resend(...)`: the user forced a mode right after an auto-routed turn and sent the same
  text again; that says "the router was wrong" as clearly as the picker does.
- `undo()`: forget the latest correction of this session (the answers stay).

Correcting a turn twice replaces its correction; correcting it back to the router's own
choice removes it. Nothing here touches the control file: a correction fixes one turn.
The store is injected (`CorrectionRecorder`), so the core never imports `modes_tui.store`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from modes_tui.core.control_setting import OFF
from modes_tui.core.engine.ports import CorrectionRecorder
from modes_tui.core.errors import CorrectionRefused, ModesError, UnknownMode
from modes_tui.core.history.events import TurnCorrected
from modes_tui.core.values.correction import Correction
from modes_tui.core.values.entry import HistoryEntry
from modes_tui.core.values.route import Route, RoutedTurn

if TYPE_CHECKING:
    from modes_tui.core.history.conversation import Message
    from modes_tui.core.routing.router import Router

log = logging.getLogger("modes_tui.corrections")

CORRECTED_REASON = "Corrected by you (was {mode})"
"""The reason on the route of a re-run: the user decided, not the router."""
NO_MODE = "no mode"


@dataclass(frozen=True, slots=True)
class CorrectionPlan:
    """A checked request to correct one turn; `TurnCorrections.apply` carries it out."""

    target: RoutedTurn
    """The turn."""
    mode: str
    """The mode the user chose."""
    rerun: bool
    """The engine answers the turn again in `mode` (only the latest turn)."""
    correction: Correction | None
    """What to record (None: the user went back to the router's own choice)."""

    @property
    def reason(self) -> str:
        """The reason on the re-run's route: the user decided, and what it replaces."""
        return CORRECTED_REASON.format(mode=self.target.answered or NO_MODE)


class TurnCorrections:
    """The corrections of one engine's conversation."""

    def __init__(
        self,
        recorder: CorrectionRecorder | None,
        router: Router,
        *,
        session_id: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.recorder = recorder
        self.router = router
        self.session_id = session_id
        self.turns: dict[int, RoutedTurn] = {}
        """Turn -> what the router decided for it."""
        self.made: list[Correction] = []
        """Corrections recorded in this session, oldest first (what `undo` walks back)."""
        self._by_turn: dict[int, Correction] = {}
        self._epoch = 0

    # ------------------------------------------------------------------ bookkeeping

    def routed(self, turn: int, text: str, route: Route, user_index: int) -> None:
        """The router (or the caller) decided a turn; a retry decides again."""
        self.turns[turn] = RoutedTurn(turn, text, route, user_index, self._epoch, _mode_of(route))

    def kept_mode(self, turn: int) -> tuple[str, str] | None:
        """(mode, reason) when the user's correction answers `turn`: a retry keeps it."""
        target = self.turns.get(turn)
        if target is None or target.answered is None:
            return None
        if target.answered == _mode_of(target.route):
            return None
        return target.answered, CORRECTED_REASON.format(mode=_mode_of(target.route) or NO_MODE)

    def cleared(self) -> None:
        """`/clear`: earlier turns can still be corrected, but no longer re-run."""
        self._epoch += 1

    # ------------------------------------------------------------------ the three ways

    def plan(
        self, turn: int | None, mode: str, *, latest: int, messages: Sequence[Message]
    ) -> CorrectionPlan:
        """Check a correction of `turn` (None: the latest) to `mode`; raise what is wrong."""
        number = latest if turn is None else turn
        target = self.turns.get(number)
        if target is None:
            if not self.turns:
                raise CorrectionRefused("there is no turn to correct yet: send a message first")
            raise CorrectionRefused(
                f"there is no turn {number} in this conversation (turns 1 to {latest})"
            )
        try:
            self.router.force(mode)
        except UnknownMode as error:
            raise CorrectionRefused(f"cannot correct turn {number} to {mode!r}: {error}") from None
        if mode == target.answered:
            raise CorrectionRefused(
                f"turn {number} was already answered in {mode}; choose another mode"
            )
        rerun = number == latest and self._in_history(target, messages)
        return CorrectionPlan(target, mode, rerun, self._unless_routed(target, mode, messages))

    def apply(self, plan: CorrectionPlan) -> TurnCorrected:
        """Record the plan's correction (replacing the turn's earlier one); say what happened."""
        target = plan.target
        note = ""
        previous = self._by_turn.pop(target.turn, None)
        if previous is not None:
            note = self._forget(previous)
        recorded = None
        if plan.correction is not None:
            recorded, problem = self._add(plan.correction)
            note = note or problem
        elif previous is not None and not note:
            note = f"the router's own choice ({plan.mode}) stands; its correction is removed"
        if plan.rerun:
            self.turns[target.turn] = RoutedTurn(
                target.turn, target.text, target.route, target.user_index, target.epoch, plan.mode
            )
        return TurnCorrected(target.turn, target.answered, plan.mode, plan.rerun, recorded, note)

    def resend(
        self, turn: int, text: str, route: Route, messages: Sequence[Message]
    ) -> TurnCorrected | None:
        """Turn `turn` forced a mode and repeated the previous, auto-routed message: record
        that as a correction of the previous turn (None when it is not such a resend)."""
        previous = self.turns.get(turn - 1)
        mode = _mode_of(route)
        if (
            previous is None
            or mode is None
            or not route.forced
            or previous.route.forced
            or previous.epoch != self._epoch
            or previous.text.strip() != text.strip()
            or mode == previous.answered
        ):
            return None
        correction = self._unless_routed(previous, mode, messages)
        return self.apply(CorrectionPlan(previous, mode, False, correction))

    def chosen(self, turn: int, mode: str, messages: Sequence[Message]) -> TurnCorrected:
        """The user took `mode` for `turn` when the router was unsure, before the turn ran:
        recorded as a correction of the router's pick (`routed` was told it), nothing re-run."""
        target = self.turns[turn]
        plan = CorrectionPlan(target, mode, False, self._unless_routed(target, mode, messages))
        event = self.apply(plan)
        self.turns[turn] = replace(target, answered=mode)  # a retry keeps the user's mode
        return event

    def undo(self) -> Correction:
        """Forget the latest correction of this session; the answers stay as they are."""
        if not self.made:
            raise CorrectionRefused("there is no correction to undo in this session")
        correction = self.made.pop()
        if self._by_turn.get(correction.turn or 0) is correction:
            del self._by_turn[correction.turn or 0]
        problem = self._forget(correction)
        if problem:
            raise CorrectionRefused(problem)
        return correction

    # ------------------------------------------------------------------ parts

    def _in_history(self, target: RoutedTurn, messages: Sequence[Message]) -> bool:
        """The turn's user message is still where it was (no `/clear` since)."""
        index = target.user_index
        return (
            target.epoch == self._epoch
            and 0 <= index < len(messages)
            and messages[index].role == "user"
            and messages[index].content == target.text
        )

    def _unless_routed(
        self, target: RoutedTurn, mode: str, messages: Sequence[Message]
    ) -> Correction | None:
        """The correction to record; None when `mode` is what the router picked (the user
        went back to it after an earlier correction)."""
        if not target.route.forced and mode == target.route.mode_name:
            return None
        return self._correction(target, mode, messages)

    def _correction(self, target: RoutedTurn, mode: str, messages: Sequence[Message]) -> Correction:
        text, history = target.text, tuple[HistoryEntry, ...]()
        if self._in_history(target, messages):
            seen, window = self.router.view(messages[: target.user_index + 1])
            text, history = seen, tuple(window)
        route = target.route
        info = route.classifier
        backend = info.with_ if info is not None else ("caller" if route.forced else "")
        return Correction(
            text=text,
            corrected_mode=mode,
            routed_mode=None if route.forced else route.mode_name,
            history=history,
            pack=self.router.pack.name,
            classifier=backend,
            encoder=_encoder(route),
            session_id=self.session_id(),
            turn=target.turn,
        )

    def _add(self, correction: Correction) -> tuple[Correction | None, str]:
        if self.recorder is None:
            return None, "corrections are not kept in this run (no store)"
        try:
            recorded = self.recorder.add(correction)
        except (OSError, ModesError) as error:  # the re-run still happens; the user is told
            log.exception("could not record a correction")
            return None, f"the correction could not be saved: {error}"
        self.made.append(recorded)
        if recorded.turn is not None:
            self._by_turn[recorded.turn] = recorded
        return recorded, ""

    def _forget(self, correction: Correction) -> str:
        if correction in self.made:
            self.made.remove(correction)
        if self.recorder is None:
            return ""
        try:
            self.recorder.remove(correction.id)
        except (OSError, ModesError) as error:
            log.exception("could not remove correction %s", correction.id)
            return f"correction {correction.id} could not be removed: {error}"
        return ""


def _mode_of(route: Route) -> str | None:
    # `off` is a reserved setting, never a mode
    return None if route.mode_name == OFF and route.forced else route.mode_name


def _encoder(route: Route) -> str | None:
    """The encoder behind an embedding decision: the model the embedding backend names."""
    info = route.classifier
    if info is None or info.with_ != "embedding":
        return None
    return info.model
