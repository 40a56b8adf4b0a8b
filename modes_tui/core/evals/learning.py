"""`modes-tui eval --learn`: a user who corrects every wrong route as it happens, including a
wrong route of a line that expects the fallback, and the learning curve that comes of it.

It scores each route the way the evaluations do (`scoring.judge`), so it lives with them,
above routing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from modes_tui.core.evals.scoring import Outcome, judge
from modes_tui.core.routing.input import split_transcript
from modes_tui.core.routing.router import Router
from modes_tui.core.values.correction import Correction

LEARN_REFIT_WAIT = 120.0
"""How long the line after a correction waits for the head's refit."""


@dataclass(frozen=True, slots=True)
class LearningBlock:
    """One block of consecutive eval lines, routed with what was learned before each."""

    first: int
    """The 1-based index of the block's first case."""
    last: int
    """The 1-based index of its last case."""
    correct: int
    """Routes that were right when they were made."""
    corrections: int
    """Corrections recorded so far (this run), at the end of the block."""

    @property
    def cases(self) -> int:
        """Cases in the block."""
        return self.last - self.first + 1

    @property
    def accuracy(self) -> float:
        """correct / cases."""
        return self.correct / self.cases

    def to_dict(self) -> dict[str, Any]:
        """Plain data for `--json`."""
        return {
            "first": self.first,
            "last": self.last,
            "cases": self.cases,
            "correct": self.correct,
            "accuracy": round(self.accuracy, 4),
            "corrections": self.corrections,
        }


@dataclass(frozen=True, slots=True)
class LearningCurve:
    """What `modes-tui eval FILE --learn` measured."""

    blocks: tuple[LearningBlock, ...]
    """Accuracy per block of lines, in file order."""
    corrections: tuple[Correction, ...]
    """The corrections this run recorded, oldest first."""
    fallback_corrections: int
    """Of the corrections, those of lines that expect the fallback (`"mode": null`)."""

    @property
    def cases(self) -> int:
        """Lines routed."""
        return sum(block.cases for block in self.blocks)

    @property
    def accuracy(self) -> float:
        """Right routes over all lines, as they happened."""
        return sum(b.correct for b in self.blocks) / self.cases if self.blocks else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain data for `--json`."""
        return {
            "cases": self.cases,
            "accuracy": round(self.accuracy, 4),
            "corrections": len(self.corrections),
            "fallback_corrections": self.fallback_corrections,
            "blocks": [block.to_dict() for block in self.blocks],
            "correction_ids": [c.id for c in self.corrections],
        }


async def learn_from_cases(
    pack: Any,
    classifier: Any,
    cases: Sequence[Any],
    store: Any,
    block: int = 25,
    on_progress: Callable[[int, int], None] | None = None,
) -> LearningCurve:
    """Route each case with what was learned so far; record each wrong route as a correction.

    This simulates a user who corrects every wrong route as it happens. The classifier must
    read its corrections from `store` (so the next line is routed with the new ones); a case
    that expects the fallback and did not get it is corrected to the fallback (a negative
    example for the embedding backend, `split_negatives`).
    """
    if block < 1:
        raise ValueError("a block holds at least one line")
    router = Router(pack, classifier)
    patient = getattr(classifier, "wait_for_refits", None)
    if callable(patient):
        patient(LEARN_REFIT_WAIT)  # each next line is routed with what was just learned
    fallback = pack.router.fallback
    threshold = pack.router.below_confidence
    blocks: list[LearningBlock] = []
    learned: list[Correction] = []
    to_fallback = 0
    correct = 0
    start = 1
    for number, case in enumerate(cases, start=1):
        route = await router.route(case.conversation(), **case.route_options())
        _, history = split_transcript(case.conversation())
        judged = judge(Outcome(case, route), threshold, fallback)
        if judged.correct:
            correct += 1
        else:
            # A line expecting the fallback is corrected to it: a negative example.
            to_fallback += case.mode is None
            info = route.classifier
            learned.append(
                store.add(
                    Correction(
                        text=case.text,
                        corrected_mode=case.mode or fallback,
                        routed_mode=route.mode_name,
                        history=tuple(pack.router.history.apply(history)),
                        pack=pack.name,
                        classifier=info.with_ if info else "",
                        encoder=info.model if info and info.with_ == "embedding" else None,
                        source="eval",
                    )
                )
            )
        if number - start + 1 == block or number == len(cases):
            blocks.append(LearningBlock(start, number, correct, len(learned)))
            start, correct = number + 1, 0
        if on_progress is not None:
            on_progress(number, len(cases))
    return LearningCurve(tuple(blocks), tuple(learned), to_fallback)


def format_curve(curve: LearningCurve, *, title: str = "") -> str:
    """The learning curve as the terminal shows it."""
    lines = [title] if title else []
    lines.append(
        f"accuracy as it happened {curve.accuracy:.3f} over {curve.cases} lines; "
        f"{len(curve.corrections)} corrections recorded"
        + (
            f", {curve.fallback_corrections} of them of lines expecting the fallback "
            "(negative examples)"
            if curve.fallback_corrections
            else ""
        )
    )
    lines += ["", f"{'lines':>11}  {'accuracy':>8}  {'corrections so far':>18}"]
    for block in curve.blocks:
        span = f"{block.first}-{block.last}"
        lines.append(f"{span:>11}  {block.accuracy:>8.2f}  {block.corrections:>18}")
    return "\n".join(lines)
