"""Learning benchmark: accuracy as a simulated user corrects wrong routes, calibration, and
the warm decision latency with 1,000 corrections. Run through bench/routing.py:

    python bench/routing.py --learning [--data ../shared/data] [--seeds 1]

Protocol, per dataset (the datasets and their modes are bench/routing.py's):
- k = 20 examples per mode are drawn from the train split (seeded; sr_healthcare has only 7
  train rows per route, so it starts from k = 3 and streams the other 4 per route);
- the rest of the train split's in-scope rows, shuffled, is the stream. Each streamed message
  is routed with what was learned so far; a wrong route becomes a correction (text -> true
  mode), exactly as `modes-tui eval --learn` does;
- **ours**: the embedding backend's own code: `core.routing.learning.learned_examples` (corrections
  join their mode; a correction beats a near-identical example of another mode) and
  `ModeIndex` with the temperature fitted on the pack (refitted after each correction);
- **semantic-router (same corrections)**: max cosine over the examples plus *our*
  corrections, as plain examples; **semantic-router (own corrections)**: the same user
  corrects the baseline's own mistakes, added as plain examples;
- accuracy: on the test split (in-scope rows; the route's mode, threshold off) at the start
  and after 500 and 1,000 streamed turns (or the end of a shorter stream);
- ECE (10 bins; rows that expect the fallback count as wrong) on the test split at the start
  and the end: now (`core.routing.calibration`), with the temperature fixed at 0.05 instead of
  fitted, and with the previous calibration (a "none of these" option inside the softmax at a
  floor at the 10th percentile, `previous_confidences`), all in the same run; beside them the
  noise floor: the ECE a perfectly calibrated router with the same confidences would show on
  this many rows (mean over 200 draws of its right/wrong outcomes);
- the ceiling: accuracy with the whole train split as examples (no stream), ours and the
  nearest-example baseline: what streaming more of the same data could reach at best.
"""

from __future__ import annotations

import csv
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from modes_tui.core.evals.scoring import percentile
from modes_tui.core.packs.profiles import Profile
from modes_tui.core.routing.calibration import expected_calibration_error, loo_scores, reliability
from modes_tui.core.routing.classifiers.embedding import EmbeddingClassifier
from modes_tui.core.routing.classifiers.mode_index import TEMPERATURE, ModeIndex
from modes_tui.core.routing.corrections import MemoryCorrections
from modes_tui.core.routing.learning import learned_examples
from modes_tui.core.values.correction import Correction

CHECKPOINTS = (0, 500, 1000)
K_START = 20


@dataclass
class Curve:
    """One method's numbers on one dataset."""

    accuracy: dict[int, float] = field(default_factory=dict)
    corrections: dict[int, int] = field(default_factory=dict)
    online: list[float] = field(default_factory=list)
    """Accuracy of the streamed routes per block of 100 turns (the learning curve)."""


@dataclass
class LearningResult:
    name: str
    note: str
    streamed: int
    curves: dict[str, Curve]
    ece: dict[str, float]
    temperature: dict[str, float]
    k_full: int
    ceiling: dict[str, float]
    """Accuracy with the whole train split as examples: ours, and the baseline."""
    noise: dict[str, float]
    """ECE of a perfectly calibrated router with our confidences, at the start and the end."""
    test_rows: int
    """Rows of the test split."""


def _profiles(modes: Sequence[str], descriptions: dict[str, str], examples: dict[str, list[str]]):
    return [Profile(m, descriptions[m], examples=tuple(examples[m])) for m in modes]


def _index(profiles: list[Profile], corrections: list[Correction], vec: Any, **kw: Any):
    learned = learned_examples(profiles, corrections, lambda text: vec([text])[0])
    return ModeIndex(
        [p.name for p in profiles],
        vec([p.description for p in profiles]),
        [vec(list(m.texts)) for m in learned],
        [m.texts for m in learned],
        notes=[m.notes for m in learned],
        **kw,
    )


def _accuracy(predict: Any, rows: Sequence[tuple[str, str | None]], vectors: np.ndarray) -> float:
    scored = [(predict(v), mode) for (_, mode), v in zip(rows, vectors, strict=True) if mode]
    return sum(p == m for p, m in scored) / len(scored)


def _ece(index: ModeIndex, rows: Sequence[tuple[str, str | None]], vectors: np.ndarray) -> float:
    confidence, correct = [], []
    for (_, mode), vector in zip(rows, vectors, strict=True):
        scored = index.score(vector)
        confidence.append(scored.confidence)
        correct.append(scored.mode == mode)
    return expected_calibration_error(reliability(confidence, correct)) or 0.0


def _noise_floor(index: ModeIndex, vectors: np.ndarray, seed: int) -> float:
    """Mean ECE of a router whose confidences are exactly right, on this many rows."""
    confidence = np.array([index.score(v).confidence for v in vectors])
    rng = np.random.default_rng(seed)
    draws = [
        expected_calibration_error(
            reliability(list(confidence), list(rng.random(len(confidence)) < confidence))
        )
        or 0.0
        for _ in range(200)
    ]
    return float(np.mean(draws))


def previous_confidences(index: ModeIndex, vectors: np.ndarray) -> np.ndarray:
    """Confidences as the backend computed them before the in-scope step (kept here only to
    print beside today's): a "none of these" option inside the softmax at a floor (the 10th
    percentile of the shipped examples' leave-one-out top scores in the pack without its
    corrections, minus 0.05), the temperature fitted by NLL with that option in place."""
    p = index.params
    weights = (p.weight_max, p.weight_top, p.weight_description, p.weight_centroid)
    shipped_mask = [np.array([n is None for n in notes], dtype=bool) for notes in index.notes]
    shipped = [b[m] for b, m in zip(index.examples, shipped_mask, strict=True)]
    alone, _ = loo_scores(shipped, index.descriptions, weights, p.neighbours)
    floor = float(np.percentile(alone.max(axis=1), 10.0)) - 0.05
    rows = np.flatnonzero(np.concatenate(shipped_mask))
    scores, labels = loo_scores(index.examples, index.descriptions, weights, p.neighbours, rows)

    def with_none(s: np.ndarray, t: float) -> np.ndarray:
        top = np.maximum(s.max(axis=1, keepdims=True), floor)
        shifted = np.exp((s - top) / t)
        return shifted / (shifted.sum(axis=1, keepdims=True) + np.exp((floor - top) / t))

    grid = np.exp(np.linspace(np.log(0.005), np.log(1.0), 400))
    losses = [
        -np.log(np.maximum(with_none(scores, t)[np.arange(len(labels)), labels], 1e-12)).mean()
        for t in grid
    ]
    best = float(grid[int(np.argmin(losses))])
    test = np.stack([index.raw_scores(v) for v in vectors])
    return with_none(test, best).max(axis=1)


def _ece_previous(
    index: ModeIndex, rows: Sequence[tuple[str, str | None]], vectors: np.ndarray
) -> float:
    confidence = previous_confidences(index, vectors)
    correct = [index.score(v).mode == mode for (_, mode), v in zip(rows, vectors, strict=True)]
    return expected_calibration_error(reliability(list(confidence), correct)) or 0.0


def _ceiling(
    dataset: Any, descriptions: dict[str, str], vec: Any, test_vectors: np.ndarray
) -> dict[str, float]:
    everything = {m: [t for t, mode in dataset.train if mode == m] for m in dataset.modes}
    index = _index(_profiles(dataset.modes, descriptions, everything), [], vec)
    anchors = vec([t for m in dataset.modes for t in everything[m]])
    owners = [m for m in dataset.modes for _ in everything[m]]
    return {
        "ours": _accuracy(lambda v: index.score(v).mode, dataset.test, test_vectors),
        "nearest example": _accuracy(
            lambda v: owners[int(np.argmax(anchors @ v))], dataset.test, test_vectors
        ),
    }


@dataclass
class _Start:
    """Where learning starts: k examples per mode, and the stream of corrections to come."""

    k: int
    full_k: int
    examples: dict[str, list[str]]
    stream: list[tuple[str, str]]


def _start(dataset: Any, rng: random.Random) -> _Start:
    by_mode: dict[str, list[str]] = {m: [] for m in dataset.modes}
    for text, mode in dataset.train:
        if mode is not None:
            by_mode[mode].append(text)
    smallest = min(len(texts) for texts in by_mode.values())
    k = K_START if smallest > K_START else 3
    examples, stream = {}, []
    for mode in dataset.modes:
        texts = by_mode[mode][:]
        rng.shuffle(texts)
        examples[mode] = texts[:k]
        stream += [(t, mode) for t in texts[k:]]
    rng.shuffle(stream)
    return _Start(k, min(K_START, smallest), examples, stream[: CHECKPOINTS[-1]])


def _shipped_pack(
    dataset: Any, descriptions: dict[str, str], start: _Start, vec: Any, test_vectors: np.ndarray
) -> tuple[float, float, float]:
    """The pack as shipped, k = 20 (sr_healthcare: all 7 train rows per route), no stream:
    its ECE before and after calibration, and its temperature."""
    shipped = _profiles(
        dataset.modes,
        descriptions,
        {
            m: start.examples[m]
            + [t for t, mode in start.stream if mode == m][: start.full_k - start.k]
            for m in dataset.modes
        },
    )
    shipped_index = _index(shipped, [], vec)
    before = _ece(_index(shipped, [], vec, temperature=TEMPERATURE), dataset.test, test_vectors)
    return before, _ece(shipped_index, dataset.test, test_vectors), shipped_index.temperature


class _Learners:
    """The learners side by side over one stream: ours (each wrong route becomes a correction
    the index learns), semantic-router fed the same corrections (sr-same), and
    semantic-router correcting its own mistakes (sr-own)."""

    def __init__(
        self, dataset: Any, profiles: Any, examples: dict[str, list[str]], vec: Any
    ) -> None:
        self.dataset, self.profiles, self.vec = dataset, profiles, vec
        self.ours: list[Correction] = []
        self.own: list[tuple[str, str]] = []
        self.anchor_texts = [t for m in dataset.modes for t in examples[m]]
        self.anchor_owners = [m for m in dataset.modes for _ in examples[m]]
        self.index = _index(profiles, self.ours, vec)
        self.curves = {name: Curve() for name in ("ours", "sr-same", "sr-own")}
        self.hits = {name: 0 for name in self.curves}
        self.own_predict: Any = None

    def nearest(self, texts: list[str], owners: list[str]) -> Any:
        """semantic-router's rule: the mode of the nearest anchor."""
        matrix = self.vec(texts)
        return lambda v: owners[int(np.argmax(matrix @ v))]

    def measure(self, turn: int, test_vectors: np.ndarray) -> None:
        same = self.nearest(
            self.anchor_texts + [c.text for c in self.ours],
            self.anchor_owners + [c.corrected_mode for c in self.ours],
        )
        for name, predict, count in (
            ("ours", lambda v: self.index.score(v).mode, len(self.ours)),
            ("sr-same", same, len(self.ours)),
            ("sr-own", self.own_predict, len(self.own)),
        ):
            self.curves[name].accuracy[turn] = _accuracy(predict, self.dataset.test, test_vectors)
            self.curves[name].corrections[turn] = count

    def learn(self, text: str, mode: str, vector: np.ndarray) -> None:
        """One message of the stream: each learner routes it, and learns when it was wrong."""
        routed = self.index.score(vector).mode
        self.hits["ours"] += routed == mode
        if routed != mode:
            self.ours.append(Correction(text, mode, routed_mode=routed, source="eval"))
            self.index = _index(self.profiles, self.ours, self.vec)
        base = self.own_predict(vector)
        self.hits["sr-own"] += base == mode
        if base != mode:
            self.own.append((text, mode))
            self.own_predict = self.nearest(
                self.anchor_texts + [t for t, _ in self.own],
                self.anchor_owners + [m for _, m in self.own],
            )

    def close_block(self, turn: int) -> None:
        """The online accuracy of the block of (up to) 100 messages ending at `turn`."""
        block = turn - (turn - 1) // 100 * 100
        for name in ("ours", "sr-own"):
            self.curves[name].online.append(self.hits[name] / block)
            self.hits[name] = 0


def run_learning(dataset: Any, descriptions: dict[str, str], vec: Any, seed: int) -> LearningResult:
    start = _start(dataset, random.Random(seed))
    k, stream = start.k, start.stream
    profiles = _profiles(dataset.modes, descriptions, start.examples)
    test_vectors = vec([t for t, _ in dataset.test])
    stream_vectors = vec([t for t, _ in stream])
    learners = _Learners(dataset, profiles, start.examples, vec)
    index = learners.index
    fixed = _index(profiles, [], vec, temperature=TEMPERATURE)
    ece = {"before (T=0.05), start": _ece(fixed, dataset.test, test_vectors)}
    ece["calibrated, start"] = _ece(index, dataset.test, test_vectors)
    ece["previous, start"] = _ece_previous(index, dataset.test, test_vectors)
    noise = {"start": _noise_floor(index, test_vectors, seed)}
    temperature = {"start": index.temperature}
    ece["k20 before"], ece["k20 calibrated"], temperature["k20"] = _shipped_pack(
        dataset, descriptions, start, vec, test_vectors
    )
    learners.own_predict = learners.nearest(learners.anchor_texts, learners.anchor_owners)
    checkpoints = [c for c in CHECKPOINTS if c <= len(stream)]
    if len(stream) not in checkpoints:
        checkpoints.append(len(stream))
    learners.measure(0, test_vectors)
    for turn, ((text, mode), vector) in enumerate(zip(stream, stream_vectors, strict=True), 1):
        learners.learn(text, mode, vector)
        if turn % 100 == 0 or turn == len(stream):
            learners.close_block(turn)
        if turn in checkpoints:
            learners.measure(turn, test_vectors)
    index, ours, curves = learners.index, learners.ours, learners.curves
    ece["calibrated, end"] = _ece(index, dataset.test, test_vectors)
    ece["before (T=0.05), end"] = _ece(
        _index(profiles, ours, vec, temperature=TEMPERATURE), dataset.test, test_vectors
    )
    ece["previous, end"] = _ece_previous(index, dataset.test, test_vectors)
    noise["end"] = _noise_floor(index, test_vectors, seed)
    temperature["end"] = index.temperature
    ceiling = _ceiling(dataset, descriptions, vec, test_vectors)
    note = f"k = {k} per mode to start; stream: {len(stream)} train rows; test: {len(dataset.test)}"
    return LearningResult(
        dataset.name,
        note,
        len(stream),
        curves,
        ece,
        temperature,
        start.full_k,
        ceiling,
        noise,
        len(dataset.test),
    )


def print_learning(result: LearningResult) -> None:
    print(f"\n### Learning from corrections: {result.name} ({result.note})\n")
    turns = sorted(result.curves["ours"].accuracy)
    print("| method | " + " | ".join(f"after {t} turns" for t in turns) + " | gain |")
    print("|---|" + "---|" * (len(turns) + 1))
    labels = {
        "ours": "ours",
        "sr-same": "semantic-router, our corrections as examples",
        "sr-own": "semantic-router, correcting its own mistakes",
    }
    for name, curve in result.curves.items():
        cells = [f"{curve.accuracy[t]:.3f} ({curve.corrections[t]} corr.)" for t in turns]
        gain = curve.accuracy[turns[-1]] - curve.accuracy[0]
        print(f"| {labels[name]} | " + " | ".join(cells) + f" | {gain * 100:+.1f} pts |")
    online = result.curves["ours"].online
    if online:
        print(
            "\nours, accuracy of the streamed routes per block of 100 turns: "
            + " ".join(f"{a:.2f}" for a in online)
        )
    c = result.ceiling
    print(
        f"\nceiling, the whole train split as examples (no stream): ours {c['ours']:.3f}, "
        f"nearest example {c['nearest example']:.3f}; start + 5 pts = "
        f"{result.curves['ours'].accuracy[0] + 0.05:.3f}"
    )
    t, e, n = result.temperature, result.ece, result.noise
    print(
        f"\nECE on the test split, the pack of k = {result.k_full} examples per mode: fixed "
        f"T = 0.05 {e['k20 before']:.3f}, calibrated {e['k20 calibrated']:.3f} (T = {t['k20']:.4f})"
    )
    print("\n| ECE on the test split | start | after the stream |")
    print("|---|---|---|")
    print(f"| previous calibration | {e['previous, start']:.3f} | {e['previous, end']:.3f} |")
    print(
        f"| fixed T = 0.05 | {e['before (T=0.05), start']:.3f} | {e['before (T=0.05), end']:.3f} |"
    )
    print(
        f"| **calibrated** (T start {t['start']:.4f}, end {t['end']:.4f}) "
        f"| **{e['calibrated, start']:.3f}** | **{e['calibrated, end']:.3f}** |"
    )
    print(
        f"| noise floor: a perfectly calibrated router, same confidences, "
        f"{result.test_rows} rows | {n['start']:.3f} | {n['end']:.3f} |"
    )


def warm_latency_with_corrections(
    data: Path, encoder: Any, rows: int, make_pack: Any, route_times: Any, seed: int
) -> dict[str, list[float]]:
    """10 banking77 intents as modes, 30 examples each, with 0 and 1,000 corrections: wall
    time of Router.route (query encoding included) after the first route, and the CPU time of
    the decision alone."""
    with (data / "banking77" / "train.csv").open(newline="", encoding="utf-8") as handle:
        train = [(r["text"], r["category"]) for r in csv.DictReader(handle)]
    with (data / "banking77" / "test.csv").open(newline="", encoding="utf-8") as handle:
        test = [(r["text"], r["category"]) for r in csv.DictReader(handle)]
    intents = sorted({c for _, c in train})[:10]
    rng = random.Random(seed)
    pool = {i: [t for t, c in train if c == i] for i in intents}
    for texts in pool.values():
        rng.shuffle(texts)
    examples = {i: pool[i][:30] for i in intents}
    rest = [(t, i) for i in intents for t in pool[i][30:]]
    rng.shuffle(rest)
    pack = make_pack(intents, {i: i.replace("_", " ") for i in intents}, examples)
    slug = {i: p.name for i, p in zip(intents, pack.profiles, strict=True)}
    learned = [Correction(t, slug[i], source="eval") for t, i in rest]
    while len(learned) < 1000:  # a few intents have fewer rows: reuse them, reworded
        learned += [Correction(c.text + " please", c.corrected_mode) for c in learned]
    learned = learned[:1000]
    texts = [t for t, c in test if c in intents][:rows]
    results: dict[str, list[float]] = {}
    classifiers: dict[str, EmbeddingClassifier] = {}
    builds: dict[str, float] = {}
    for label, corrections in (("no corrections", []), ("1,000 corrections", learned)):
        classifier = EmbeddingClassifier(
            lambda: encoder,
            encoder_name=encoder.name,
            modes=pack.profiles,
            corrections=MemoryCorrections(corrections),
        )
        classifier.wait()
        started = time.perf_counter()
        classifier.classify_now("warm up", [], pack.profiles)
        builds[label] = (time.perf_counter() - started) * 1000
        classifiers[label] = classifier
    # Interleaved text by text, so that a busy moment on the machine hits both alike.
    walls = route_times(pack, classifiers, texts)
    for label, classifier in classifiers.items():
        decision_wall, decision_cpu = [], []
        for text in texts:
            classifier.classify_now(text, [], pack.profiles)  # encodes the message, keeps it
            begin, begin_cpu = time.perf_counter(), time.thread_time()
            classifier.classify_now(text, [], pack.profiles)  # the decision alone
            decision_cpu.append((time.thread_time() - begin_cpu) * 1000)
            decision_wall.append((time.perf_counter() - begin) * 1000)
        results[label] = [
            percentile(walls[label], 50) or 0.0,
            percentile(walls[label], 95) or 0.0,
            percentile(decision_wall, 50) or 0.0,
            percentile(decision_cpu, 50) or 0.0,
            builds[label],
        ]
    return results
