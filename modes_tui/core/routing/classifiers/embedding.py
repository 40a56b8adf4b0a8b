"""The embedding backend: nearest examples and descriptions per mode, through an `Encoder`.

Each message is scored by the roster's calibrated head (`classifiers.head`: which mode, how
sure, in scope or not), fitted on the pack's examples and descriptions plus the corrections
(`core.routing.learning.learned_examples`; corrections to the fallback as negatives) and
refitted in the background when they change (`classifiers.learned_head`, with the check of
`classifiers.head_refit`). The decision's reason and `evidence` name the row that decided: the
nearest example, correction or description of the chosen mode; a message near-identical to a
correction goes where the correction says. The pack's own `ModeIndex` (no corrections)
measures the follow-up rule's `unrelated` cosine and serves `similarity`.

Follow-ups: an earlier user message on the message's topic (a cosine above `unrelated`), or
one the message leans on by its shape, has its logits and nearness mixed in (`_follow_weight`);
a self-contained message on another subject is not. `turn_vectors` gives the conversation step
(`core.routing.continuity`) the turns' vectors from the query cache.

Example vectors are cached on disk (`EmbeddingCache`, by encoder and text). The encoder loads
in a background thread started by the constructor; the first `classify` awaits it only.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from modes_tui.core.packs.profiles import Profile
from modes_tui.core.routing.classifiers.embedding_cache import EmbeddingCache as EmbeddingCache
from modes_tui.core.routing.classifiers.embedding_cache import RecentVectors
from modes_tui.core.routing.classifiers.head import NEAR_IDENTICAL, NONE, HeadKind, Nearness
from modes_tui.core.routing.classifiers.head_refit import RefitOutcome
from modes_tui.core.routing.classifiers.learned_head import (
    LearnedHead,
    Material,
    RosterHead,
    build_material,
)
from modes_tui.core.routing.classifiers.mode_index import ModeIndex, ScoringParams
from modes_tui.core.routing.corrections import EMPTY_CORRECTIONS
from modes_tui.core.routing.follow_up import FollowUp, carried, follow_up_score
from modes_tui.core.routing.learning import correction_note, learned_examples, split_negatives
from modes_tui.core.routing.ports import CorrectionSource
from modes_tui.core.values.entry import HistoryEntry
from modes_tui.core.values.evidence import Evidence
from modes_tui.core.values.numbers import rounded_probabilities
from modes_tui.core.values.route import ClassifierInfo, Decision

if TYPE_CHECKING:
    import numpy.typing as npt

    from modes_tui.core.routing.ports import Encoder

    Vector = npt.NDArray[np.float32]

REFIT_WAIT = 2.0
"""Seconds the route after a correction waits for the refit it starts (it runs off the
routing thread; the old head answers if it is not done by then)."""
MAX_CONFIDENCE = 0.99
"""No route is certain: the head's confidence stops here, so no panel reads 1.00."""
NONE_SHOWN = 0.5
"""From this chance of the corrections-to-the-fallback class on, the reason names one."""
FOLLOW_UP_MIN_WEIGHT = 0.3
FOLLOW_UP_LEAN = 0.4
"""From this follow-up score on (`core.routing.follow_up`), the previous message counts whatever its topic."""
FOLLOW_UP_MAX_WEIGHT = 4.0


def mode_texts(modes: Sequence[Profile]) -> list[str]:
    """What the backend encodes for the modes: each one's description, then its examples."""
    return [text for mode in modes for text in (mode.description, *mode.examples)]


# --------------------------------------------------------------------------- classifier

EncoderFactory = Callable[[], "Encoder"]


class EmbeddingClassifier:
    """Routes by similarity to each mode's examples and description.

    The constructor starts a background thread that loads the encoder and the pack's
    example vectors (from the disk cache, encoding only what is missing). `classify`
    awaits that work only if it is still running.
    """

    def __init__(
        self,
        encoder: EncoderFactory,
        *,
        encoder_name: str,
        modes: Sequence[Profile] = (),
        cache: EmbeddingCache | None = None,
        params: ScoringParams | None = None,
        start: bool = True,
        corrections: CorrectionSource | None = None,
        fallback: str | None = None,
        threshold: float | None = None,
        head: HeadKind = "logistic",
        refit_wait: float = REFIT_WAIT,
    ) -> None:
        self.encoder_name = encoder_name
        self.fallback = fallback
        """The pack's fallback: corrections to it are negative examples, not its examples."""
        self.threshold = threshold
        """The pack's `below_confidence`: the refit check measures routes at it."""
        self.head_kind: HeadKind = head
        """`logistic` (the default, see `classifiers.head`) or `mahalanobis`."""
        self.refit_wait = refit_wait
        """How long a route waits for the refit it started (then the old head answers)."""
        self.params = params or ScoringParams()
        self.cache = cache
        self.corrections = corrections if corrections is not None else EMPTY_CORRECTIONS
        """Where the pack's corrections come from; read again when its revision changes."""
        self._factory = encoder
        self._warm_modes = tuple(modes)
        self._encoder: Encoder | None = None
        self._vectors: dict[str, Vector] = {}
        self._indexes: OrderedDict[tuple[Any, ...], ModeIndex] = OrderedDict()
        self._heads: dict[tuple[Any, ...], LearnedHead] = {}
        self._queries = RecentVectors()
        self._lock = threading.RLock()
        self._future: concurrent.futures.Future[None] | None = None
        self._reported_failure: concurrent.futures.Future[None] | None = None
        self.load_seconds: float | None = None
        """How long the background preparation took (encoder and pack vectors)."""
        if start:
            self.start()

    # ----------------------------------------------------------------- loading

    def start(self) -> concurrent.futures.Future[None]:
        """Start loading in the background unless it is running or done; returns the attempt.

        An attempt that failed is replaced only after its failure was reported to a route
        (see `classify`), so a broken encoder costs each route one quick retry, not a
        silent loop.
        """
        with self._lock:
            future = self._future
            if future is None or (future is self._reported_failure):
                future = concurrent.futures.Future()
                self._future = future
                thread = threading.Thread(
                    target=self._prepare, args=(future,), name="modes-tui-encoder", daemon=True
                )
                thread.start()
            return future

    def _prepare(self, future: concurrent.futures.Future[None]) -> None:
        started = time.perf_counter()
        try:
            texts = mode_texts(self._warm_modes)
            if self.cache is not None and texts:
                self._remember(self.cache.load(self.encoder_name, texts))
            encoder = self._factory()
            with self._lock:
                self._encoder = encoder
            self._ensure(texts)
            if self._warm_modes:
                self._index_for(self._warm_modes)
                self._head_for(self._warm_modes)
        except Exception as error:  # noqa: BLE001 - handed to whoever awaits the classifier
            future.set_exception(error)
        else:
            future.set_result(None)
        finally:
            self.load_seconds = time.perf_counter() - started

    @property
    def ready(self) -> bool:
        """The encoder and the pack's vectors are loaded."""
        future = self._future
        return future is not None and future.done() and future.exception() is None

    def wait(self, timeout: float | None = None) -> None:
        """Block until loaded; re-raise what loading raised."""
        future = self.start()
        try:
            future.result(timeout)
        except concurrent.futures.TimeoutError:
            raise
        except Exception:
            self._reported_failure = future
            raise

    def _remember(self, vectors: Mapping[str, Vector]) -> None:
        with self._lock:
            self._vectors.update(vectors)

    def _ensure(self, texts: Sequence[str]) -> None:
        """Vectors for `texts` in memory: cached ones were loaded, the rest are encoded."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
            encoder = self._encoder
            # A correction's text was routed moments ago: its vector is a recent query.
            routed = {t: v for t in missing if (v := self._queries.get(t)) is not None}
        if routed:
            self._remember(routed)
            if self.cache is not None:
                self.cache.store(self.encoder_name, routed)
            missing = [t for t in missing if t not in routed]
        if not missing:
            return
        if encoder is None:
            raise RuntimeError("the encoder is not loaded yet")
        encoded = np.asarray(encoder.encode(missing), dtype=np.float32)
        fresh = {text: encoded[i] for i, text in enumerate(missing)}
        self._remember(fresh)
        if self.cache is not None:
            self.cache.store(self.encoder_name, fresh)

    def _index_for(self, modes: Sequence[Profile]) -> ModeIndex:
        """The pack's own index (no corrections): the follow-up rule's `unrelated` cosine and
        `similarity` for a cascade's prompt stage. The head routes (`_head_for`)."""
        key = tuple((m.name, m.description, m.examples) for m in modes)
        with self._lock:
            index = self._indexes.get(key)
            if index is not None:
                self._indexes.move_to_end(key)
                return index
        self._ensure(mode_texts(modes))
        with self._lock:
            vectors = self._vectors
            dim = len(vectors[modes[0].description])
            index = ModeIndex(
                [m.name for m in modes],
                np.stack([vectors[m.description] for m in modes]),
                [
                    np.stack([vectors[e] for e in mode.examples])
                    if mode.examples
                    else np.zeros((0, dim), np.float32)
                    for mode in modes
                ],
                [mode.examples for mode in modes],
                self.params,
            )
            self._indexes[key] = index
            while len(self._indexes) > 8:
                self._indexes.popitem(last=False)
        return index

    def _head_for(self, modes: Sequence[Profile]) -> RosterHead:
        """The head in use for this roster; a change to the corrections (one stat per route
        tells) starts a refit in the background (`LearnedHead`)."""
        key = tuple((m.name, m.description, m.examples) for m in modes)
        with self._lock:
            learned = self._heads.get(key)
            if learned is None:
                learned = LearnedHead(
                    [m.name for m in modes],
                    self.threshold,
                    self.head_kind,
                    self._record_refit,
                    self.refit_wait,
                )
                self._heads[key] = learned
                while len(self._heads) > 8:
                    self._heads.pop(next(iter(self._heads)))
        return learned.head_for(self.corrections.revision, lambda: self._material(modes))

    def _material(self, modes: Sequence[Profile]) -> tuple[Material, Material | None]:
        """(the pack with its live corrections, the pack alone when there are corrections)."""
        names = {m.name for m in modes}
        corrections, negatives = split_negatives(
            self.corrections.corrections(), names, self.fallback
        )
        self._ensure(mode_texts(modes) + [c.text for c in corrections + negatives])
        with self._lock:
            vector = self._vectors.__getitem__
        learned = learned_examples(modes, corrections, vector)
        descriptions = [m.description for m in modes]
        with_corrections = build_material(
            descriptions,
            [m.texts for m in learned],
            [m.notes for m in learned],
            [c.text for c in negatives],
            [correction_note(c) for c in negatives],
            vector,
        )
        if not corrections and not negatives:
            return with_corrections, None
        alone = build_material(
            descriptions,
            [m.examples for m in modes],
            [(None,) * len(m.examples) for m in modes],
            [],
            [],
            vector,
        )
        return with_corrections, alone

    def _recall(self, modes: Sequence[Profile], query: Vector) -> tuple[int, Evidence] | None:
        """A correction near-identical to the message, from the latest fit's rows."""
        key = tuple((m.name, m.description, m.examples) for m in modes)
        with self._lock:
            learned = self._heads.get(key)
        return learned.recall(query, NEAR_IDENTICAL) if learned is not None else None

    def _record_refit(self, outcome: RefitOutcome) -> None:
        record = getattr(self.corrections, "record_refit", None)
        if callable(record):
            record(outcome.to_dict())

    def wait_for_refits(self, seconds: float) -> None:
        """From now on, the route after a correction waits up to `seconds` for its refit
        (`eval --learn` wants every next line routed with what was just learned)."""
        with self._lock:
            self.refit_wait = seconds
            for head in self._heads.values():
                head.wait_seconds = seconds

    def wait_refit(self, timeout: float | None = None) -> bool:
        """Block until every running refit is done (tests, `eval --learn`); False on timeout."""
        with self._lock:
            heads = list(self._heads.values())
        return all(head.wait(timeout) for head in heads)

    @property
    def last_refit(self) -> RefitOutcome | None:
        """The outcome of the latest refit of the most recent roster."""
        with self._lock:
            heads = list(self._heads.values())
        return heads[-1].last if heads else None

    def _query(self, text: str) -> Vector:
        vector = self._queries.settled(text, self._lock)  # a draft may be encoding it now
        if vector is not None:
            return vector
        encoder = self._encoder
        assert encoder is not None
        vector = np.asarray(encoder.encode([text]), dtype=np.float32)[0]
        with self._lock:
            self._queries.put(text, vector)
        return vector

    def draft_vectors(self, texts: Sequence[str]) -> None:
        """Encode what a message being typed will be routed on, before it is sent; kept apart
        from routed messages (`RecentVectors.put_draft`). Nothing happens until loaded."""
        encoder = self._encoder if self.ready else None  # set once, when loaded
        if encoder is not None:
            self._queries.encode_drafts(texts, encoder, self._lock)

    # ----------------------------------------------------------------- routing

    async def classify(
        self,
        message: str,
        history: Sequence[HistoryEntry],
        modes: Sequence[Profile],
        instructions: str,
        inputs: Mapping[str, Any],
    ) -> Decision:
        """Pick the mode whose examples and description are closest to the message."""
        future = self.start()
        try:
            if not future.done():
                await asyncio.wrap_future(future)
            future.result()
        except Exception:
            self._reported_failure = future  # the next route tries again
            raise
        return await asyncio.to_thread(self.classify_now, message, history, modes)

    def classify_now(
        self, message: str, history: Sequence[HistoryEntry], modes: Sequence[Profile]
    ) -> Decision:
        """The synchronous core of `classify` (waits for loading if needed)."""
        self.wait()
        index = self._index_for(modes)
        roster = self._head_for(modes)
        head = roster.fitted.head
        query = self._query(message)
        logits = head.logits(query[None, :])
        near = head.nearness(query[None, :])
        scored = head.score_rows(query[None, :], logits, near)[0]
        decided_by, lead = query, ""
        previous = _previous_user_message(history)
        if self.params.follow_up and previous is not None:
            before = int(np.argmax(scored.probabilities))
            previous_query = self._query(previous)
            related = float(np.asarray(previous_query, np.float32) @ query) >= index.unrelated
            weight = _follow_weight(scored.confidence, related, follow_up_score(message))
            earlier = previous_query[None, :]
            scored = head.score_rows(
                query[None, :],
                _mix(logits, head.logits(earlier), weight),
                # its words, not the user's verdict on it: a correction of that very message
                # is the turn's mode, which the conversation step weighs already
                _mix_near(near, head.nearness(earlier, twins=False), weight),
            )[0]
            if int(np.argmax(scored.probabilities)) != before:
                # The previous message decided it: its nearest row is the evidence.
                decided_by, lead = previous_query, "follows up on the previous message, "
        recalled = self._recall(modes, query)
        if recalled is not None:
            # The user said where this very message belongs, whether or not the refit that
            # learned it was taken: their word on one message is not generalisation.
            near = head.nearness(query[None, :])
            near = replace(near, learned=np.array([recalled[0]], dtype=np.int64))
            scored = head.score_rows(query[None, :], logits, near)[0]
            decided_by, lead = query, ""
        best = int(np.argmax(scored.probabilities))
        evidence = roster.evidence(decided_by, best, self.fallback)
        if recalled is not None and recalled[0] == best:
            evidence = recalled[1]
        reason = lead + (_describe(evidence) if evidence else f"{roster.names[best]} by the head")
        if scored.none >= NONE_SHOWN:
            negative = roster.evidence(query, NONE, self.fallback)
            if recalled is not None and recalled[0] == NONE:
                negative = replace(recalled[1], mode=self.fallback or "the fallback")
            if negative is not None:
                reason = f"{_describe(negative)}, which no mode should take; {reason}"
        probabilities = {
            name: float(p) for name, p in zip(roster.names, scored.probabilities, strict=True)
        }
        confidence = min(MAX_CONFIDENCE, scored.confidence)
        return Decision(
            roster.names[best],
            round(confidence, 4),
            reason,
            rounded_probabilities(probabilities),
            evidence,
        )

    def similarity(self, message: str, texts: Sequence[str]) -> tuple[list[float], float] | None:
        """Cosines of `message` to `texts` and the least worth showing (the pack's
        `unrelated` cosine), for a chat or judge stage picking corrections for its prompt;
        None until the encoder and the pack's index are ready."""
        seen = self.turn_vectors([message])
        if seen is None:
            return None
        self._ensure(texts)
        with self._lock:
            vectors = [self._vectors[text] for text in texts]
        cosines = np.einsum("ij,j->i", np.stack(vectors), seen[0][0]) if vectors else []
        return [float(c) for c in cosines], seen[1]

    def turn_vectors(self, texts: Sequence[str]) -> tuple[list[Vector], float] | None:
        """Vectors of routed messages (each encoded once, then a cached query) and the pack's
        `unrelated` cosine, for the router's conversation step; None until loaded."""
        with self._lock:
            index = next(reversed(self._indexes.values()), None) if self.ready else None
        return None if index is None else ([self._query(t) for t in texts], index.unrelated)

    def trace(self) -> ClassifierInfo:
        """`embedding` with the encoder's name."""
        return ClassifierInfo("embedding", self.encoder_name)


def _follow_weight(confidence: float, related: bool, shape: FollowUp) -> float:
    """How much the previous message's scores count beside the message's own.

    A message on the previous one's topic (a cosine above `unrelated`) leans on it as much as it
    is unsure of itself; one that reads as a follow-up ("what does -a do?") leans on it whatever
    its topic, as much as it cannot stand alone (`f / (1 - f)`, at most 4; `follow_up.carried`).
    """
    follow = carried(shape, confidence)
    # nothing in its shape pulls back (a whole request with no cue, or a terse one whose
    # words are sure: "poem about pasta" after a dinner question): it leans only as far as
    # it is unsure of itself
    floor = 0.0 if follow <= 0 and not shape.statement else FOLLOW_UP_MIN_WEIGHT
    weight = max(1.0 - confidence, floor) if related else 0.0
    if follow >= FOLLOW_UP_LEAN:
        weight = max(weight, min(follow / max(1.0 - follow, 1e-9), FOLLOW_UP_MAX_WEIGHT))
    return weight


def _mix(now: Any, earlier: Any, weight: float) -> Any:
    """The message's scores with the previous message's mixed in at `weight`."""
    return (now + weight * earlier) / (1.0 + weight)


def _mix_near(now: Nearness, earlier: Nearness, weight: float) -> Nearness:
    """Nearness mixed the same way; near-identical corrections and negatives are the
    message's own."""
    return Nearness(
        _mix(now.per_class, earlier.per_class, weight),
        _mix(now.positive, earlier.positive, weight),
        now.negative,
        now.learned,
    )


def _describe(evidence: Evidence) -> str:
    """The reason for the panel: what decided, and how near it is."""
    return f"{evidence.describe()} ({evidence.similarity:.2f})"


def _previous_user_message(history: Sequence[HistoryEntry]) -> str | None:
    return next(
        (e.content for e in reversed(history) if e.role == "user" and e.content.strip()), None
    )
