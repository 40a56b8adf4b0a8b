"""A roster's vectors and the scoring formula of the embedding backend (`ModeIndex`).

Scoring (all vectors L2-normalised, so a dot product is a cosine). For a message vector
`q` and a mode `m` with examples `e_1..e_n`, description `d` and centroid `c` (the
normalised mean of the examples):

    s_m = 0.4 * max_i cos(q, e_i)              nearest example
        + 0.2 * mean of the 3 highest cos(q, e_i)
        + 0.2 * cos(q, d)                      what the mode says it is for
        + 0.2 * cos(q, c)                      the mode's examples as a whole

A mode without examples scores `cos(q, d)`. The probabilities are a softmax over the
available modes, `p_m = exp(s_m / T) / sum_k exp(s_k / T)`. The confidence that the route
is right multiplies the top probability by the chance that the message belongs to the pack
at all, a logistic step at the pack's own floor `tau` (`core.routing.calibration.in_scope`):

    confidence = p_top / (1 + exp(-(s_top - tau) / 0.02))

so it is high only when one mode clearly leads the others *and* the message is as close to
the pack as the pack's own examples are. `tau` is measured on the pack, not guessed: each
shipped example is scored leave-one-out against the rest of the pack, and `tau` is the 5th
percentile of those top scores minus 0.05. It adapts to any encoder's cosine scale; a
pack with too few examples uses `DEFAULT_FLOOR`.

`T = 0.05` is the default; each pack's own is fitted leave-one-out over its examples, with
its corrections as neighbours (`core.routing.calibration`), so that a confidence of 0.8 is right
about 80% of the time.

Negative examples (corrections to the fallback, `negatives=`) lower the in-scope chance of
the messages nearer to them than to any example (`core.routing.calibration.outside`, its bias
fitted on the pack leave-one-out, like the temperature).

The `unrelated` cosine of the follow-up rule (see `classifiers.embedding`) is measured
here too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from modes_tui.core.routing.calibration import (
    fit_negative_bias,
    fit_temperature,
    in_scope,
    loo_scores,
    negative_margins,
    outside,
)

if TYPE_CHECKING:
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

WEIGHT_MAX = 0.4
WEIGHT_TOP = 0.2
WEIGHT_DESCRIPTION = 0.2
WEIGHT_CENTROID = 0.2
NEIGHBOURS = 3
TEMPERATURE = 0.05
FLOOR_PERCENTILE = 5.0
FLOOR_MARGIN = 0.05
DEFAULT_FLOOR = 0.15
MIN_EXAMPLES_FOR_FLOOR = 5
UNRELATED_PERCENTILE = 85.0
DEFAULT_UNRELATED = 0.10
UNRELATED_SAMPLE = 400
CALIBRATION_ROWS = 2000


@dataclass(frozen=True, slots=True)
class ScoringParams:
    """The knobs of the scoring formula (see the module docstring)."""

    weight_max: float = WEIGHT_MAX
    """Weight of the nearest example's cosine."""
    weight_top: float = WEIGHT_TOP
    """Weight of the mean cosine of the `neighbours` nearest examples."""
    weight_description: float = WEIGHT_DESCRIPTION
    """Weight of the description's cosine."""
    weight_centroid: float = WEIGHT_CENTROID
    """Weight of the examples' centroid's cosine."""
    neighbours: int = NEIGHBOURS
    """How many nearest examples the `top` term averages."""
    temperature: float = TEMPERATURE
    """Softmax temperature over mode scores when it is not calibrated (or cannot be)."""
    calibrate: bool = True
    """Fit the temperature on the pack, leave-one-out (`core.routing.calibration`)."""
    follow_up: bool = True
    """Mix in the previous user message's scores, weighted by the message's doubt."""


@dataclass(frozen=True, slots=True)
class Scored:
    """The outcome of scoring one message against one roster."""

    mode: str
    """The mode with the highest score."""
    scores: Mapping[str, float]
    """s_m per mode."""
    probabilities: Mapping[str, float]
    """softmax(s / T) over the roster."""
    confidence: float
    """The top probability times the chance that the message is in scope at all."""
    nearest: str
    """The chosen mode's closest example (or `description of <mode>`)."""
    nearest_similarity: float
    """Its cosine to the message."""
    nearest_note: str | None = None
    """Where the nearest example came from when it was learned (`correction of <date>`)."""
    negative: str | None = None
    """The negative example (a correction to the fallback) that lowered the confidence."""
    negative_note: str | None = None
    """Where that negative came from (`correction of <date>`)."""


class ModeIndex:
    """A roster's vectors, ready to score messages against."""

    def __init__(
        self,
        names: Sequence[str],
        descriptions: Vector,
        examples: Sequence[Vector],
        example_texts: Sequence[Sequence[str]],
        params: ScoringParams | None = None,
        floor: float | None = None,
        notes: Sequence[Sequence[str | None]] | None = None,
        temperature: float | None = None,
        negatives: Vector | None = None,
        negative_texts: Sequence[str] = (),
        negative_notes: Sequence[str | None] | None = None,
    ) -> None:
        self.names = tuple(names)
        self.params = params or ScoringParams()
        self.descriptions = np.asarray(descriptions, dtype=np.float32)
        dim = self.descriptions.shape[1]
        self.examples = [np.asarray(e, dtype=np.float32).reshape(-1, dim) for e in examples]
        self.example_texts = [tuple(texts) for texts in example_texts]
        self.notes = (
            [tuple(n) for n in notes]
            if notes is not None
            else [(None,) * len(t) for t in self.example_texts]
        )
        """Per example, None for a shipped one, `correction of <date>` for a learned one."""
        self.centroids = np.stack(
            [
                _unit(e.mean(axis=0)) if len(e) else d
                for e, d in zip(self.examples, self.descriptions, strict=True)
            ]
        )
        self.has_examples = np.array([len(e) > 0 for e in self.examples])
        # One matrix for all examples, with each row's mode, so scoring is one product.
        self._all = (
            np.concatenate([e for e in self.examples if len(e)])
            if self.has_examples.any()
            else np.zeros((0, dim), np.float32)
        )
        self._loo: tuple[Any, Any] | None = None
        self._calibration: tuple[Any, Any] | None = None
        self.floor = self._measure_floor() if floor is None else floor
        if temperature is None:
            temperature = self._fit_temperature() if self.params.calibrate else None
        self.temperature = self.params.temperature if temperature is None else temperature
        """The softmax temperature in use: fitted on the pack, or the parameter."""
        self.unrelated = self._measure_unrelated()
        """A cosine that two examples of different modes stay below 85% of the time."""
        self.negatives = (
            np.zeros((0, dim), np.float32)
            if negatives is None
            else np.asarray(negatives, dtype=np.float32).reshape(-1, dim)
        )
        """Vectors of messages that belong to no mode (corrections to the fallback)."""
        self.negative_texts = tuple(negative_texts)
        self.negative_notes = (
            tuple(negative_notes)
            if negative_notes is not None
            else (None,) * len(self.negative_texts)
        )
        self.negative_bias = self._fit_negative_bias()
        """The bias of the negatives' step (`core.routing.calibration.outside`), fitted on the pack."""

    def raw_scores(self, query: Vector) -> npt.NDArray[np.float64]:
        """s_m for every mode of the roster."""
        return self._scores(np.asarray(query, dtype=np.float32), exclude=None)

    def _scores(self, query: Vector, exclude: int | None) -> npt.NDArray[np.float64]:
        p = self.params
        # Not `self._all @ query`: above a few hundred rows OpenBLAS runs a matrix-vector
        # product on several threads, and on a busy machine (or right after encoding, while
        # its threads still spin) waiting for them cost 20 ms a decision with 1,000
        # corrections. einsum's single-threaded loop takes 0.1 ms for 1,300 x 384.
        similarities = np.einsum("ij,j->i", self._all, query)
        description = self.descriptions @ query
        scores = description.astype(np.float64).copy()
        start = 0
        for i, block in enumerate(self.examples):
            count = len(block)
            sims = similarities[start : start + count]
            centroid = self.centroids[i]
            if exclude is not None and start <= exclude < start + count:
                local = exclude - start
                rest = np.delete(block, local, axis=0)
                sims = np.delete(sims, local)
                centroid = _unit(rest.mean(axis=0)) if len(rest) else self.descriptions[i]
            start += count
            if len(sims) == 0:
                continue
            top = np.sort(sims)[::-1][: p.neighbours]
            total = p.weight_max + p.weight_top + p.weight_description + p.weight_centroid
            scores[i] = (
                p.weight_max * float(top[0])
                + p.weight_top * float(top.mean())
                + p.weight_description * float(description[i])
                + p.weight_centroid * float(centroid @ query)
            ) / total
        return scores

    def decide(self, scores: npt.NDArray[np.float64], query: Vector) -> Scored:
        """Probabilities, confidence and the nearest example, from mode scores."""
        t = self.temperature
        shifted = np.exp((scores - scores.max()) / t)
        total = shifted.sum()
        probabilities = shifted / total
        best = int(np.argmax(scores))
        confidence = float(probabilities[best] * in_scope(scores[best], self.floor))
        negative, negative_note = None, None
        if len(self.negatives):
            q = np.asarray(query, dtype=np.float32)
            to_negatives = np.einsum("ij,j->i", self.negatives, q)
            k = int(np.argmax(to_negatives))
            nearest_example = (
                float(np.einsum("ij,j->i", self._all, q).max()) if len(self._all) else 0.0
            )
            chance = float(outside(float(to_negatives[k]) - nearest_example, self.negative_bias))
            confidence *= 1.0 - chance
            if chance >= 0.5 and k < len(self.negative_texts):
                negative, negative_note = self.negative_texts[k], self.negative_notes[k]
        block = self.examples[best]
        if len(block):
            sims = np.einsum("ij,j->i", block, np.asarray(query, dtype=np.float32))
            j = int(np.argmax(sims))
            nearest, similarity = self.example_texts[best][j], float(sims[j])
            note = self.notes[best][j]
        else:
            nearest = f"description of {self.names[best]}"
            similarity = float(self.descriptions[best] @ query)
            note = None
        return Scored(
            mode=self.names[best],
            scores={n: float(s) for n, s in zip(self.names, scores, strict=True)},
            probabilities={n: float(p) for n, p in zip(self.names, probabilities, strict=True)},
            confidence=min(1.0, max(0.0, confidence)),
            nearest=nearest,
            nearest_similarity=similarity,
            nearest_note=note,
            negative=negative,
            negative_note=negative_note,
        )

    def score(self, query: Vector) -> Scored:
        """Score one message vector."""
        return self.decide(self.raw_scores(query), query)

    def loo_scores(self) -> tuple[Any, Any]:
        """Each example's mode scores with itself left out, and its mode (`core.routing.calibration`)."""
        if self._loo is None:
            p = self.params
            weights = (p.weight_max, p.weight_top, p.weight_description, p.weight_centroid)
            self._loo = loo_scores(self.examples, self.descriptions, weights, p.neighbours)
        return self._loo

    def _calibration_rows(self) -> tuple[Any, Any]:
        """The leave-one-out scores that the temperature is fitted on.

        Every example and correction takes part in the scores (as a neighbour of the others),
        but only the shipped examples are left out and measured when there are enough of
        them: they are a sample of ordinary messages, while corrections are, by how they
        arise, the messages the router got wrong. Measured on them too, the fit calls every
        route doubtful once corrections pile up (banking77 after 1,000 turns: ECE 0.164,
        against 0.039). At most `CALIBRATION_ROWS` rows, evenly spread, keep it cheap.
        """
        if self._calibration is None:
            shipped = np.flatnonzero(
                np.array([note is None for notes in self.notes for note in notes], dtype=bool)
            )
            rows = shipped if len(shipped) >= MIN_EXAMPLES_FOR_FLOOR else np.arange(len(self._all))
            rows = rows[:: max(1, -(-len(rows) // CALIBRATION_ROWS))]
            p = self.params
            weights = (p.weight_max, p.weight_top, p.weight_description, p.weight_centroid)
            self._calibration = loo_scores(
                self.examples, self.descriptions, weights, p.neighbours, rows
            )
        return self._calibration

    def _measure_floor(self) -> float:
        """The 5th percentile of the shipped examples' leave-one-out top scores (in the pack
        as shipped, without its corrections), minus a margin: below it a message is more
        likely out of scope than in (`core.routing.calibration.in_scope`).

        Corrections sit where the router went wrong, often right beside shipped examples;
        counted here, they raised the floor until ordinary in-scope messages scored below
        it and were called doubtful (banking77 after 96 corrections: ECE 0.083, against
        0.049 with the floor of the pack as shipped).
        """
        if len(self._all) < MIN_EXAMPLES_FOR_FLOOR or len(self.names) < 2:
            return DEFAULT_FLOOR
        shipped = [
            block[[note is None for note in notes]] if len(block) else block
            for block, notes in zip(self.examples, self.notes, strict=True)
        ]
        if sum(len(block) for block in shipped) >= MIN_EXAMPLES_FOR_FLOOR:
            p = self.params
            weights = (p.weight_max, p.weight_top, p.weight_description, p.weight_centroid)
            scores, _ = loo_scores(shipped, self.descriptions, weights, p.neighbours)
        else:
            scores, _ = self._calibration_rows()
        return float(np.percentile(scores.max(axis=1), FLOOR_PERCENTILE)) - FLOOR_MARGIN

    def _measure_unrelated(self) -> float:
        """The 85th percentile of cosines between examples of different modes (on a sample
        of at most 400 examples, so that a pack with many corrections stays cheap)."""
        sizes = [len(block) for block in self.examples]
        if sum(1 for size in sizes if size) < 2:
            return DEFAULT_UNRELATED
        labels = np.repeat(np.arange(len(sizes)), sizes)
        step = max(1, -(-len(self._all) // UNRELATED_SAMPLE))
        sample, owners = self._all[::step], labels[::step]
        cross = (sample @ sample.T)[owners[:, None] != owners[None, :]]
        if not len(cross):
            return DEFAULT_UNRELATED
        return float(np.percentile(cross, UNRELATED_PERCENTILE))

    def _fit_negative_bias(self) -> float:
        """Refitted whenever the negatives change (the index is rebuilt with them)."""
        if not len(self.negatives) or not len(self._all):
            return 0.0
        shipped = np.flatnonzero(
            np.array([note is None for notes in self.notes for note in notes], dtype=bool)
        )
        rows = shipped if len(shipped) else np.arange(len(self._all))
        rows = rows[:: max(1, -(-len(rows) // CALIBRATION_ROWS))]
        margins, labels = negative_margins(self._all, self.negatives, rows)
        return fit_negative_bias(margins, labels)

    def _fit_temperature(self) -> float:
        scores, labels = self._calibration_rows()
        return fit_temperature(scores, labels, self.params.temperature)


def _unit(vector: Any) -> Any:
    norm = float(np.linalg.norm(vector))
    return (vector / norm if norm > 0 else vector).astype(np.float32)
