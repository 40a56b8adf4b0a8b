"""How the backends learn from corrections: examples for the embedding backend, the most
similar corrections for the chat and judge prompts.

- `learned_examples`: a pack's examples plus its corrections, per mode. A correction joins
  the corrected mode's examples; when its text is near-identical (cosine >= `NEAR_IDENTICAL`)
  to a shipped example of another mode, or to an earlier correction to another mode, the
  correction wins and the other is dropped: the user has said where that message belongs.
- `similar_corrections`: the corrections most like a message, for a routing prompt. The
  chat and judge backends have no encoder of their own, and loading one for them would cost
  seconds at start, so similarity there is lexical (`lexical_similarity`, the cosine of word
  and character-trigram counts): it finds rewordings with shared words and typos and misses
  synonyms, which the chat model itself then has to see through. In a cascade whose first
  stage is the embedding backend, that stage lends its encoder (`Similarity`).
- `split_negatives`: a correction to the pack's fallback ("none of these should have
  answered") is a negative example, not one of the fallback mode's examples: it lowers the
  in-scope chance of messages like it (`core.routing.calibration.outside`), so they fall back.

`modes-tui eval --learn` (a user who corrects every wrong route) is `core.evals.learning`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from modes_tui.core.packs.profiles import Profile
from modes_tui.core.values.correction import Correction

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]

NEAR_IDENTICAL = 0.95
"""Cosine at or above which a correction overrides another mode's example of the same text."""
PROMPT_CORRECTIONS = 8
"""How many corrections a routing prompt shows at most."""
MIN_LEXICAL_SIMILARITY = 0.2
"""Corrections less similar than this to the message are not shown in a prompt."""


def correction_note(correction: Correction) -> str:
    """What the panel says about an example learned from `correction`."""
    day = correction.created_at[:10] or "an unknown date"
    return f"correction of {day}"


@dataclass(frozen=True, slots=True)
class LearnedExamples:
    """One mode's examples after the corrections were applied."""

    texts: tuple[str, ...]
    """Shipped examples that still stand, then the corrections to this mode, oldest first."""
    notes: tuple[str | None, ...]
    """Per text: None for a shipped example, `correction of <date>` for a learned one."""


def learned_examples(
    modes: Sequence[Profile],
    corrections: Sequence[Correction],
    vector: Callable[[str], Vector],
) -> list[LearnedExamples]:
    """Each mode's examples plus the corrections to it, with the override rule applied."""
    import numpy as np

    names = {mode.name for mode in modes}
    learned = [c for c in corrections if c.corrected_mode in names]
    dropped: set[tuple[str, str]] = set()  # (mode, text) of shipped examples overridden
    beaten: set[int] = set()  # indexes of corrections overridden by a later one
    if learned:
        matrix = np.stack([vector(c.text) for c in learned])
        for mode in modes:
            if not mode.examples:
                continue
            shipped = np.stack([vector(text) for text in mode.examples])
            similar = shipped @ matrix.T  # (examples, corrections)
            for j, correction in enumerate(learned):
                if correction.corrected_mode == mode.name:
                    continue
                for i in np.flatnonzero(similar[:, j] >= NEAR_IDENTICAL):
                    dropped.add((mode.name, mode.examples[int(i)]))
        # Correction j is beaten by a later one (column > row) to another mode, same text.
        modes_of = np.array([c.corrected_mode for c in learned])
        clash = (matrix @ matrix.T >= NEAR_IDENTICAL) & (modes_of[:, None] != modes_of[None, :])
        beaten = {int(j) for j in np.flatnonzero(np.triu(clash, k=1).any(axis=1))}
    result = []
    for mode in modes:
        texts = [text for text in mode.examples if (mode.name, text) not in dropped]
        notes: list[str | None] = [None] * len(texts)
        for j, correction in enumerate(learned):
            if correction.corrected_mode == mode.name and j not in beaten:
                texts.append(correction.text)
                notes.append(correction_note(correction))
        result.append(LearnedExamples(tuple(texts), tuple(notes)))
    return result


def split_negatives(
    corrections: Sequence[Correction], names: set[str], fallback: str | None
) -> tuple[list[Correction], list[Correction]]:
    """(corrections to a mode other than the fallback, corrections to the fallback).

    When the same text was corrected more than once, only its latest correction counts, so
    moving a message from "none of these" to a mode (or back) takes effect."""
    latest: dict[str, Correction] = {}
    for correction in corrections:
        latest.pop(correction.text, None)
        latest[correction.text] = correction
    kept = [c for c in corrections if latest.get(c.text) is c]
    if fallback is None:
        return [c for c in corrections if c.corrected_mode in names], []
    negatives = [c for c in kept if c.corrected_mode == fallback]
    modes = [c for c in corrections if c.corrected_mode in names and c.corrected_mode != fallback]
    return modes, negatives


# --------------------------------------------------------------------------- lexical


_WORD = re.compile(r"\w+", re.UNICODE)


def _features(text: str) -> Counter[str]:
    words = _WORD.findall(text.lower())
    features: Counter[str] = Counter(f"w:{word}" for word in words)
    for word in words:
        padded = f" {word} "
        features.update(f"c:{padded[i : i + 3]}" for i in range(len(padded) - 2))
    return features


def _cosine(a: Mapping[str, int], b: Mapping[str, int]) -> float:
    if not a or not b:
        return 0.0
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    dot = sum(count * large.get(key, 0) for key, count in small.items())
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def lexical_similarity(a: str, b: str) -> float:
    """Cosine of word and character-trigram counts: 1.0 for the same words, 0.0 for none shared."""
    return _cosine(_features(a), _features(b))


Similarity = Callable[[str, Sequence[str]], "tuple[Sequence[float], float] | None"]
"""Scores a message against texts by embedding: (cosines, the minimum worth showing), or
None when the encoder is not ready (the lexical similarity is used instead)."""


def similar_corrections(
    message: str,
    corrections: Sequence[Correction],
    modes: Sequence[Profile],
    limit: int = PROMPT_CORRECTIONS,
    similarity: Similarity | None = None,
) -> list[Correction]:
    """The corrections most like `message` among those to an available mode, most similar
    first (ties: newest first, then by id, so the same inputs give the same prompt).

    By embedding when `similarity` is given and ready (a cascade's embedding stage lends
    its encoder), else lexically, with `MIN_LEXICAL_SIMILARITY` as the minimum."""
    names = {mode.name for mode in modes}
    latest: dict[str, Correction] = {}
    for correction in corrections:  # the same text corrected twice: the later one stands
        if correction.corrected_mode in names:
            latest[correction.text] = correction
    candidates = list(latest.values())
    embedded = similarity(message, [c.text for c in candidates]) if similarity else None
    if embedded is not None:
        scores, minimum = list(embedded[0]), embedded[1]
    else:
        query = _features(message)
        scores = [_cosine(query, _features(c.text)) for c in candidates]
        minimum = MIN_LEXICAL_SIMILARITY
    picked = [(score, c) for score, c in zip(scores, candidates, strict=True) if score >= minimum]
    # Stable sorts, last key first: by id, then newest first, then most similar first.
    picked.sort(key=lambda item: item[1].id)
    picked.sort(key=lambda item: item[1].created_at, reverse=True)
    picked.sort(key=lambda item: -round(item[0], 9))
    return [correction for _, correction in picked[:limit]]
