"""What the engine records replays as the turn the user saw (main's SessionLog + replay)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.engine.config import EngineConfig
from modes_tui.core.engine.engine import Engine
from modes_tui.core.engine.guards import Limits
from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import (
    TextDelta,
    TurnCancelled,
    TurnEvent,
    TurnFailed,
    TurnFinished,
)
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.llm.litellm_import import import_litellm
from modes_tui.llm.litellm_model import LiteLLMChatModel
from modes_tui.store.replay import replay
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import load_session
from tests.support.fake_provider import FakeProvider, Reply

MODES = {
    "chat": {"description": "Chat.", "keywords": ["hello"]},
    "code": {"description": "Code.", "keywords": ["python"], "tools": ["read_file", "list_files"]},
}


@pytest.fixture
def pack(write_pack: Callable[..., Path]) -> Pack:
    return load_pack(profiles_dir=write_pack(modes=MODES))


def shape(message: Message) -> dict[str, Any]:
    data = message.to_dict()
    data.pop("cancelled", None)  # a cancel mid-tool marks the stored message in memory only
    return data


def ending(event: TurnEvent) -> tuple[Any, ...]:
    if isinstance(event, TurnFinished):
        return ("finished", event.message.content, event.message.mode, event.message.model)
    if isinstance(event, TurnFailed):
        return ("failed", event.error, event.kind, event.hint, event.partial, event.retryable)
    assert isinstance(event, TurnCancelled)
    return ("cancelled", event.partial)


async def test_live_turns_and_their_replay_agree(
    pack: Pack, tmp_path: Path, fake_llm: FakeProvider
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    litellm = import_litellm(offline=True)
    fake_llm.script(
        Reply(text="Looking.", tool_calls=[("read_file", {"path": "a.txt"}), ("list_files", {})]),
        Reply(text="It says alpha."),
        Reply(text=["cut ", "short ", "here"]),
        Reply(
            text=["half ", "never"],
            error=litellm.RateLimitError(message="slow down", model="x", llm_provider="fake"),
            error_after=1,
        ),
        Reply(text="", tool_calls=[("list_files", {})]),
        Reply(text="", tool_calls=[("read_file", {"path": "a.txt"})]),
    )
    log = SessionLog.create(app_dirs(), pack=pack.name, model="fake/plain")
    engine = Engine(
        config=EngineConfig(
            default_model="fake/plain", cwd=tmp_path, limits=Limits(model_rounds=2)
        ),
        pack=pack,
        router=Router(pack, KeywordClassifier()),
        model=LiteLLMChatModel(offline=True),
        session=log,
    )
    endings = []
    events = [event async for event in engine.run_turn("a python question")]
    endings.append(ending(events[-1]))
    async for event in engine.run_turn("hello"):
        if isinstance(event, TextDelta):
            engine.cancel()
        last = event
    endings.append(ending(last))
    events = [event async for event in engine.run_turn("hello again")]
    endings.append(ending(events[-1]))
    events = [event async for event in engine.run_turn("python loop")]
    endings.append(ending(events[-1]))
    log.close()

    assert [e[0] for e in endings] == ["finished", "cancelled", "failed", "failed"]
    replayed = replay(load_session(log.path))
    assert not replayed.problems
    assert [ending(turn.events[-1]) for turn in replayed.turns] == endings
    assert [shape(m) for m in replayed.conversation] == [shape(m) for m in engine.conversation]
    json.dumps([event.to_dict() for event in replayed.events()])
