"""A follow-up after a message the user corrected: the correction counts once, as the turn's
mode in the conversation step, and not again inside the classifier's reading of the
follow-up (found in the app, 2026-12-07)."""

from __future__ import annotations

import asyncio

import pytest

from modes_tui.core.history.conversation import Message
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.routing.classifiers.embedding import EmbeddingClassifier
from modes_tui.core.routing.corrections import MemoryCorrections
from modes_tui.core.routing.router import Router
from modes_tui.core.values.correction import Correction

CRON = "how do I list cron jobs for all users"
BUILD = "clean the build folder"


def after(previous: str, mode: str, text: str) -> list[Message]:
    return [
        Message("user", previous),
        Message("assistant", "(answer)", mode=mode),
        Message("user", text),
    ]


@pytest.mark.local
def test_a_request_after_a_corrected_message_routes_on_its_own_words_and_fragments_stay() -> None:
    from modes_tui.llm.encoders import MiniLMEncoder

    pack = load_pack("default")
    corrections = MemoryCorrections()
    encoder = MiniLMEncoder()
    classifier = EmbeddingClassifier(
        lambda: encoder,
        encoder_name="all-MiniLM-L6-v2",
        modes=pack.profiles,
        corrections=corrections,
        fallback=pack.router.fallback,
    )
    classifier.wait_for_refits(60)  # each route after a correction waits for its refit
    router = Router(pack, classifier)
    script = "now put that in a python script that emails me the list"
    before = asyncio.run(router.route(after(CRON, "shell", script)))
    assert before.mode_name == "code", before.reason
    # the user sent both first messages to shell through the doubt dialog
    corrections.add(Correction(CRON, "shell", routed_mode="chat"))
    corrections.add(Correction(BUILD, "shell", routed_mode="chat"))
    route = asyncio.run(router.route(after(CRON, "shell", script)))
    assert route.mode_name == "code", route.reason  # was shell at 0.84
    assert "follows up on the previous message" not in (route.reason or "")
    for previous, fragment in [
        (CRON, "and only the ones that run at night"),
        (BUILD, "and the cache folder too"),
    ]:
        stays = asyncio.run(router.route(after(previous, "shell", fragment)))
        assert stays.mode_name == "shell", stays.reason
