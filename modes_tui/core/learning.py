"""How the backends learn from corrections: examples for the embedding backend, the most
similar corrections for the chat and judge prompts.

- `learned_examples`: a pack's examples plus its corrections, per mode. A correction joins
  the corrected mode's examples; when its text is near-identical (cosine >= `NEAR_IDENTICAL`)
  to a shipped example of another mode, or to an earlier correction to another mode, the
  correction wins and the other is dropped: the user has said where that message belongs.
- `similar_corrections`: the corrections most like a message, for a routing prompt. The
  chat and judge backends have no encoder of their own, and loading one for them would cost
  seconds at start, so similarity there is lexical: the cosine of word and character-trigram
  counts (`lexical_similarity`). It finds rewordings with shared words and typos; it misses
  synonyms, which the chat model itself then has to see through.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from modes_tui.core.corrections import Correction
from modes_tui.core.profiles import Profile

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
        among = matrix @ matrix.T
        for j, correction in enumerate(learned):
            for later in range(j + 1, len(learned)):
                if (
                    learned[later].corrected_mode != correction.corrected_mode
                    and among[j, later] >= NEAR_IDENTICAL
                ):
                    beaten.add(j)
                    break
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


def similar_corrections(
    message: str,
    corrections: Sequence[Correction],
    modes: Sequence[Profile],
    limit: int = PROMPT_CORRECTIONS,
    similarity: Callable[[str, str], float] = lexical_similarity,
    minimum: float = MIN_LEXICAL_SIMILARITY,
) -> list[Correction]:
    """The corrections most like `message` among those to an available mode, most similar
    first (ties: newest first, then by id, so the same inputs give the same prompt)."""
    names = {mode.name for mode in modes}
    latest: dict[str, Correction] = {}
    for correction in corrections:  # the same text corrected twice: the later one stands
        if correction.corrected_mode in names:
            latest[correction.text] = correction
    scored: list[tuple[float, Any, Correction]] = []
    query = _features(message) if similarity is lexical_similarity else None
    for correction in latest.values():
        if query is not None:
            score = _cosine(query, _features(correction.text))
        else:
            score = similarity(message, correction.text)
        if score >= minimum:
            scored.append((score, correction.created_at, correction))
    scored.sort(key=lambda item: (-round(item[0], 9), _desc(item[1]), item[2].id))
    return [correction for _, _, correction in scored[:limit]]


def _desc(text: str) -> tuple[int, ...]:
    """A sort key that orders ISO timestamps newest first."""
    return tuple(-ord(ch) for ch in text)
