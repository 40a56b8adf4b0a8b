"""A follow-up after a message the user corrected: the correction counts once, as the turn's
mode in the conversation step, and not again inside the classifier's reading of the
follow-up, which mixes in the previous message's words but not the verdict on them (found in
the app, 2026-12-07)."""

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
def test_after_a_corrected_message_a_request_reads_its_own_words_and_follow_ups_stay() -> None:
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
    # the message's own reading stays code: the user's verdict on the cron line no longer
    # stands in for its words (it was shell at 0.84, "like your correction … (1.00)"); what
    # it asks to be made ("write a python script") decides it as a request of its own
    reading = route.alone if route.alone is not None else route
    assert (route.mode_name, reading.mode_name) == ("code", "code"), route.reason
    assert "like your correction" not in (route.reason or "")
    follow_ups = [
        (CRON, "and only the ones that run at night"),
        (CRON, "can you make it shorter"),
        (CRON, "why?"),
        (CRON, "what does that do?"),
        (BUILD, "and the cache folder too"),
    ]
    for previous, follow_up in follow_ups:
        stays = asyncio.run(router.route(after(previous, "shell", follow_up)))
        assert stays.mode_name == "shell", (follow_up, stays.reason)
