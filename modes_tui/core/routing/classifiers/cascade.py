"""The cascade backend: a cheap classifier first, a stronger one only when it is unsure.

`first` decides alone when its decision names an available mode with a confidence of at
least `below` (router.yaml `cascade.below`, the first stage's own threshold). Otherwise
(unsure, unscored, no mode, an unknown mode, or the first stage failed) `then` decides.
Every decision made is kept in `last_stages` (the router copies it to `Route.stages`), and
`trace()` names the stages that ran.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from modes_tui.core.packs.profiles import Profile
from modes_tui.core.routing.ports import Classifier
from modes_tui.core.routing.router import trace_of, validate_decision
from modes_tui.core.values.entry import HistoryEntry
from modes_tui.core.values.route import ClassifierInfo, Decision


class CascadeClassifier:
    """`first`, then `then` when `first` is below `below`."""

    def __init__(self, first: Classifier, then: Classifier, below: float) -> None:
        self.first = first
        self.then = then
        self.below = below
        self.last_stages: tuple[Decision, ...] = ()
        """The decisions of the last call, in order."""
        self.last_ran: tuple[str, ...] = ()
        """Which stages ran on the last call ("first", "then")."""
        self.first_error: BaseException | None = None
        """What the first stage raised on the last call, if it failed."""

    async def classify(
        self,
        message: str,
        history: Sequence[HistoryEntry],
        modes: Sequence[Profile],
        instructions: str,
        inputs: Mapping[str, Any],
    ) -> Decision:
        """The first stage's decision if it is sure enough, else the second's."""
        self.last_stages, self.last_ran, self.first_error = (), ("first",), None
        names = {mode.name for mode in modes}
        first: Decision | None = None
        try:
            first = await _ask(self.first, message, history, modes, instructions, inputs)
        except Exception as error:  # noqa: BLE001 - a failed cheap stage hands over to the next
            self.first_error = error
        if first is not None:
            self.last_stages = (first,)
            if (
                first.mode_name in names
                and first.confidence is not None
                and first.confidence >= self.below
            ):
                return first
        self.last_ran = ("first", "then")
        second = await _ask(self.then, message, history, modes, instructions, inputs)
        self.last_stages = (*self.last_stages, second)
        return second

    def trace(self) -> ClassifierInfo:
        """`cascade`, with the stages that ran: `embedding local/... -> chat openai/...`."""
        stages = [trace_of(self.first)]
        if "then" in self.last_ran:
            stages.append(trace_of(self.then))
        parts = []
        for info, label in zip(stages, ("first", "then"), strict=False):
            text = f"{info.with_} {info.model}" if info.model else info.with_
            if label == "first" and self.first_error is not None:
                text += " (failed)"
            parts.append(text)
        return ClassifierInfo("cascade", " -> ".join(parts))


async def _ask(
    classifier: Classifier,
    message: str,
    history: Sequence[HistoryEntry],
    modes: Sequence[Profile],
    instructions: str,
    inputs: Mapping[str, Any],
) -> Decision:
    result = classifier.classify(message, history, modes, instructions, inputs)
    if inspect.isawaitable(result):
        result = await result
    return validate_decision(result)
