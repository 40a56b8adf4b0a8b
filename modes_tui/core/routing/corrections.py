"""Corrections held in memory (`MemoryCorrections`): for tests, and for evaluations that must
not touch the disk; `EMPTY_CORRECTIONS` for a classifier that learns from none.

The value itself is `core.values.correction.Correction`; `modes_tui.store.corrections`
persists corrections on disk.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

from modes_tui.core.routing.ports import CorrectionSource
from modes_tui.core.values.correction import Correction


class MemoryCorrections:
    """A `CorrectionSource` held in memory: for tests, and for evaluations that must not write."""

    def __init__(self, corrections: Iterable[Correction] = ()) -> None:
        self._lock = threading.Lock()
        self._items: list[Correction] = list(corrections)
        self._changes = 0

    @property
    def revision(self) -> str:
        """Counts the changes made to this source."""
        with self._lock:
            return f"memory:{id(self)}:{self._changes}"

    def corrections(self) -> Sequence[Correction]:
        """A snapshot of the corrections, oldest first."""
        with self._lock:
            return tuple(self._items)

    def add(self, correction: Correction) -> Correction:
        """Record one correction."""
        with self._lock:
            self._items.append(correction)
            self._changes += 1
        return correction

    def remove(self, correction_id: str) -> bool:
        """Forget one correction; False when no correction has that id."""
        with self._lock:
            kept = [c for c in self._items if c.id != correction_id]
            if len(kept) == len(self._items):
                return False
            self._items = kept
            self._changes += 1
            return True

    def clear(self) -> int:
        """Forget every correction; returns how many there were."""
        with self._lock:
            count = len(self._items)
            self._items = []
            self._changes += 1
            return count


EMPTY_CORRECTIONS: CorrectionSource = MemoryCorrections()
"""A source with no corrections, for classifiers built without a store."""
