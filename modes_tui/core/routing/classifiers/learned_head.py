"""One roster's head in use, refitted in the background when the corrections change.

`LearnedHead` holds the head the embedding backend routes with (`RosterHead`: the fitted
head and what each of its training rows was, for the evidence). When the corrections'
revision changes, `head_for` starts a refit on a thread of its own and keeps answering with
the head in use until the new one is ready; the refit's check (`classifiers.head_refit`)
may refuse the new head, and the outcome is kept (`last`) and handed to `on_refit` (the
corrections store writes it beside the corrections, for `modes-tui corrections`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from modes_tui.core.routing.classifiers.head import NONE, HeadKind, TrainingSet, build_training
from modes_tui.core.routing.classifiers.head_refit import Fitted, RefitOutcome, refit
from modes_tui.core.values.evidence import Evidence, EvidenceKind

if TYPE_CHECKING:
    import numpy.typing as npt


@dataclass(frozen=True, slots=True)
class Material:
    """What a head is fitted on, with what each row is."""

    training: TrainingSet
    """Vectors, labels (mode index or `NONE`), and which rows the pack shipped."""
    texts: tuple[str, ...]
    """Per row, its text."""
    kinds: tuple[EvidenceKind, ...]
    """Per row: `description`, `example` or `correction`."""
    notes: tuple[str | None, ...]
    """Per row, `correction of <date>` for a correction."""


@dataclass(frozen=True, slots=True)
class RosterHead:
    """A head in use and the rows it was fitted on."""

    fitted: Fitted
    """The calibrated head and its cross-validated measures."""
    material: Material
    """Its training rows."""
    names: tuple[str, ...]
    """The roster's modes, in the head's order."""

    def evidence(self, query: Any, mode: int, fallback: str | None) -> Evidence | None:
        """The row of `mode` (or, with `mode == NONE`, a correction to the fallback) nearest
        to `query`."""
        training = self.material.training
        rows = np.flatnonzero(training.labels == mode)
        if not len(rows):
            return None
        sims = training.vectors[rows] @ np.asarray(query, dtype=np.float64)
        best = int(rows[int(np.argmax(sims))])
        name = self.names[mode] if mode != NONE else (fallback or "the fallback")
        return Evidence(
            self.material.kinds[best],
            self.material.texts[best],
            name,
            float(sims.max()),
            self.material.notes[best],
        )


class LearnedHead:
    """The head of one roster: fitted once, refitted in the background on new corrections."""

    def __init__(
        self,
        names: Sequence[str],
        threshold: float | None,
        kind: HeadKind = "logistic",
        on_refit: Callable[[RefitOutcome], None] | None = None,
        wait: float = 0.0,
    ) -> None:
        self.names = tuple(names)
        self.wait_seconds = wait
        """How long the route that starts a refit waits for it before using the old head."""
        self.threshold = threshold
        self.kind = kind
        self.on_refit = on_refit
        self._lock = threading.Lock()
        self._current: RosterHead | None = None
        self._base: Fitted | None = None
        self._revision: str | None = None
        self._running: threading.Thread | None = None
        self._done = threading.Event()
        self._done.set()
        self.last: RefitOutcome | None = None
        """The last refit's outcome (None before the first refit after the pack's own fit)."""
        self.latest: Material | None = None
        """The rows of the latest fit, taken or not: `recall` reads the user's corrections
        from it, so a message the user corrected counts even when the refit was refused."""

    @property
    def current(self) -> RosterHead | None:
        """The head in use (None before the first fit)."""
        return self._current

    def head_for(
        self, revision: str, material: Callable[[], tuple[Material, Material | None]]
    ) -> RosterHead:
        """The head to route with now.

        The first call fits synchronously (the pack alone, then with its corrections).
        After that, a new `revision` starts a background refit and the head in use answers
        until it is done; the route that started it waits up to `wait` seconds for it, so
        that a correction usually counts from the very next message. `material()` returns
        (the pack with its corrections, the pack alone when it is wanted for the base).
        """
        with self._lock:
            current = self._current
            stale = self._revision != revision
            if current is not None and (not stale or self._running is not None):
                return current
            if current is not None:
                self._revision = revision
                self._done.clear()
                thread = threading.Thread(
                    target=self._refit, args=(material,), name="modes-tui-refit", daemon=True
                )
                self._running = thread
                thread.start()
            else:
                self._revision = revision
                thread = None
        if thread is None or current is None:
            return self._first_fit(material)
        if self.wait_seconds > 0:
            self._done.wait(self.wait_seconds)
        latest = self._current
        return latest if latest is not None else current

    def _first_fit(self, material: Callable[[], tuple[Material, Material | None]]) -> RosterHead:
        learned, alone = material()
        base_material = alone or learned
        base, _ = refit(
            base_material.training, base_material.texts, None, None, self.threshold, self.kind
        )
        head = RosterHead(base, base_material, self.names)
        self.latest = learned
        with self._lock:
            self._base = base
            self._current = head
        if alone is not None:
            self._take(learned)
        return self._current or head

    def _refit(self, material: Callable[[], tuple[Material, Material | None]]) -> None:
        try:
            learned, _ = material()
            self._take(learned)
        except Exception:  # noqa: BLE001 - a failed refit keeps the head in use
            return
        finally:
            with self._lock:
                self._running = None
            self._done.set()

    def recall(self, query: Any, near_identical: float) -> tuple[int, Evidence] | None:
        """The correction near-identical to `query` (cosine >= `near_identical`), as its
        label (a mode's index, or `NONE`) and evidence; None when there is none."""
        material = self.latest
        if material is None:
            return None
        rows = [i for i, kind in enumerate(material.kinds) if kind == "correction"]
        if not rows:
            return None
        vectors = material.training.vectors[rows]
        sims = vectors @ np.asarray(query, dtype=np.float64)
        best = int(np.argmax(sims))
        if float(sims[best]) < near_identical:
            return None
        row = rows[best]
        label = int(material.training.labels[row])
        mode = self.names[label] if label != NONE else ""
        evidence = Evidence(
            "correction", material.texts[row], mode, float(sims[best]), material.notes[row]
        )
        return label, evidence

    def _take(self, learned: Material) -> None:
        self.latest = learned
        current = self._current
        fitted, outcome = refit(
            learned.training,
            learned.texts,
            current.fitted if current is not None else None,
            self._base,
            self.threshold,
            self.kind,
            withdrawn=current is not None and _learned(learned) <= _learned(current.material),
        )
        with self._lock:
            if outcome.taken:
                self._current = RosterHead(fitted, learned, self.names)
            self.last = outcome
        if self.on_refit is not None:
            # A status file that cannot be written is not worth a route.
            with contextlib.suppress(Exception):
                self.on_refit(outcome)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a running refit is done; False on timeout."""
        return self._done.wait(timeout)


def _learned(material: Material) -> set[str]:
    """The texts of the corrections among a head's rows."""
    return {
        text
        for text, kind in zip(material.texts, material.kinds, strict=True)
        if kind == "correction"
    }


def _kind(note: str | None) -> EvidenceKind:
    """A row with no note was shipped with the pack; one with a note is a correction."""
    return "example" if note is None else "correction"


def build_material(
    descriptions: Sequence[str],
    texts: Sequence[Sequence[str]],
    notes: Sequence[Sequence[str | None]],
    negatives: Sequence[str],
    negative_notes: Sequence[str | None],
    vector: Callable[[str], npt.NDArray[np.float32]],
) -> Material:
    """The rows of a head: per mode its description and texts (shipped ones have note None),
    then the negatives."""
    blocks, shipped = [], []
    row_texts: list[str] = []
    kinds: list[EvidenceKind] = []
    row_notes: list[str | None] = []
    for description, mode_texts, mode_notes in zip(descriptions, texts, notes, strict=True):
        rows = [description, *mode_texts]
        blocks.append(np.stack([vector(t) for t in rows]))
        shipped.append([True] + [n is None for n in mode_notes])
        row_texts += rows
        kinds.append("description")
        kinds += [_kind(n) for n in mode_notes]
        row_notes += [None, *mode_notes]
    matrix = np.stack([vector(t) for t in negatives]) if negatives else None
    training = build_training(blocks, shipped, matrix)
    return Material(
        training,
        tuple(row_texts) + tuple(negatives),
        (*kinds, *(_kind("") for _ in negatives)),
        tuple(row_notes) + tuple(negative_notes),
    )
