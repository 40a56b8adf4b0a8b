"""Learning never makes the head worse (issue 31): the refit check compares heads on the
rows both measured, corrections held out like the examples, and corrections to the fallback
do not push the pack's in-scope messages below the threshold."""

from __future__ import annotations

from typing import Any

import numpy as np

from modes_tui.core.routing.classifiers.head import NONE, build_training, calibrated, held_out
from modes_tui.core.routing.classifiers.head_refit import FitCheck, measure, refuses

THRESHOLD = 0.5


def _clusters(seed: int, spread: float = 0.35) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(4, 24))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)

    def sample(centre: Any, count: int) -> Any:
        rows = centre + rng.normal(scale=spread / np.sqrt(24), size=(count, 24)) * 3
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    return centres, sample


def test_corrections_are_held_out_and_measured_like_the_examples() -> None:
    centres, sample = _clusters(3)
    blocks = [np.concatenate([sample(centres[m], 12), sample(centres[m], 4)]) for m in range(3)]
    shipped = [[True] * 12 + [False] * 4 for _ in range(3)]
    training = build_training(blocks, shipped, sample(centres[3], 4))
    out = held_out(training)
    assert sorted(out.rows.tolist()) == list(range(len(training.labels)))
    head, out = calibrated(training)
    texts = [f"row {i}" for i in range(len(training.labels))]
    check = measure(head, training, out, texts, THRESHOLD)
    corrections = {k for k in check.in_scope_rows if int(k[1].split()[1]) % 16 >= 12}
    assert len(corrections) == 12  # the 4 corrections of each mode are measured
    assert len(check.negatives) == 4


def test_a_refit_that_loses_held_out_rows_is_not_taken_whatever_its_new_rows_say() -> None:
    current = FitCheck({(0, f"example {i}"): (True, True) for i in range(50)}, {})
    # The candidate learned 20 corrections and routes them right, held out, but two of the
    # 50 rows the head in use routed right now go wrong: higher overall, worse where it counts.
    lost = {(0, f"example {i}"): (i >= 2, i >= 2) for i in range(50)}
    gained = {(1, f"correction {i}"): (True, True) for i in range(20)}
    candidate = FitCheck(lost | gained, {})
    assert candidate.in_scope > 0.95
    assert refuses(candidate, current, None)
    assert not refuses(FitCheck(current.in_scope_rows | gained, {}), current, None)


def test_corrections_to_the_fallback_do_not_push_the_packs_messages_below_the_threshold() -> None:
    centres, sample = _clusters(11, spread=0.5)
    blocks = [sample(centres[m], 20) for m in range(3)]
    shipped = [[True] * 20 for _ in range(3)]
    # Out-of-scope lines half-way between mode 0 and a topic no mode takes, corrected to the
    # fallback one by one: a stream of them, as a user who corrects them all would send.
    between = centres[0] + centres[3]
    negatives = sample(between / np.linalg.norm(between), 40)
    alone, _ = calibrated(build_training(blocks, shipped, None), threshold=THRESHOLD)
    learned, _ = calibrated(build_training(blocks, shipped, negatives), threshold=THRESHOLD)
    fresh = sample(centres[0], 400)

    def kept(head: Any) -> float:
        scored = head.score_rows(fresh)
        return float(
            np.mean(
                [s.confidence >= THRESHOLD and int(np.argmax(s.probabilities)) == 0 for s in scored]
            )
        )

    # Without the protecting bias (the bias fitted on the negatives alone) 0.74 of them were
    # kept against 0.93 with no corrections; with it 0.88: a few of the fresh rows sit nearer
    # the negatives than any held-out row did.
    assert kept(learned) >= kept(alone) - 0.08
    outside = sample(between / np.linalg.norm(between), 200)
    caught = lambda head: np.mean([s.confidence < THRESHOLD for s in head.score_rows(outside)])  # noqa: E731
    assert caught(learned) > caught(alone)
    assert NONE in learned.labels


def test_messages_like_those_corrected_out_of_the_fallback_keep_their_route_next_time() -> None:
    """The in-scope step counts the user's corrections to a mode: a pack whose examples are
    tight and whose user writes more loosely stops sending such messages to the fallback."""
    centres, _ = _clusters(0)
    rng = np.random.default_rng(0)

    def sample(centre: Any, count: int, spread: float) -> Any:
        rows = centre + rng.normal(scale=spread / np.sqrt(24), size=(count, 24)) * 3
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    blocks = [sample(centres[m], 20, 0.25) for m in range(3)]
    alone, _ = calibrated(build_training(blocks, [[True] * 20] * 3, None), threshold=THRESHOLD)
    loose = sample(centres[0], 200, 0.6)
    fell_back = [v for v in loose if alone.score(v).confidence < THRESHOLD][:15]
    assert len(fell_back) == 15
    blocks[0] = np.concatenate([blocks[0], np.array(fell_back)])
    shipped = [[True] * 20 + [False] * 15, [True] * 20, [True] * 20]
    learned, _ = calibrated(build_training(blocks, shipped, None), threshold=THRESHOLD)

    def kept(head: Any, rows: Any) -> float:
        scored = head.score_rows(rows)
        return float(
            np.mean(
                [s.confidence >= THRESHOLD and int(np.argmax(s.probabilities)) == 0 for s in scored]
            )
        )

    fresh = sample(centres[0], 400, 0.6)
    # 0.21 of them are kept before the corrections; after them 0.88 (with the step fitted on
    # the examples alone, the same corrections left it under 0.75).
    assert kept(alone, fresh) < 0.3
    assert kept(learned, fresh) >= 0.75
    # The price, stated: a loosely written topic no mode takes falls back less (0.99 before
    # the corrections, 0.78 after), most of it still does.
    outside = sample(centres[3], 300, 0.6)
    caught = np.mean([s.confidence < THRESHOLD for s in learned.score_rows(outside)])
    assert caught >= 0.75
