"""The calibrated head of the embedding backend: which mode, how sure, and is it in scope.

A `Head` is fitted on the pack's examples (each mode's description counts as one), the
user's corrections to a mode, and the corrections to the fallback ("none of these"), all as
the encoder's unit vectors. It answers three things for a message vector `q`:

- **which mode**: a multinomial logistic regression over the modes, `z = q W + b`, with an
  L2 penalty (`fit_logistic`, L-BFGS in numpy). Compared on the benchmarks with a shrinkage
  (Ledoit-Wolf) Mahalanobis head with one shared covariance (`fit_mahalanobis`, the same
  logits shape): see bench/head.py and the README for the numbers and the choice;
- **how sure, if in scope**: `softmax(z / T)`, with `T` fitted on the pack's own
  cross-validation (the held-out folds' logits, least NLL), so that 0.8 is right about 80%
  of the time on messages like the pack's examples;
- **is it in scope at all**: an out-of-scope score, the energy `E = T * logsumexp(z / T)`
  blended with the nearest example's cosine (`in_scope_score`), turned into a chance by a
  logistic step fitted on the held-out folds: it is 0.5 at the 5th percentile of the
  in-scope held-out scores (`FLOOR_PERCENTILE`; the pack's examples and the user's
  corrections to a mode) and 0.98 at their median. The fallback
  threshold (`below_confidence`) therefore means the same on every pack: at 0.5, about 95%
  of messages like the pack's own and the user's corrected ones keep their route, whatever
  the encoder's scale. (The index backend, `mode_index`, keeps corrections out of its floor:
  there they raised it. Here they lower it, as they are mostly messages that fell back; the
  refit check's in-scope measure then cannot see what a lower floor costs, only the
  corrections to the fallback can: see bench/head.py and the README.)

Corrections to the fallback ("none of these", label `NONE`) teach the out-of-scope side
locally: a message's confidence is multiplied by `1 - p(none)`, where `p(none)` is a steep
step in how much nearer it is to the nearest such correction than to the nearest row of any
mode (`calibration.outside`, its bias fitted on the held-out folds and never below 0, or
`FEW_NEGATIVES_BIAS` with fewer than `MIN_NEGATIVES` of them). A "none" class inside the
regression was tried first: with its weight it pulled in-scope messages that merely shared
a topic word with the negatives below the threshold (the failure issue 31 measured), so the
rule stays local. Whether a refit may be taken is decided by `classifiers.head_refit`
(cross-validated in-scope accuracy, and out-of-scope recall on the held-out negatives).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from modes_tui.core.routing.classifiers.head_fit import fit_logistic, fit_mahalanobis, softmax

if TYPE_CHECKING:
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float64]
    Labels = npt.NDArray[np.int64]

HeadKind = Literal["logistic", "mahalanobis"]

NONE = -1
"""The label of a correction to the fallback in a `TrainingSet`."""
FOLDS = 5
FLOOR_PERCENTILE = 5.0
"""The in-scope chance is 0.5 at this percentile of the held-out in-scope scores..."""
MEDIAN_CHANCE = 0.98
"""...and this at their median. (0.95 left the default pack's conversation eval at 0.94
follow-up accuracy at its threshold of 0.7; 0.98 gives 0.95, and on snips' dev-fitted
threshold 1.4 more points of in-scope accuracy and a lower ECE.)"""
MIN_NEGATIVES = 3
"""Corrections to the fallback needed before their margin's bias is fitted."""
MIN_TEMPERATURE, MAX_TEMPERATURE = 0.02, 20.0
GAMMAS = (0.0, 2.0, 5.0, 10.0, 20.0)
"""The nearest-row weights cross-validation chooses from (least held-out NLL)."""
NEAR_IDENTICAL = 0.95
"""A correction at this cosine or nearer to a message decides its class outright."""
CORRECTION_MARGIN = 2.2
"""...by this many scaled logits over the best other mode (about 0.9 of the probability)."""
NEAR_NONE = 0.95
"""The `none` chance of a message near-identical to a correction to the fallback."""
FEW_NEGATIVES_BIAS = 0.1
"""With fewer than `MIN_NEGATIVES` corrections to the fallback (nothing to fit on), a message
counts as one of them when it is nearer to one than to any row of a mode by this cosine."""
PUSHED_SHARE = 0.01
"""Share of the held-out in-scope rows kept above the threshold that corrections to the
fallback may push below it (`protecting_bias`)."""
NEAREST_WEIGHT = 0.5
"""Share of the nearest example's cosine in the out-of-scope score (the rest: energy, scaled)."""


@dataclass(frozen=True, slots=True)
class TrainingSet:
    """What a head is fitted on: unit vectors, their mode (or `NONE`), and their origin."""

    vectors: Matrix
    """(n, d) unit vectors."""
    labels: Labels
    """Per row, the mode's index, or `NONE` for a correction to the fallback."""
    shipped: npt.NDArray[np.bool_]
    """Per row, True for a pack example or description (what cross-validation measures)."""
    modes: int
    """How many modes the roster has."""

    @property
    def negatives(self) -> int:
        """Corrections to the fallback."""
        return int((self.labels == NONE).sum())

    def subset(self, rows: Any) -> TrainingSet:
        """The rows `rows` only."""
        return TrainingSet(self.vectors[rows], self.labels[rows], self.shipped[rows], self.modes)


# --------------------------------------------------------------------------- the head


@dataclass(frozen=True, slots=True)
class Calibration:
    """What cross-validation fitted: the nearest-row weight, the temperature, the in-scope
    step and the negatives' bias."""

    temperature: float
    """Divides the mode logits before the softmax."""
    floor: float
    """The out-of-scope score at which the in-scope chance is 0.5."""
    width: float
    """Its logistic width (the chance is `MEDIAN_CHANCE` at the held-out median)."""
    nearest_weight: float = 0.0
    """`gamma`: each class's logit gains `gamma` times the cosine of its nearest row."""
    negative_bias: float = 0.0
    """The bias of `calibration.outside` for the nearest-negative margin."""


UNCALIBRATED = Calibration(1.0, -math.inf, 1.0)


@dataclass(frozen=True, slots=True)
class HeadScores:
    """One message scored by a head."""

    probabilities: Matrix
    """(M,) the mode probabilities, if in scope."""
    in_scope: float
    """The chance that the message belongs to the pack at all."""
    none: float
    """The chance that it is like the corrections to the fallback (0 without them)."""

    @property
    def confidence(self) -> float:
        """The top probability times the in-scope chance and the chance it is not `none`."""
        return float(self.probabilities.max() * self.in_scope * (1.0 - self.none))


@dataclass(frozen=True, slots=True)
class Nearness:
    """Per message, its cosines to the head's rows, summarised."""

    per_class: Matrix
    """(n, classes): the cosine of the nearest row of each mode (and of the negatives)."""
    positive: Matrix
    """(n,) the cosine of the nearest row of any mode."""
    negative: Matrix
    """(n,) the cosine of the nearest negative (-1 without negatives)."""
    learned: Labels
    """(n,) the class of the nearest row when it is a correction at `NEAR_IDENTICAL` or
    above (-2 otherwise; `NONE` for a correction to the fallback)."""


class Head:
    """A fitted head: weights, bias, its rows and its calibration."""

    def __init__(
        self, kind: HeadKind, weights: Matrix, bias: Matrix, training: TrainingSet
    ) -> None:
        self.kind = kind
        self.weights = weights
        self.bias = bias
        self.modes = training.modes
        self.rows = np.asarray(training.vectors, dtype=np.float32)
        self.labels = training.labels
        self.learned = ~training.shipped
        self.calibration = UNCALIBRATED

    def logits(self, vectors: Any) -> Matrix:
        """(n, classes) the regression's raw logits (the modes, then `none` when fitted)."""
        result: Matrix = np.asarray(vectors, dtype=np.float64) @ self.weights + self.bias
        return result

    def nearness(self, vectors: Any, *, twins: bool = True) -> Nearness:
        """Each vector's nearest row per class; without `twins`, not counting a correction
        near-identical to the vector (the user's verdict on that very text)."""
        q = np.asarray(vectors, dtype=np.float32)
        sims = (q @ self.rows.T).astype(np.float64) if len(self.rows) else np.zeros((len(q), 0))
        if not twins:
            sims = np.where((sims >= NEAR_IDENTICAL) & self.learned[None, :], -1.0, sims)
        classes = [*range(self.modes), NONE]
        per_class = np.full((len(q), len(classes)), -1.0)
        for column, label in enumerate(classes):
            members = self.labels == label
            if members.any():
                per_class[:, column] = sims[:, members].max(axis=1)
        learned = np.full(len(q), -2, dtype=np.int64)
        if sims.shape[1]:
            best = sims.argmax(axis=1)
            close = (sims[np.arange(len(q)), best] >= NEAR_IDENTICAL) & self.learned[best]
            learned[close] = self.labels[best[close]]
        return Nearness(per_class, per_class[:, :-1].max(axis=1), per_class[:, -1], learned)

    def score_rows(
        self, vectors: Any, logits: Matrix | None = None, near: Nearness | None = None
    ) -> list[HeadScores]:
        """Each row's probabilities, in-scope chance and `none` chance."""
        z = self.logits(vectors) if logits is None else logits
        near = self.nearness(vectors) if near is None else near
        return score(z, near, self.modes, self.calibration)

    def score(self, vector: Any) -> HeadScores:
        """One message vector."""
        return self.score_rows(np.asarray(vector)[None, :])[0]


def score(z: Matrix, near: Nearness, modes: int, c: Calibration) -> list[HeadScores]:
    """Probabilities, in-scope and `none` chances from logits and nearness."""
    from modes_tui.core.routing.calibration import outside

    gamma = c.nearest_weight
    mode_z = (z[:, :modes] + gamma * near.per_class[:, :modes]) / c.temperature
    # A correction near-identical to the message decides: the user said where it belongs.
    rows = np.flatnonzero(near.learned >= 0)
    mode_z[rows, near.learned[rows]] = mode_z[rows].max(axis=1) + CORRECTION_MARGIN
    probabilities = softmax(mode_z)
    energy = in_scope_score(mode_z, near.positive, c.temperature)
    chance = 1.0 / (1.0 + np.exp(-np.clip((energy - c.floor) / c.width, -60, 60)))
    has_negatives = near.negative > -1.0
    margin = np.where(has_negatives, near.negative - near.positive, -1.0)
    none = np.where(has_negatives, outside(margin, c.negative_bias), 0.0)
    none = np.where(near.learned == NONE, np.maximum(none, NEAR_NONE), none)
    return [HeadScores(probabilities[i], float(chance[i]), float(none[i])) for i in range(len(z))]


def in_scope_score(scaled: Matrix, nearest: Any, temperature: float) -> Matrix:
    """The out-of-scope score (higher: more in scope): the energy of the scaled mode logits
    (`T * logsumexp(z / T)`, in tenths) blended with the nearest example's cosine."""
    top = scaled.max(axis=1, keepdims=True)
    energy = temperature * (top[:, 0] + np.log(np.exp(scaled - top).sum(axis=1)))
    result: Matrix = (1 - NEAREST_WEIGHT) * energy * 0.1 + NEAREST_WEIGHT * np.asarray(nearest)
    return result


def fit_head(training: TrainingSet, kind: HeadKind = "logistic", l2: float | None = None) -> Head:
    """A head on `training`, uncalibrated (`calibrated` fits the rest on cross-validation)."""
    rows = np.flatnonzero(training.labels != NONE)
    x, y, classes = training.vectors[rows], training.labels[rows], training.modes
    if kind == "mahalanobis":
        weights, bias = fit_mahalanobis(x, y, classes)
    else:
        weights, bias = fit_logistic(x, y, classes, l2)
    return Head(kind, weights, bias, training)


def folds(training: TrainingSet, count: int = FOLDS) -> list[Any]:
    """Stratified folds over every row: shipped examples, corrections to a mode and
    corrections to the fallback alike (each class's shipped rows first, then its
    corrections, dealt out in turn). A correction held in every training fold would be
    measured by heads that were fitted on it: the refit check would then reward a head for
    remembering the user's corrections, not for routing messages like them (issue 31)."""
    assignment = np.full(len(training.labels), -1)
    for label in np.unique(training.labels):
        members = np.flatnonzero(training.labels == label)
        ordered = np.concatenate(
            [members[training.shipped[members]], members[~training.shipped[members]]]
        )
        assignment[ordered] = np.arange(len(ordered)) % count
    return [np.flatnonzero(assignment == f) for f in range(count)]


@dataclass(frozen=True, slots=True)
class HeldOut:
    """Out-of-fold scores of every row: shipped examples, corrections to a mode and negatives."""

    rows: Labels
    """Which rows of the training set."""
    logits: Matrix
    """Their logits from a head that never saw them (a `none` column when the full head has one)."""
    near: Nearness
    """Their nearness to that head's rows."""


def held_out(
    training: TrainingSet, kind: HeadKind = "logistic", l2: float | None = None
) -> HeldOut:
    """Cross-validated logits and nearness of every row (`folds` deals them all out)."""
    width = training.modes
    parts, logits, nears = [], [], []
    everything = np.arange(len(training.labels))
    for fold in folds(training):
        if not len(fold):
            continue
        head = fit_head(training.subset(np.setdiff1d(everything, fold)), kind, l2)
        parts.append(fold)
        logits.append(head.logits(training.vectors[fold]))
        nears.append(head.nearness(training.vectors[fold]))
    if not parts:
        empty = np.zeros(0)
        near = Nearness(np.zeros((0, training.modes + 1)), empty, empty, empty.astype(np.int64))
        return HeldOut(np.zeros(0, np.int64), np.zeros((0, width)), near)
    near = Nearness(
        np.concatenate([n.per_class for n in nears]),
        np.concatenate([n.positive for n in nears]),
        np.concatenate([n.negative for n in nears]),
        np.concatenate([n.learned for n in nears]),
    )
    return HeldOut(np.concatenate(parts), np.concatenate(logits), near)


def _fit_temperature(z: Matrix, y: Labels) -> tuple[float, float]:
    """(T, NLL) minimising the held-out NLL of each row's own mode (golden-section)."""
    rows = np.arange(len(y))

    def loss(log_t: float) -> float:
        p = softmax(z / math.exp(log_t))[rows, y]
        return float(-np.log(np.maximum(p, 1e-12)).mean())

    low, high = math.log(MIN_TEMPERATURE), math.log(MAX_TEMPERATURE)
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(40):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        if loss(a) <= loss(b):
            high = b
        else:
            low = a
    t = math.exp((low + high) / 2)
    return t, loss(math.log(t))


def fit_calibration(training: TrainingSet, out: HeldOut) -> Calibration:
    """On the held-out shipped rows: `gamma` and `T` by least NLL of each row's own mode;
    on those and the held-out corrections to a mode, the in-scope step from their scores'
    5th percentile and median; on the held-out negatives and shipped rows, the negatives'
    margin bias.

    The temperature stays on the examples alone (corrections are the hard cases, and would
    soften every route), but the in-scope step counts the corrections: a message the user
    moved out of the fallback into a mode is in scope, and a floor fitted on the examples
    alone kept sending messages like it to the fallback after the correction (issue 31:
    in-scope accuracy at the threshold after 1,000 corrected turns, +2 to +7 points on
    bench/head.py's four runs)."""
    from modes_tui.core.routing.calibration import fit_negative_bias

    labels = training.labels[out.rows]
    inside = (labels != NONE) & training.shipped[out.rows]
    if inside.sum() < 5 or training.modes < 2:
        return UNCALIBRATED
    z, y = out.logits[inside, : training.modes], labels[inside]
    sims = out.near.per_class[inside, : training.modes]
    best = min(
        ((gamma, *_fit_temperature(z + gamma * sims, y)) for gamma in GAMMAS),
        key=lambda item: item[2],
    )
    gamma, temperature = best[0], best[1]
    every = labels != NONE  # the examples and the corrections to a mode (see above)
    scaled = (
        out.logits[every, : training.modes] + gamma * out.near.per_class[every, : training.modes]
    )
    scores = in_scope_score(scaled / temperature, out.near.positive[every], temperature)
    floor = float(np.percentile(scores, FLOOR_PERCENTILE))
    median = float(np.median(scores))
    width = max((median - floor) / math.log(MEDIAN_CHANCE / (1 - MEDIAN_CHANCE)), 1e-3)
    measured = inside | (labels == NONE)
    margins = out.near.negative[measured] - out.near.positive[measured]
    bias = (
        max(fit_negative_bias(margins, (labels[measured] != NONE).astype(np.int64)), 0.0)
        if training.negatives >= MIN_NEGATIVES
        else FEW_NEGATIVES_BIAS
    )
    return Calibration(round(temperature, 5), floor, width, gamma, bias)


def calibrated(
    training: TrainingSet,
    kind: HeadKind = "logistic",
    l2: float | None = None,
    threshold: float | None = None,
) -> tuple[Head, HeldOut]:
    """A head on all of `training`, its calibration fitted on cross-validation; with the
    pack's fallback `threshold`, the negatives' bias is kept above `protecting_bias`."""
    out = held_out(training, kind, l2)
    head = fit_head(training, kind, l2)
    calibration = fit_calibration(training, out)
    if threshold is not None and training.negatives >= MIN_NEGATIVES:
        floor = protecting_bias(training, out, calibration, threshold)
        if floor > calibration.negative_bias:
            calibration = replace(calibration, negative_bias=round(floor, 5))
    head.calibration = calibration
    return head, out


def protecting_bias(
    training: TrainingSet, out: HeldOut, calibration: Calibration, threshold: float
) -> float:
    """The least bias of the negatives' rule that leaves all but `PUSHED_SHARE` of the held-out
    rows of a mode (examples and corrections to a mode) that are routed right at or above
    `threshold` without the rule still there with it.

    The bias fitted on the held-out negatives (`calibration.fit_negative_bias`) weighs them
    against the rows of the modes alike, so as corrections to the fallback pile up it
    climbs towards them and in-scope messages that merely share a neighbourhood with them
    drop below the threshold: in-scope accuracy fell while out-of-scope recall rose
    (issue 31). A row kept at confidence `c` leaves when `outside(margin, bias) > 1 -
    threshold / c`, that is when the bias is below `margin - width * logit(1 - threshold /
    c)`; the bias is the (1 - `PUSHED_SHARE`) quantile of that over the kept rows."""
    from modes_tui.core.routing.calibration import NEGATIVE_WIDTH

    labels = training.labels[out.rows]
    inside = labels != NONE
    if not inside.any():
        return -math.inf
    no_negatives = replace(calibration, negative_bias=math.inf)
    scored = score(out.logits[inside], _rows(out.near, inside), training.modes, no_negatives)
    right = np.array(
        [int(np.argmax(s.probabilities)) == y for s, y in zip(scored, labels[inside], strict=True)]
    )
    confidence = np.array([s.confidence for s in scored])
    kept = right & (confidence >= threshold)
    if not kept.any():
        return -math.inf
    room = np.clip(1.0 - threshold / confidence[kept], 1e-9, 1.0 - 1e-9)
    margins = (out.near.negative - out.near.positive)[inside][kept]
    needed = margins - NEGATIVE_WIDTH * np.log(room / (1.0 - room))
    return float(np.quantile(needed, 1.0 - PUSHED_SHARE))


def _rows(near: Nearness, rows: Any) -> Nearness:
    """`near` for the rows `rows` only."""
    return Nearness(
        near.per_class[rows], near.positive[rows], near.negative[rows], near.learned[rows]
    )


def build_training(
    mode_vectors: Sequence[Any],
    shipped: Sequence[Sequence[bool]],
    negatives: Any | None,
) -> TrainingSet:
    """A `TrainingSet` from one (n_m, d) block per mode (description and examples first,
    corrections after, `shipped` per row) and the negatives' (k, d) block."""
    blocks = [np.asarray(b, dtype=np.float32) for b in mode_vectors]
    dim = next((b.shape[1] for b in blocks if b.ndim == 2 and b.shape[0]), 0)
    neg = np.zeros((0, dim), np.float32) if negatives is None else np.asarray(negatives, np.float32)
    vectors = np.concatenate([*[b.reshape(-1, dim) for b in blocks], neg.reshape(-1, dim)])
    labels = np.concatenate(
        [np.full(len(b), m, np.int64) for m, b in enumerate(blocks)] + [np.full(len(neg), NONE)]
    ).astype(np.int64)
    mask = np.concatenate(
        [np.asarray(s, dtype=bool).reshape(-1) for s in shipped] + [np.zeros(len(neg), bool)]
    ).astype(bool)
    return TrainingSet(vectors.astype(np.float64), labels, mask, len(blocks))
