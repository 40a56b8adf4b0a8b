"""A fallback that learns: a correction to the fallback is a negative example (issue 21)."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from modes_tui.core.history.conversation import Message
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.calibration import fit_negative_bias, negative_margins, outside
from modes_tui.core.routing.classifiers.embedding import EmbeddingClassifier
from modes_tui.core.routing.classifiers.mode_index import ModeIndex
from modes_tui.core.routing.corrections import MemoryCorrections
from modes_tui.core.routing.learning import split_negatives
from modes_tui.core.routing.router import REASON_BELOW, Router
from modes_tui.core.values.correction import Correction
from tests.conftest import PackWriter
from tests.support.fake_encoder import HashingEncoder

MODES: dict[str, dict[str, Any]] = {
    "chat": {
        "description": "Small talk and quick questions about films, food and travel.",
        "examples": ["recommend a film for tonight", "what should I cook for dinner"],
    },
    "code": {
        "description": "Programs, bugs, stack traces and failing tests.",
        "examples": [
            "my python function raises a keyerror",
            "why does this python loop never end",
            "the python unit test fails with an assertion error",
        ],
    },
}
OFF_TOPIC = "python snake care and feeding for a pet python"


@pytest.fixture
def pack(write_pack: PackWriter) -> Pack:
    folder = write_pack(
        router={"classifier": "embedding", "fallback": "chat", "below_confidence": 0.5},
        modes=MODES,
    )
    return load_pack(profiles_dir=folder)


def router_with(pack: Pack, corrections: MemoryCorrections) -> Router:
    encoder = HashingEncoder()
    classifier = EmbeddingClassifier(
        lambda: encoder,
        encoder_name=encoder.name,
        modes=pack.profiles,
        corrections=corrections,
        fallback=pack.router.fallback,
    )
    return Router(pack, classifier)


def test_a_correction_to_the_fallback_makes_a_like_message_fall_back(pack: Pack) -> None:
    corrections = MemoryCorrections()
    router = router_with(pack, corrections)
    text = "care and feeding for a pet python snake"
    before = asyncio.run(router.route([Message("user", OFF_TOPIC)]))
    assert (before.mode_name, before.decided_by) == ("code", "classifier"), before.reason
    corrections.add(Correction(text, "chat", routed_mode="code", created_at="2026-12-03T10:00:00"))
    after = asyncio.run(router.route([Message("user", OFF_TOPIC)]))
    assert (after.mode_name, after.decided_by, after.reason) == ("chat", "fallback", REASON_BELOW)
    assert after.decision is not None and after.decision.reason is not None
    assert after.decision.reason.startswith(
        "like your correction 'care and feeding for a pet python snake' -> chat (",
    ), after.decision.reason
    assert "which no mode should take" in after.decision.reason
    # the mode's own messages are untouched
    code = asyncio.run(router.route([Message("user", "my python function raises a keyerror")]))
    assert (code.mode_name, code.decided_by) == ("code", "classifier")


def test_moving_the_text_back_to_a_mode_undoes_the_negative(pack: Pack) -> None:
    corrections = MemoryCorrections()
    router = router_with(pack, corrections)
    corrections.add(Correction(OFF_TOPIC, "chat", routed_mode="code"))
    assert asyncio.run(router.route([Message("user", OFF_TOPIC)])).decided_by == "fallback"
    corrections.add(Correction(OFF_TOPIC, "code", routed_mode="chat"))
    route = asyncio.run(router.route([Message("user", OFF_TOPIC)]))
    assert (route.mode_name, route.decided_by) == ("code", "classifier")


def test_split_negatives_keeps_the_latest_correction_of_a_text() -> None:
    first = Correction("a", "chat")
    moved = Correction("a", "code")
    other = Correction("b", "chat")
    modes, negatives = split_negatives([first, moved, other], {"chat", "code"}, "chat")
    assert modes == [moved] and negatives == [other]
    assert split_negatives([other], {"chat", "code"}, None) == ([other], [])


def _unit(rows: Any) -> Any:
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_negative_bias_is_fitted_leave_one_out_and_separates_the_two() -> None:
    rng = np.random.default_rng(3)
    inside = _unit(np.eye(8)[0] + rng.normal(scale=0.3, size=(20, 8)))
    negatives = _unit(np.eye(8)[1] + rng.normal(scale=0.3, size=(6, 8)))
    margins, labels = negative_margins(inside, negatives)
    assert len(margins) == 26 and labels.sum() == 20
    bias = fit_negative_bias(margins, labels)
    chance = outside(margins, bias)
    assert chance[labels == 0].mean() > 0.8 and chance[labels == 1].mean() < 0.2
    assert fit_negative_bias(margins[:2], np.array([0, 1])) == 0.0  # too few: the default


def test_negatives_lower_only_the_confidence_of_messages_near_them() -> None:
    rng = np.random.default_rng(5)
    centres = np.eye(8)[:2]
    blocks = [_unit(c + rng.normal(scale=0.3, size=(10, 8))) for c in centres]
    texts = [[f"{m}-{i}" for i in range(10)] for m in range(2)]
    negatives = _unit(np.eye(8)[2] + 0.5 * np.eye(8)[0] + rng.normal(scale=0.2, size=(5, 8)))
    plain = ModeIndex(["a", "b"], _unit(centres), blocks, texts)
    taught = ModeIndex(
        ["a", "b"],
        _unit(centres),
        blocks,
        texts,
        negatives=negatives,
        negative_texts=[f"n-{i}" for i in range(5)],
    )
    near_negative = _unit([np.eye(8)[2] + 0.5 * np.eye(8)[0]])[0]
    assert taught.score(near_negative).confidence < 0.5 * plain.score(near_negative).confidence
    assert taught.score(near_negative).negative is not None
    example = blocks[0][0]
    assert taught.score(example).confidence == pytest.approx(
        plain.score(example).confidence, abs=0.02
    )
