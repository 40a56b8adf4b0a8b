"""A long conversation against a real OpenAI-compatible server with a small window
(llama_cpp.server with the embedded GGUF, n_ctx 512): it never fails for length, older turns
are compacted into summaries the session keeps, and a resumed session gives the model the
summary (issue 24, item 3)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.history.events import (
    ConversationCompacted,
    RequestBuilt,
    TurnFailed,
    TurnFinished,
)
from modes_tui.core.paths import app_dirs
from modes_tui.store.resume import prepare_resume
from tests.llm.test_real_server import KEY_VARIABLE, alias, configure, engine_for, gguf  # noqa: F401
from tests.support.llama_server import LlamaServer, start_server

pytestmark = pytest.mark.local

N_CTX = 512
TURNS = 12
"""Enough to fill the window twice over (each turn adds ~85 tokens to 512): the first
compaction comes at turn 4 and one every 2 turns after it, 5 in all (at least 3 asked).
A window of 1,024 and 24 turns tested the same in twice the time (every compaction makes
the server read the whole prompt again)."""
SENTENCE = "Tell me about the sea, the tides and the moon that pulls them. "


@pytest.fixture(scope="module")
def small_server(gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:  # noqa: F811
    running = start_server(gguf, tmp_path_factory.mktemp("logs"), n_ctx=N_CTX)
    yield running
    running.stop()


async def test_a_long_conversation_never_fails_for_length_and_the_summaries_are_in_the_session(
    small_server: LlamaServer, write_pack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VARIABLE, "sk-test-never-in-a-file-1234")
    # its end tokens banned (the alias's logit_bias), every answer is 8 tokens: an empty one
    # is what this server sends for a prompt over its window (no error, no usage)
    box = alias(small_server.api_base, context_window=N_CTX)
    configure({"box": box}, default="box")
    # short answers keep the run short; the messages are what fills the window
    engine, session = engine_for(
        write_pack, {"chat": {"description": "Everyday chat.", "max_tokens": 8, "temperature": 0}}
    )
    failures: list[tuple[int, TurnFailed]] = []
    empty: list[int] = []
    compactions = 0
    largest = 0
    for number in range(1, TURNS + 1):
        text = f"Message {number}. " + SENTENCE * 5  # ~330 characters
        events = [event async for event in engine.run_turn(text)]
        if isinstance(events[-1], TurnFailed):
            failures.append((number, events[-1]))
        else:
            assert isinstance(events[-1], TurnFinished), events[-1]
            if not events[-1].message.content.strip():
                empty.append(number)
        compactions += sum(isinstance(event, ConversationCompacted) for event in events)
        for event in events:
            if isinstance(event, RequestBuilt) and event.context is not None:
                largest = max(largest, event.context.tokens)
                assert event.context.fits, event.context
    session.close()

    assert failures == [], failures[:3]
    assert empty == []
    assert compactions >= 3, compactions
    assert largest <= N_CTX - 8
    records = [json.loads(line) for line in session.path.read_text("utf-8").splitlines()]
    summaries = [r for r in records if r["type"] == "summary"]
    assert len(summaries) == compactions
    assert all(r["summary"].strip() for r in summaries)
    assert summaries[-1]["turns"] >= TURNS // 2
    answers = [r for r in records if r["type"] == "assistant" and not r.get("partial")]
    assert all(r["usage"] and r["usage"]["prompt_tokens"] > 0 for r in answers)
    requests = [r for r in records if r["type"] == "request"]
    assert all(r["context"]["window"] == N_CTX for r in requests)
    assert sum(r["type"] == "user" for r in records) == TURNS

    # a resumed session gives the model the last summary, not the turns it stands for
    resumed = prepare_resume(session.path, app_dirs())
    assert resumed.conversation.compaction is not None
    assert resumed.conversation.compaction.summary == summaries[-1]["summary"]
    assert resumed.conversation.compaction.upto == summaries[-1]["upto"]
