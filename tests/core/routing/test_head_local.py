"""The head end to end with the real local encoder and the default pack."""

from __future__ import annotations

import asyncio

import pytest

from modes_tui.core.history.conversation import Message
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.routing.classifiers.embedding import EmbeddingClassifier
from modes_tui.core.routing.corrections import MemoryCorrections
from modes_tui.core.routing.router import Router
from modes_tui.core.values.correction import Correction

pytestmark = pytest.mark.local


def test_a_correction_teaches_the_default_pack_and_the_reason_names_it() -> None:
    from modes_tui.llm.encoders import MiniLMEncoder

    pack = load_pack("default")
    encoder = MiniLMEncoder()
    source = MemoryCorrections()
    classifier = EmbeddingClassifier(
        lambda: encoder,
        encoder_name=encoder.name,
        modes=pack.profiles,
        corrections=source,
        fallback=pack.router.fallback,
        threshold=pack.router.below_confidence,
    )
    router = Router(pack, classifier)

    def route(text: str):  # type: ignore[no-untyped-def]
        return asyncio.run(router.route([Message("user", text)]))

    text = "clean the build folder"
    before = route(text)
    target = "shell" if before.mode_name != "shell" else "code"
    source.add(Correction(text, target, routed_mode=before.mode_name))
    after = route("please clean the build folder")
    assert after.mode_name == target
    assert after.reason is not None
    assert after.reason.startswith(f"like your correction 'clean the build folder' -> {target} (")
    assert after.decision is not None and after.decision.evidence is not None
    assert after.decision.evidence.kind == "correction"
    assert classifier.last_refit is not None and classifier.last_refit.taken
    # an ordinary message of another mode is untouched, and no route claims certainty
    essay = route("write a 600-word essay about the history of tea")
    assert essay.mode_name == "write"
    assert essay.confidence is not None and essay.confidence <= 0.99
