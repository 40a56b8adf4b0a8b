"""Calibrated confidence: leave-one-out scores of a pack, the fitted temperature, and ECE.

The embedding backend's confidence that a route is right is the product of two chances
(see `classifiers.mode_index`):

- that the message belongs to the chosen mode *if* it belongs to the pack at all: the
  softmax over the modes' scores at temperature `T` (`mode_probabilities`);
- that it belongs to the pack at all (`in_scope`): a logistic step at the pack's floor,
  `1 / (1 + exp(-(s_top - floor) / IN_SCOPE_WIDTH))`.

With a fixed temperature the first is 1.00 for almost any message near an example,
whether the route is right or not. Here `T` is fitted on the pack itself, so that a
confidence of 0.8 is right about 80% of the time:

- every example (shipped, or learned from a correction) is scored against the rest of the
  pack with itself left out (`loo_scores`, one matrix product for the whole pack);
- `T` minimises the negative log-likelihood of each left-out example's own mode under the
  softmax over the modes (`fit_temperature`, a golden-section search over log T).

Left-out examples stand in for the messages the router will see: both are new to the pack.
They are all in scope, so they say nothing about the second chance, which is why it is not
fitted: it stays a step at the floor, steep enough that the in-scope messages above the
floor keep their confidence. (It used to be a "none of these" option inside the softmax,
at the same temperature: every fit that sharpened the softmax then also cut the confidence
of in-scope messages just above the floor, and ECE on banking77 after 1,000 corrected
turns was 0.068; it is 0.038 now, see bench/learning.py.)
`expected_calibration_error` and `reliability` measure the result on an eval file.

Corrections to the fallback ("none of these should have answered") are negative examples:
the in-scope chance is multiplied by the chance that the message is *not* one of them,
`1 - sigmoid((neg - pos - bias) / NEGATIVE_WIDTH)`, where `neg` is its cosine to the nearest
negative example and `pos` to the nearest example of any mode. `bias` is fitted like the
temperature (`fit_negative_bias`): leave-one-out, each negative against the other negatives
and each shipped example against the negatives, least NLL with both classes weighted alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float64]

MIN_TEMPERATURE = 0.005
MAX_TEMPERATURE = 1.0
IN_SCOPE_WIDTH = 0.02
"""Score distance over which the in-scope chance goes from 50% (at the floor) to 73%."""
# With the floor at the 5th percentile, 0.02 gave the lowest ECE of widths 0.01-0.03 and
# percentiles 5-10 on held-out train rows of banking77 and snips (not their test splits).
MIN_EXAMPLES_TO_FIT = 10
"""Fewer left-out examples than this say too little: the default temperature stays."""
RELIABILITY_BINS = 10
NEGATIVE_WIDTH = 0.02
"""Cosine distance over which a message goes from half to 73% likely to be a negative."""
DEFAULT_NEGATIVE_BIAS = 0.0
"""Before there are enough negatives to fit on: nearer a negative than any example is out."""
MIN_NEGATIVES_TO_FIT = 3
"""Fewer negatives than this say too little: the default bias stays."""


def loo_scores(
    examples: Sequence[Any],
    descriptions: Any,
    weights: tuple[float, float, float, float],
    neighbours: int,
    rows: Sequence[int] | npt.NDArray[np.integer[Any]] | None = None,
) -> tuple[Matrix, npt.NDArray[np.int64]]:
    """Examples' mode scores with each left out: an (R, M) matrix and each row's mode.

    `examples` holds one (n_m, d) block of unit vectors per mode, `descriptions` the (M, d)
    description vectors, `weights` (max, top, description, centroid); `rows` picks the
    examples to leave out and score (indexes into the blocks laid end to end; default all),
    while every example stays a neighbour of the others. The formula is the embedding
    backend's (`ModeIndex`), vectorised: the left-out example is masked out of its own
    mode's nearest-example terms and subtracted from its centroid.
    """
    blocks = [np.asarray(block, dtype=np.float32) for block in examples]
    descriptions = np.asarray(descriptions, dtype=np.float32)
    sizes = [len(block) for block in blocks]
    total = sum(sizes)
    modes = len(blocks)
    labels = np.repeat(np.arange(modes), sizes).astype(np.int64)
    picked = np.arange(total) if rows is None else np.asarray(rows, dtype=np.int64)
    if total == 0 or not len(picked):
        return np.zeros((0, modes)), labels[picked]
    everything = np.concatenate([block for block in blocks if len(block)])
    queries = everything[picked]
    similarity = queries @ everything.T
    scores = (queries @ descriptions.T).astype(np.float64)  # description-only modes
    w_max, w_top, w_description, w_centroid = weights
    weight_sum = w_max + w_top + w_description + w_centroid
    start = 0
    for m, size in enumerate(sizes):
        if size == 0:
            continue
        stop = start + size
        own = (picked >= start) & (picked < stop)
        sims = similarity[:, start:stop].astype(np.float64)
        sims[np.flatnonzero(own), picked[own] - start] = -np.inf
        k = min(neighbours, size)
        top = -np.partition(-sims, k - 1, axis=1)[:, :k]
        finite = np.isfinite(top)
        counts = finite.sum(axis=1)
        best = np.where(counts > 0, top.max(axis=1), 0.0)
        top_mean = np.where(finite, top, 0.0).sum(axis=1) / np.maximum(counts, 1)
        block_sum = blocks[m].sum(axis=0).astype(np.float64)
        dots = queries.astype(np.float64) @ block_sum
        centroid = dots / max(float(np.linalg.norm(block_sum)), 1e-12)
        # The left-out example's own centroid: the mean of the others, i.e. sum minus itself.
        self_norms = (queries[own].astype(np.float64) ** 2).sum(axis=1)
        rest_norm = np.sqrt(np.maximum(block_sum @ block_sum - 2 * dots[own] + self_norms, 0.0))
        centroid[own] = (dots[own] - self_norms) / np.maximum(rest_norm, 1e-12)
        blended = (
            w_max * best + w_top * top_mean + w_description * scores[:, m] + w_centroid * centroid
        ) / weight_sum
        # An example alone in its mode leaves the mode without examples: description only.
        scores[:, m] = np.where(counts > 0, blended, scores[:, m])
        start = stop
    return scores, labels[picked]


def mode_probabilities(scores: Matrix, temperature: float) -> Matrix:
    """Per row, the softmax over the modes' scores."""
    shifted = np.exp((scores - scores.max(axis=1, keepdims=True)) / temperature)
    result: Matrix = shifted / shifted.sum(axis=1, keepdims=True)
    return result


def in_scope(top: Any, floor: float) -> Any:
    """The chance that a message whose best mode scores `top` belongs to the pack at all."""
    return 1.0 / (1.0 + np.exp(-(np.asarray(top, dtype=np.float64) - floor) / IN_SCOPE_WIDTH))


def confidences(scores: Matrix, floor: float, temperature: float) -> Matrix:
    """Per row and mode, the confidence a route to that mode would have: the mode's
    probability times the chance that the message is in scope."""
    gate = in_scope(scores.max(axis=1, keepdims=True), floor)
    result: Matrix = mode_probabilities(scores, temperature) * gate
    return result


def fit_temperature(scores: Matrix, labels: npt.NDArray[np.int64], default: float) -> float:
    """The temperature that best predicts each left-out example's mode (least NLL of the
    softmax over the modes; the in-scope chance does not depend on it).

    Returns `default` when there are too few examples or fewer than two modes to fit on.
    """
    if len(labels) < MIN_EXAMPLES_TO_FIT or scores.shape[1] < 2:
        return default
    rows = np.arange(len(labels))

    def loss(log_t: float) -> float:
        p = mode_probabilities(scores, math.exp(log_t))[rows, labels]
        return float(-np.log(np.maximum(p, 1e-12)).mean())

    low, high = math.log(MIN_TEMPERATURE), math.log(MAX_TEMPERATURE)
    ratio = (math.sqrt(5) - 1) / 2
    a, b = high - ratio * (high - low), low + ratio * (high - low)
    loss_a, loss_b = loss(a), loss(b)
    for _ in range(40):  # the bracket shrinks to 1e-8 of its width: far below what shows
        if loss_a <= loss_b:
            high, b, loss_b = b, a, loss_a
            a = high - ratio * (high - low)
            loss_a = loss(a)
        else:
            low, a, loss_a = a, b, loss_b
            b = low + ratio * (high - low)
            loss_b = loss(b)
    return round(math.exp((low + high) / 2), 5)


def outside(margin: Any, bias: float) -> Any:
    """The chance that a message is one of the negatives, from `neg - pos` (`margin`)."""
    z = (np.asarray(margin, dtype=np.float64) - bias) / NEGATIVE_WIDTH
    return 1.0 / (1.0 + np.exp(-np.clip(z, -60.0, 60.0)))


def negative_margins(examples: Any, negatives: Any, rows: Any = None) -> tuple[Any, Any]:
    """Leave-one-out `neg - pos` of the negatives (label 0) and of examples (label 1).

    `examples` is the (n, d) matrix of every mode's examples, `negatives` the (k, d) matrix of
    negative examples, `rows` the examples to score (default all). A negative is scored
    against the other negatives and every example; an example against every negative and
    the other examples.
    """
    examples = np.asarray(examples, dtype=np.float32)
    negatives = np.asarray(negatives, dtype=np.float32)
    picked = np.arange(len(examples)) if rows is None else np.asarray(rows, dtype=np.int64)
    among = negatives @ negatives.T
    np.fill_diagonal(among, -np.inf)
    neg_of_neg = among.max(axis=1) if len(negatives) > 1 else np.full(len(negatives), -1.0)
    pos_of_neg = (negatives @ examples.T).max(axis=1) if len(examples) else np.zeros(len(negatives))
    queries = examples[picked]
    neg_of_pos = (queries @ negatives.T).max(axis=1)
    own = queries @ examples.T
    own[np.arange(len(picked)), picked] = -np.inf
    pos_of_pos = own.max(axis=1) if examples.shape[0] > 1 else np.zeros(len(picked))
    margins = np.concatenate([neg_of_neg - pos_of_neg, neg_of_pos - pos_of_pos])
    labels = np.concatenate([np.zeros(len(negatives)), np.ones(len(picked))])
    return margins.astype(np.float64), labels


def fit_negative_bias(margins: Any, labels: Any) -> float:
    """The bias of `outside` that best separates negatives (label 0) from examples (label 1):
    least class-balanced NLL, by golden-section search over -0.5..0.5."""
    margins = np.asarray(margins, dtype=np.float64)
    labels = np.asarray(labels)
    negatives = labels == 0
    if negatives.sum() < MIN_NEGATIVES_TO_FIT or (~negatives).sum() < MIN_NEGATIVES_TO_FIT:
        return DEFAULT_NEGATIVE_BIAS

    def loss(bias: float) -> float:
        chance = outside(margins, bias)
        out = -np.log(np.maximum(chance[negatives], 1e-12)).mean()
        inside = -np.log(np.maximum(1.0 - chance[~negatives], 1e-12)).mean()
        return float(out + inside)

    low, high = -0.5, 0.5
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(40):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        if loss(a) <= loss(b):
            high = b
        else:
            low = a
    return round((low + high) / 2, 5)


# --------------------------------------------------------------------------- measuring


@dataclass(frozen=True, slots=True)
class ReliabilityBin:
    """One row of a reliability table: routes whose confidence fell in [low, high)."""

    low: float
    """Lower edge of the confidence bin."""
    high: float
    """Upper edge (the last bin includes 1.0)."""
    count: int
    """Routes in the bin."""
    confidence: float | None
    """Their mean confidence."""
    accuracy: float | None
    """The share of them that were right."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "low": self.low,
            "high": self.high,
            "count": self.count,
            "confidence": None if self.confidence is None else round(self.confidence, 4),
            "accuracy": None if self.accuracy is None else round(self.accuracy, 4),
        }


def reliability(
    confidence: Sequence[float], correct: Sequence[bool], bins: int = RELIABILITY_BINS
) -> tuple[ReliabilityBin, ...]:
    """Routes grouped by confidence into `bins` equal-width bins, with their accuracy."""
    table = []
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        members = [
            (c, ok)
            for c, ok in zip(confidence, correct, strict=True)
            if low <= c < high or (b == bins - 1 and c >= high)
        ]
        count = len(members)
        table.append(
            ReliabilityBin(
                round(low, 4),
                round(high, 4),
                count,
                sum(c for c, _ in members) / count if count else None,
                sum(ok for _, ok in members) / count if count else None,
            )
        )
    return tuple(table)


def expected_calibration_error(table: Sequence[ReliabilityBin]) -> float | None:
    """ECE: the count-weighted mean gap between confidence and accuracy over the bins."""
    total = sum(row.count for row in table)
    if not total:
        return None
    return (
        sum(row.count * abs((row.confidence or 0.0) - (row.accuracy or 0.0)) for row in table)
        / total
    )
