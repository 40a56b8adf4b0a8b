"""What routing needs from outside it: an encoder for the embedding backend, a
classifier, and a source of corrections to learn from.

    port              adapters                                      fakes in tests
    Encoder           llm.encoders (MiniLM, sentence-transformers)  HashingEncoder
    Classifier        routing.classifiers.* (keyword, embedding, chat, judge, cascade)
    CorrectionSource  store.corrections.CorrectionStore             MemoryCorrections
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, Union, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from modes_tui.core.packs.profiles import Profile
    from modes_tui.core.values.correction import Correction
    from modes_tui.core.values.entry import HistoryEntry
    from modes_tui.core.values.route import Decision

__all__ = ["Classifier", "CorrectionSource", "EncodedTexts", "Encoder"]


EncodedTexts = Union["npt.NDArray[np.float32]", list[list[float]]]
"""What an encoder returns: a (texts x dimensions) float32 array, or plain lists."""


@runtime_checkable
class Encoder(Protocol):
    """Turns texts into vectors for the embedding router."""

    name: str
    """Identifies the encoder (cache keys include it)."""

    def encode(self, texts: Sequence[str]) -> EncodedTexts:
        """One L2-normalised vector per text, in order."""
        ...


@runtime_checkable
class Classifier(Protocol):
    """Anything that can pick a mode. `classify` may be sync or async."""

    def classify(
        self,
        message: str,
        history: Sequence[HistoryEntry],
        modes: Sequence[Profile],
        instructions: str,
        inputs: Mapping[str, Any],
    ) -> Decision | Awaitable[Decision]:
        """Pick a mode for `message`."""
        ...


@runtime_checkable
class CorrectionSource(Protocol):
    """Where a classifier reads the corrections of its pack from.

    `revision` changes whenever the set of corrections changes (added, removed, cleared), so
    a classifier can cache what it derived (vectors, calibration) and refit only then.
    """

    @property
    def revision(self) -> str:
        """A token that differs after every change to the corrections."""
        ...

    def corrections(self) -> Sequence[Correction]:
        """The live corrections, oldest first (removed ones are not listed)."""
        ...
