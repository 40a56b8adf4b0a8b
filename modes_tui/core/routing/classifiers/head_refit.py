"""Refitting the head after corrections, and the check that keeps learning from hurting.

A refit fits a candidate head (`classifiers.head.calibrated`) on the pack's examples plus
every live correction, and measures it on its own cross-validation, at the pack's fallback
threshold:

- **in-scope accuracy**: the share of the rows of a mode (the pack's examples and the user's
  corrections to a mode, each held out of the fold that scores it) routed to their own mode,
  and the share of them routed there at a confidence at or above the threshold (not pulled
  into the fallback);
- **out-of-scope recall**: the share of the corrections to the fallback (held out the same
  way) that fall below the threshold.

The corrections are held out like the examples: a head measured on corrections it was fitted
on looks better the more it memorises, which is not what the user sees on the next message.
The candidate is compared, row by row on the rows both measured, with the head in use (in
scope and out of scope) and with the pack's own head without corrections (its examples), and
taken only if it loses no more than `SLACK_SHARE` of them (at least one row) on any measure:
held-out rows sitting right at the threshold move either way with any refit, and a correct
correction costs a row or two of them now and then (with one row of slack, half of the
refits on banking77's stream were refused and learning stalled). Otherwise the head in use
stays and the outcome says why
(`RefitOutcome.summary`, which `modes-tui corrections` prints). The corrections themselves
are kept: a later refit tries them again with whatever came after.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from modes_tui.core.routing.classifiers.head import (
    NONE,
    Head,
    HeadKind,
    HeldOut,
    TrainingSet,
    calibrated,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

SLACK_SHARE = 0.02
"""Share of the measured rows a refit may lose on either measure before it is refused (at
least one row; see the module docstring)."""
DEFAULT_THRESHOLD = 0.5
"""The threshold the check measures at when the pack has none."""


@dataclass(frozen=True, slots=True)
class FitCheck:
    """A head's cross-validated measures on the pack, row by row."""

    in_scope_rows: Mapping[tuple[int, str], tuple[bool, bool]]
    """Per held-out row of a mode (its label and text: the pack's examples and the user's
    corrections to a mode): (routed to its own mode, and routed there at or above the
    threshold, that is not pulled into the fallback)."""
    negatives: Mapping[str, bool]
    """Per held-out correction to the fallback (by text): whether it fell below the threshold."""

    @property
    def in_scope(self) -> float:
        """Cross-validated in-scope accuracy (the right mode, threshold aside)."""
        return _share([right for right, _ in self.in_scope_rows.values()])

    @property
    def kept(self) -> float:
        """Cross-validated in-scope accuracy at the threshold."""
        return _share([kept for _, kept in self.in_scope_rows.values()])

    @property
    def out_of_scope(self) -> float | None:
        """Cross-validated out-of-scope recall on the corrections to the fallback."""
        if not self.negatives:
            return None
        return sum(self.negatives.values()) / len(self.negatives)

    def on(self, other: FitCheck | None) -> FitCheck:
        """This check restricted to the rows `other` measured too (all of them without it)."""
        if other is None:
            return self
        return FitCheck(
            {k: v for k, v in self.in_scope_rows.items() if k in other.in_scope_rows},
            {k: v for k, v in self.negatives.items() if k in other.negatives},
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "in_scope": round(self.in_scope, 4),
            "kept": round(self.kept, 4),
            "out_of_scope": None if self.out_of_scope is None else round(self.out_of_scope, 4),
            "rows": len(self.in_scope_rows),
            "negatives": len(self.negatives),
        }


@dataclass(frozen=True, slots=True)
class RefitOutcome:
    """What the last refit did."""

    taken: bool
    """Whether the new head replaced the one in use."""
    before: FitCheck | None
    """The head in use's measures (None for the first fit)."""
    after: FitCheck
    """The candidate's measures."""
    corrections: int
    """Live corrections the candidate was fitted with."""
    seconds: float
    """How long fitting and checking took."""

    def summary(self) -> str:
        """One line for `modes-tui corrections`: taken or not, and the measures that decided
        (before -> after on the rows both heads measured)."""
        verdict = "last refit taken" if self.taken else "last refit not taken"
        after = self.after
        if self.before is None:
            parts = [f"in-scope {after.in_scope:.2f}"]
            if after.out_of_scope is not None:
                parts.append(f"out-of-scope {after.out_of_scope:.2f}")
        else:
            before, now = self.before.on(after), after.on(self.before)
            parts = [f"in-scope {before.in_scope:.2f} -> {now.in_scope:.2f}"]
            if before.kept != now.kept:
                parts.append(f"above the threshold {before.kept:.2f} -> {now.kept:.2f}")
            if now.out_of_scope is not None and before.out_of_scope is not None:
                parts.append(f"out-of-scope {before.out_of_scope:.2f} -> {now.out_of_scope:.2f}")
        return (
            f"{verdict}: {', '.join(parts)} ({self.corrections} corrections, {self.seconds:.2f} s)"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain data, for the refit status file beside the corrections."""
        return {
            "taken": self.taken,
            "before": None if self.before is None else self.before.to_dict(),
            "after": self.after.to_dict(),
            "corrections": self.corrections,
            "seconds": round(self.seconds, 3),
            "summary": self.summary(),
        }


def _share(flags: Sequence[bool]) -> float:
    """The share of True (1.0 of nothing: no rows, nothing lost)."""
    return sum(flags) / len(flags) if flags else 1.0


def measure(
    head: Head, training: TrainingSet, out: HeldOut, texts: Sequence[str], threshold: float
) -> FitCheck:
    """The cross-validated measures of `head` (calibrated on `out`): every held-out row."""
    scored = head.score_rows(training.vectors[out.rows], out.logits, out.near)
    rows: dict[tuple[int, str], tuple[bool, bool]] = {}
    negatives: dict[str, bool] = {}
    for row, scores in zip(out.rows, scored, strict=True):
        label = int(training.labels[row])
        confident = scores.confidence >= threshold
        if label == NONE:
            negatives[texts[row]] = not confident
        else:
            right = int(np.argmax(scores.probabilities)) == label
            rows[(label, texts[row])] = (right, bool(confident and right))
    return FitCheck(rows, negatives)


def refuses(candidate: FitCheck, current: FitCheck | None, base: FitCheck | None) -> bool:
    """Whether the candidate, on the rows both measured, loses more than `slack` of them
    against the head in use or the pack's head without corrections (in-scope: the right
    mode, and the right mode above the threshold), or against the head in use on the
    corrections to the fallback (out-of-scope)."""
    for reference in (current, base):
        if reference is None:
            continue
        shared = [k for k in reference.in_scope_rows if k in candidate.in_scope_rows]
        allowed = slack(len(shared))
        for part in (0, 1):
            was = [reference.in_scope_rows[k][part] for k in shared]
            now = [candidate.in_scope_rows[k][part] for k in shared]
            if sum(was) - sum(now) > allowed:
                return True
    if current is not None:
        shared_negatives = [t for t in current.negatives if t in candidate.negatives]
        lost = sum(current.negatives[t] and not candidate.negatives[t] for t in shared_negatives)
        gained = sum(candidate.negatives[t] and not current.negatives[t] for t in shared_negatives)
        if lost - gained > slack(len(shared_negatives)):
            return True
    return False


def slack(rows: int) -> int:
    """Rows a refit may lose out of `rows` measured."""
    return max(1, int(rows * SLACK_SHARE))


@dataclass(frozen=True, slots=True)
class Fitted:
    """A head with its check, ready to route with."""

    head: Head
    """The calibrated head."""
    check: FitCheck
    """Its cross-validated measures."""


def refit(
    training: TrainingSet,
    texts: Sequence[str],
    current: Fitted | None,
    base: Fitted | None,
    threshold: float | None,
    kind: HeadKind = "logistic",
    withdrawn: bool = False,
) -> tuple[Fitted, RefitOutcome]:
    """Fit a candidate on `training` and take it unless `refuses`: (the head to use, outcome).

    `texts` names each training row (the negatives are compared by text); `current` is the
    head in use, `base` the pack's head without corrections (None: this is the base).
    `withdrawn`: the candidate's corrections are texts the head in use already learned from,
    fewer of them or moved to another mode (the user removed, cleared or re-did their own
    corrections); it is taken whatever it measures, as the user asked.
    """
    started = time.perf_counter()
    level = DEFAULT_THRESHOLD if threshold is None else threshold
    head, out = calibrated(training, kind, threshold=level)
    check = measure(head, training, out, texts, level)
    candidate = Fitted(head, check)
    reference = current.check if current is not None else None
    taken = (
        current is None
        or withdrawn
        or not refuses(check, reference, base.check if base is not None else None)
    )
    corrections = int((~training.shipped).sum())
    outcome = RefitOutcome(taken, reference, check, corrections, time.perf_counter() - started)
    return (candidate if taken else current or candidate), outcome
