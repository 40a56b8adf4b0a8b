"""A deterministic encoder for tests: hashed bag of words, no model weights."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from modes_tui.core.packs.profiles import Pack
    from modes_tui.core.routing.classifiers.embedding import EmbeddingClassifier

DIMENSIONS = 64


class HashingEncoder:
    """Each word adds +-1 to one of 64 dimensions (by its hash); vectors are L2-normalised.

    Texts that share words are close, texts that share none are orthogonal-ish. Counts its
    calls and the texts it encoded, and can be made to wait (`gate`) to test loading.
    """

    def __init__(self, name: str = "fake/hashing", gate: threading.Event | None = None) -> None:
        self.name = name
        self.calls = 0
        self.texts: list[str] = []
        self.gate = gate

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if self.gate is not None:
            self.gate.wait(10)
        self.calls += 1
        self.texts.extend(texts)
        vectors = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                digest = hashlib.sha256(word.encode()).digest()
                vectors[row, digest[0] % DIMENSIONS] += 1.0 if digest[1] % 2 else -1.0
            norm = np.linalg.norm(vectors[row])
            if norm == 0:
                vectors[row, -1] = 1.0
            else:
                vectors[row] /= norm
        return vectors


def hashing_backend(pack: Pack) -> tuple[EmbeddingClassifier, HashingEncoder]:
    """The embedding backend for `pack` over a fresh `HashingEncoder`, loaded: the pack's own
    texts are encoded (see `encoder.texts`) before it returns."""
    from modes_tui.core.routing.classifiers.embedding import EmbeddingClassifier

    encoder = HashingEncoder()
    classifier = EmbeddingClassifier(
        lambda: encoder, encoder_name=encoder.name, modes=pack.profiles
    )
    classifier.wait(10)
    return classifier, encoder
