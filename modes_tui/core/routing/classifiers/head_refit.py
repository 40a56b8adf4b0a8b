"""Refitting the head after corrections, and the check that keeps learning from hurting.

A refit fits a candidate head (`classifiers.head.calibrated`) on the pack's examples plus
every live correction, and measures it on its own cross-validation, at the pack's fallback
threshold:

- **in-scope accuracy**: the share of the pack's shipped examples (each held out of the
  fold that scores it) routed to their own mode, and the share of them routed there at a
  confidence at or above the threshold (not pulled into the fallback);
- **out-of-scope recall**: the share of the corrections to the fallback (held out the same
  way) that fall below the threshold.

The candidate is taken only if neither is lower than the head in use's (on the negatives
both know) or the pack's own head without corrections, by more than `SLACK_SHARE` of the
rows (at least one): held-out examples sitting right at the threshold move either way with
any refit, and a correct correction costs a row or two of them now and then (with one row
of slack, half of the refits on banking77's stream were refused and learning stalled). Otherwise the head in use stays and the outcome says why
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
    """A head's cross-validated measures on the pack."""

    in_scope_right: int
    """Held-out shipped examples routed to their own mode."""
    in_scope_kept: int
    """Of them, those at or above the threshold (not pulled into the fallback)."""
    in_scope_rows: int
    """Shipped examples measured."""
    negatives: Mapping[str, bool]
    """Per correction to the fallback (by text): whether it fell below the threshold."""

    @property
    def in_scope(self) -> float:
        """Cross-validated in-scope accuracy (the right mode, threshold aside)."""
        return self.in_scope_right / self.in_scope_rows if self.in_scope_rows else 1.0

    @property
    def kept(self) -> float:
        """Cross-validated in-scope accuracy at the threshold."""
        return self.in_scope_kept / self.in_scope_rows if self.in_scope_rows else 1.0

    @property
    def out_of_scope(self) -> float | None:
        """Cross-validated out-of-scope recall on the corrections to the fallback."""
        if not self.negatives:
            return None
        return sum(self.negatives.values()) / len(self.negatives)

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "in_scope": round(self.in_scope, 4),
            "kept": round(self.kept, 4),
            "out_of_scope": None if self.out_of_scope is None else round(self.out_of_scope, 4),
            "rows": self.in_scope_rows,
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
        """One line for `modes-tui corrections`: taken or not, and the measures that decided."""
        verdict = "last refit taken" if self.taken else "last refit not taken"
        before, after = self.before, self.after
        parts = [
            f"in-scope {after.in_scope:.2f}"
            if before is None
            else f"in-scope {before.in_scope:.2f} -> {after.in_scope:.2f}"
        ]
        if before is not None and before.in_scope_kept != after.in_scope_kept:
            parts.append(f"above the threshold {before.kept:.2f} -> {after.kept:.2f}")
        if after.out_of_scope is not None:
            old = None if before is None else _recall_on(before, after)
            parts.append(
                f"out-of-scope {after.out_of_scope:.2f}"
                if old is None
                else f"out-of-scope {old:.2f} -> {_recall_on(after, before):.2f}"
            )
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


def _recall_on(check: FitCheck, other: FitCheck | None) -> float:
    """`check`'s recall on the negatives both checks know (all of its own without `other`)."""
    shared = [t for t in check.negatives if other is None or t in other.negatives]
    if not shared:
        return check.out_of_scope or 0.0
    return sum(check.negatives[t] for t in shared) / len(shared)


def measure(
    head: Head, training: TrainingSet, out: HeldOut, texts: Sequence[str], threshold: float
) -> FitCheck:
    """The cross-validated measures of `head` (calibrated on `out`)."""
    scored = head.score_rows(training.vectors[out.rows], out.logits, out.near)
    right = kept = rows = 0
    negatives: dict[str, bool] = {}
    for row, scores in zip(out.rows, scored, strict=True):
        label = int(training.labels[row])
        confident = scores.confidence >= threshold
        if label == NONE:
            negatives[texts[row]] = not confident
        elif training.shipped[row]:
            rows += 1
            mode_right = int(np.argmax(scores.probabilities)) == label
            right += mode_right
            kept += bool(confident and mode_right)
    return FitCheck(right, kept, rows, negatives)


def refuses(candidate: FitCheck, current: FitCheck | None, base: FitCheck | None) -> bool:
    """Whether the candidate loses more than `slack` rows against the head in use or
    the pack's head without corrections (in-scope), or against the head in use on the
    negatives both know (out-of-scope)."""
    for reference in (current, base):
        if reference is None:
            continue
        allowed = slack(reference.in_scope_rows)
        if candidate.in_scope_right < reference.in_scope_right - allowed:
            return True
        if candidate.in_scope_kept < reference.in_scope_kept - allowed:
            return True
    if current is not None:
        shared = [t for t in current.negatives if t in candidate.negatives]
        lost = sum(current.negatives[t] and not candidate.negatives[t] for t in shared)
        gained = sum(candidate.negatives[t] and not current.negatives[t] for t in shared)
        if lost - gained > slack(len(shared)):
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
    head, out = calibrated(training, kind)
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
