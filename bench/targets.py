"""Issue 21's targets on the shared data sets: in-scope accuracy at out-of-scope recall,
static and after 1,000 corrected turns, ours beside the semantic-router baseline. Run through
bench/routing.py:

    python bench/routing.py --targets [--data ../shared/data]

Protocol, per data set (loaders and descriptions are bench/routing.py's):
- out of scope: banking77 holds `HELD_OUT` of its 77 intents out (seeded pick) and snips2017
  one of its 7; their rows, train and test, expect the fallback. sr_healthcare has its own.
- examples: k = 20 per mode from the train split (sr_healthcare: its 7 train rows per route);
- validation, to fit each method's threshold (best harmonic mean of in-scope accuracy and
  out-of-scope recall, as `modes-tui eval --fit` picks it): 300 other in-scope train rows and
  up to 100 out-of-scope ones (sr_healthcare: its validation split);
- test: banking77 `--banking-test` rows of its test split, snips2017 its validate files,
  sr_healthcare its test split; never seen before scoring;
- after 1,000 corrected turns: 1,000 more train rows (in scope and out of scope, shuffled)
  stream past a user who corrects every wrong route at the static threshold; ours learns a
  wrong mode as an example and a wrong route of an out-of-scope row as a negative example
  (a correction to the fallback); the baseline (max cosine over its examples) adds its
  in-scope corrections as examples and has nothing to learn from the others. Both thresholds
  are then fitted again on the same validation rows;
- ceiling: every other train row as an example (ours: the out-of-scope train rows as
  negatives), no stream, threshold on the validation rows.
Numbers: in-scope accuracy (right mode, not fallen back) and out-of-scope recall (fell back).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from modes_tui.core.packs.profiles import Profile
from modes_tui.core.routing.classifiers.mode_index import ModeIndex
from modes_tui.core.routing.learning import learned_examples, split_negatives
from modes_tui.core.values.correction import Correction

K = 20
HELD_OUT = 10
VALIDATION_IN = 300
VALIDATION_OUT = 100
STREAM = 1000
CEILING_PER_MODE = 600
"""Ceiling examples per mode at most (banking77's whole train split in one leave-one-out
matrix would need several GB); the rows are still all that the stream could ever see."""

Row = tuple[str, str | None]


@dataclass
class Target:
    """One method's (in-scope accuracy, out-of-scope recall, threshold) per stage."""

    static: tuple[float, float, float]
    learned: tuple[float, float, float] | None
    ceiling: tuple[float, float, float]


def open_set(dataset: Any, held: Sequence[str]) -> Any:
    """The dataset with the `held` modes turned into out-of-scope rows."""
    from dataclasses import replace

    def relabel(rows: list[Row]) -> list[Row]:
        return [(t, None if m in held else m) for t, m in rows]

    return replace(
        dataset,
        modes=[m for m in dataset.modes if m not in held],
        train=relabel(dataset.train),
        test=relabel(dataset.test),
    )


class Ours:
    """The embedding backend's index, negatives included."""

    def __init__(self, modes: list[str], descriptions: dict[str, str], vec: Any) -> None:
        self.modes, self.descriptions, self.vec = modes, descriptions, vec

    def build(self, examples: dict[str, list[str]], corrections: list[Correction]) -> Any:
        profiles = [
            Profile(m, self.descriptions[m], examples=tuple(examples[m])) for m in self.modes
        ]
        positive, negative = split_negatives(corrections, set(self.modes), FALLBACK)
        learned = learned_examples(profiles, positive, lambda text: self.vec([text])[0])
        index = ModeIndex(
            self.modes,
            self.vec([self.descriptions[m] for m in self.modes]),
            [self.vec(list(m.texts)) for m in learned],
            [m.texts for m in learned],
            notes=[m.notes for m in learned],
            negatives=self.vec([c.text for c in negative]) if negative else None,
            negative_texts=[c.text for c in negative],
        )

        def predict(vector: Any) -> tuple[str, float]:
            scored = index.score(vector)
            return scored.mode, scored.confidence

        return predict


class Baseline:
    """semantic-router: the mode of the most similar example, its cosine as the score."""

    def __init__(self, modes: list[str], vec: Any) -> None:
        self.modes, self.vec = modes, vec

    def build(self, examples: dict[str, list[str]], corrections: list[Correction]) -> Any:
        texts = [t for m in self.modes for t in examples[m]]
        owners = [m for m in self.modes for _ in examples[m]]
        texts += [c.text for c in corrections if c.corrected_mode != FALLBACK]
        owners += [c.corrected_mode for c in corrections if c.corrected_mode != FALLBACK]
        anchors = self.vec(texts)

        def predict(vector: Any) -> tuple[str, float]:
            similarities = anchors @ vector
            best = int(np.argmax(similarities))
            return owners[best], float(max(0.0, min(1.0, similarities[best])))

        return predict


FALLBACK = "(fallback)"


def _score(
    predict: Callable[[Any], tuple[str, float]], rows: list[Row], vectors: Any, modes: list[str]
) -> tuple[list[Any], Callable[[float], tuple[float, float]]]:
    from bench.routing import outcome

    outcomes = [outcome(row, *predict(v)) for row, v in zip(rows, vectors, strict=True)]

    def at(threshold: float) -> tuple[float, float]:
        from modes_tui.core.evals.scoring import evaluate

        report = evaluate(outcomes, modes, FALLBACK, threshold)
        return report.in_scope_accuracy or 0.0, report.fallback.recall or 0.0

    return outcomes, at


def _measure(
    predict: Any, validation: Any, test: Any, modes: list[str]
) -> tuple[float, float, float]:
    from bench.routing import fitted

    outcomes, _ = _score(predict, *validation, modes)
    threshold = fitted(outcomes, modes)
    _, at = _score(predict, *test, modes)
    accuracy, recall = at(threshold)
    return accuracy, recall, threshold


def _stream(
    method: Any, examples: dict[str, list[str]], rows: list[Row], vectors: Any, threshold: float
) -> list[Correction]:
    corrections: list[Correction] = []
    predict = method.build(examples, corrections)
    for (text, mode), vector in zip(rows, vectors, strict=True):
        routed, confidence = predict(vector)
        fell_back = confidence < threshold
        right = fell_back if mode is None else (not fell_back and routed == mode)
        if right:
            continue
        if mode is None and isinstance(method, Baseline):
            continue  # semantic-router has no way to learn "none of these"
        corrections.append(Correction(text, mode or FALLBACK, routed_mode=routed, source="eval"))
        predict = method.build(examples, corrections)
    return corrections


def run_targets(dataset: Any, descriptions: dict[str, str], vec: Any, seed: int) -> dict[str, Any]:
    """Static, learned and ceiling numbers for ours and the baseline on one data set."""
    rng = random.Random(seed)
    by_mode: dict[str, list[str]] = {m: [] for m in dataset.modes}
    outside = [t for t, m in dataset.train if m is None]
    for text, mode in dataset.train:
        if mode is not None:
            by_mode[mode].append(text)
    for texts in by_mode.values():
        rng.shuffle(texts)
    rng.shuffle(outside)
    k = min(K, *(len(t) for t in by_mode.values()))
    examples = {m: texts[:k] for m, texts in by_mode.items()}
    rest: list[Row] = [(t, m) for m, texts in by_mode.items() for t in texts[k:]]
    rng.shuffle(rest)
    if getattr(dataset, "validation", None):
        validation_rows = dataset.validation
    else:
        validation_rows = rest[:VALIDATION_IN] + [(t, None) for t in outside[:VALIDATION_OUT]]
        rest = rest[VALIDATION_IN:]
        outside = outside[VALIDATION_OUT:]
    pool = rest + [(t, None) for t in outside]
    rng.shuffle(pool)
    stream = pool[:STREAM] if len(pool) >= STREAM else []
    validation = (validation_rows, vec([t for t, _ in validation_rows]))
    test = (dataset.test, vec([t for t, _ in dataset.test]))
    methods = {
        "ours": Ours(dataset.modes, descriptions, vec),
        "semantic-router": Baseline(dataset.modes, vec),
    }
    everything = {
        m: examples[m] + [t for t, mode in pool if mode == m][: CEILING_PER_MODE - k]
        for m in dataset.modes
    }
    ceiling_negatives = [Correction(t, FALLBACK) for t, mode in pool if mode is None]
    results: dict[str, Any] = {"k": k, "stream": len(stream)}
    for name, method in methods.items():
        static = _measure(method.build(examples, []), validation, test, dataset.modes)
        learned = None
        if stream:
            corrections = _stream(method, examples, stream, vec([t for t, _ in stream]), static[2])
            learned = _measure(method.build(examples, corrections), validation, test, dataset.modes)
            results[f"{name} corrections"] = len(corrections)
        ceiling = _measure(
            method.build(everything, ceiling_negatives if name == "ours" else []),
            validation,
            test,
            dataset.modes,
        )
        results[name] = Target(static, learned, ceiling)
    return results


def print_targets(name: str, note: str, results: dict[str, Any]) -> None:
    """One markdown table per data set."""
    print(f"\n### {name}: {note}; k = {results['k']}; stream: {results['stream']} turns\n")
    print("| method | stage | in-scope accuracy | out-of-scope recall | threshold | target |")
    print("|---|---|---|---|---|---|")
    for method in ("ours", "semantic-router"):
        target: Target = results[method]
        stages = [("static", target.static, (0.80, 0.80))]
        if target.learned is not None:
            count = results.get(f"{method} corrections", 0)
            stages.append(
                (
                    f"after {results['stream']} turns ({count} corrections)",
                    target.learned,
                    (0.90, 0.85),
                )
            )
        stages.append(("ceiling (train rows as examples)", target.ceiling, None))
        for stage, (accuracy, recall, threshold), goal in stages:
            met = (
                "-"
                if goal is None
                else (
                    "met"
                    if accuracy >= goal[0] and recall >= goal[1]
                    else f"missed ({goal[0]:.2f} at {goal[1]:.2f})"
                )
            )
            print(
                f"| {method} | {stage} | {accuracy:.3f} | {recall:.3f} | {threshold:.3f} | {met} |"
            )


@dataclass
class OpenSet:
    """A data set with out-of-scope rows (mode None) in train and test."""

    name: str
    modes: list[str]
    train: list[Row]
    test: list[Row]
    note: str
    validation: list[Row] | None = None


def load_open_sets(data: Any, banking_rows: int, seed: int) -> list[OpenSet]:
    """banking77 and snips2017 with modes held out, sr_healthcare with its own splits."""
    import csv

    from bench.routing import BANKING_GROUPS, load_snips

    group_of = {i: g for g, intents in BANKING_GROUPS.items() for i in intents}
    held = set(random.Random(seed).sample(sorted(group_of), HELD_OUT))

    def banking(split: str) -> list[Row]:
        with (data / "banking77" / f"{split}.csv").open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        return [
            (r["text"], None if r["category"] in held else group_of[r["category"]]) for r in rows
        ]

    test = random.Random(seed).sample(banking("test"), banking_rows)
    sets = [
        OpenSet(
            "banking77",
            list(BANKING_GROUPS),
            banking("train"),
            test,
            f"7 modes; {HELD_OUT} of 77 intents held out as out of scope "
            f"({', '.join(sorted(held))}); test: {len(test)} rows, "
            f"{sum(m is None for _, m in test)} out of scope",
        )
    ]
    snips = load_snips(data)
    out = random.Random(seed).choice(snips.modes)
    opened = open_set(snips, [out])
    sets.append(
        OpenSet(
            "snips2017",
            opened.modes,
            opened.train,
            opened.test,
            f"6 intents; {out} held out as out of scope; test: validate, {len(opened.test)} rows",
        )
    )
    path = data / "sr_healthcare" / "healthcare-routing-evaluation.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))

    def split(name: str) -> list[Row]:
        return [(r["utterance"], r["expected_route"] or None) for r in rows if r["split"] == name]

    from bench.routing import DESCRIPTIONS

    health_test = split("test")
    sets.append(
        OpenSet(
            "sr_healthcare",
            list(DESCRIPTIONS["sr_healthcare"]),
            split("train"),
            health_test,
            f"7 routes; validation split for the threshold; test split: {len(health_test)} rows, "
            f"{sum(m is None for _, m in health_test)} out of scope",
            split("validation"),
        )
    )
    return sets
