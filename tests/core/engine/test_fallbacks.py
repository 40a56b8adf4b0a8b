"""fallback_models: tried in order on retryable provider errors, through litellm (fake provider).

The same behaviour against a real server that is down is in tests/test_real_server.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.config.models import ModelCatalog, parse_models
from modes_tui.core.engine.engine import Engine
from modes_tui.core.history.events import (
    RequestBuilt,
    TextDelta,
    TurnEvent,
    TurnFailed,
    TurnFinished,
)
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.llm.litellm_import import import_litellm
from modes_tui.llm.litellm_model import LiteLLMChatModel
from tests.core.engine.test_engine import Recorder
from tests.support.engine_support import with_config
from tests.support.fake_provider import FakeProvider, Reply


def errors() -> dict[str, BaseException]:
    litellm = import_litellm(offline=True)
    args = {"model": "fake/plain", "llm_provider": "fake"}
    return {
        "connection": litellm.APIConnectionError(message="connection refused", **args),
        "rate_limit": litellm.RateLimitError(message="slow down", **args),
        "timeout": litellm.Timeout(message="took 30s", **args),
        "auth": litellm.AuthenticationError(message="invalid api key", **args),
        "bad_request": litellm.BadRequestError(message="no such parameter", **args),
    }


def engine_with(write_pack: Any, chat: dict[str, Any], **kwargs: Any) -> tuple[Engine, Recorder]:
    folder = write_pack(
        router={"classifier": "keyword", "fallback": "chat"},
        modes={"chat": {"description": "Chat.", **chat}},
    )
    pack = load_pack(profiles_dir=folder)
    models = parse_models(
        {"main": "fake/plain", "backup": "fake/thinker", "last": "fake/plain"}, where="config"
    )
    session = Recorder()
    engine = Engine(
        **with_config(
            pack=pack,
            router=Router(pack, KeywordClassifier()),
            model=LiteLLMChatModel(offline=True, models=ModelCatalog(models)),
            default_model="main",
            session=session,
            cwd=Path.cwd(),
            **kwargs,
        )
    )
    return engine, session


async def run(engine: Engine, text: str = "hi") -> list[TurnEvent]:
    return [event async for event in engine.run_turn(text)]


@pytest.mark.parametrize("kind", ["connection", "rate_limit", "timeout"])
async def test_a_retryable_failure_hands_the_turn_to_the_next_model(
    write_pack: Any, fake_llm: FakeProvider, kind: str
) -> None:
    fake_llm.script(Reply(error=errors()[kind]), Reply(text=["from ", "backup"]))
    engine, session = engine_with(write_pack, {"fallback_models": ["backup", "last"]})
    events = await run(engine)

    finished = events[-1]
    assert isinstance(finished, TurnFinished), events[-1]
    assert finished.message.content == "from backup"
    assert finished.message.model == "backup"  # the session and the chat say who answered
    assert [seen.model for seen in fake_llm.seen] == ["plain", "thinker"]
    built = [e for e in events if isinstance(e, RequestBuilt)]
    assert [b.request.model for b in built] == ["main", "backup"]
    note = built[1].notes[-1]
    assert note.startswith(f"answered by backup: main failed ({kind.replace('_', ' ')}: ")
    requests = session.of("request")
    assert requests[1]["fallback"]["from"] == "main" and requests[1]["fallback"]["kind"] == kind
    assert note in requests[1]["notes"]
    assert session.of("assistant")[-1]["message"]["model"] == "backup"


async def test_fallbacks_are_tried_in_order_and_the_last_error_is_reported(
    write_pack: Any, fake_llm: FakeProvider
) -> None:
    fake_llm.script(
        Reply(error=errors()["connection"]),
        Reply(error=errors()["rate_limit"]),
        Reply(error=errors()["timeout"]),
    )
    engine, _ = engine_with(write_pack, {"fallback_models": ["backup", "last"]})
    events = await run(engine)
    failed = events[-1]
    assert isinstance(failed, TurnFailed) and failed.kind == "timeout" and failed.retryable
    assert "(last)" in failed.error
    assert [b.request.model for b in events if isinstance(b, RequestBuilt)] == [
        "main",
        "backup",
        "last",
    ]
    notes = [built.notes[-1] for built in [e for e in events if isinstance(e, RequestBuilt)][1:]]
    assert notes[0].startswith("answered by backup: main failed (connection")
    assert notes[1].startswith("answered by last: backup failed (rate limit")
    assert [m.role for m in engine.conversation] == ["user"]  # the message is kept for retry


@pytest.mark.parametrize("kind", ["auth", "bad_request"])
async def test_a_failure_that_another_model_would_not_fix_is_not_retried(
    write_pack: Any, fake_llm: FakeProvider, kind: str
) -> None:
    fake_llm.script(Reply(error=errors()[kind]), Reply(text="never"))
    engine, _ = engine_with(write_pack, {"fallback_models": ["backup"]})
    events = await run(engine)
    assert isinstance(events[-1], TurnFailed) and events[-1].kind == kind
    assert len(fake_llm.seen) == 1


async def test_a_failure_after_text_arrived_keeps_that_text_instead_of_switching(
    write_pack: Any, fake_llm: FakeProvider
) -> None:
    fake_llm.script(
        Reply(text=["half ", "an answer"], error=errors()["connection"], error_after=1),
        Reply(text="never"),
    )
    engine, _ = engine_with(write_pack, {"fallback_models": ["backup"]})
    events = await run(engine)
    failed = events[-1]
    assert isinstance(failed, TurnFailed) and failed.retryable and failed.partial == "half "
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "half "
    assert len(fake_llm.seen) == 1
    assert engine.conversation.messages[-1].content == "half "


async def test_model_override_pins_one_model_without_fallbacks(
    write_pack: Any, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(error=errors()["connection"]), Reply(text="never"))
    engine, _ = engine_with(write_pack, {"fallback_models": ["backup"]}, model_override="main")
    events = await run(engine)
    assert isinstance(events[-1], TurnFailed)
    assert len(fake_llm.seen) == 1


async def test_the_fallback_is_asked_for_its_own_capabilities(
    write_pack: Any, fake_llm: FakeProvider
) -> None:
    """backup (fake/thinker) supports reasoning, main (fake/plain) does not."""
    fake_llm.script(Reply(error=errors()["connection"]), Reply(text="ok"))
    engine, _ = engine_with(write_pack, {"thinking": "high", "fallback_models": ["backup"]})
    events = await run(engine)
    built = [e for e in events if isinstance(e, RequestBuilt)]
    assert built[0].request.reasoning_effort is None and "thinking n/a for main" in built[0].notes
    assert built[1].request.reasoning_effort == "high"
    assert json.dumps(built[1].request.to_dict())  # still plain data for the session


def test_fallback_models_must_be_a_list_of_names(write_pack: Any) -> None:
    from modes_tui.core.errors import DeclarationError

    folder = write_pack(modes={"chat": {"description": "Chat.", "fallback_models": "backup"}})
    with pytest.raises(DeclarationError, match=r"chat.yaml: fallback_models: must be a list"):
        load_pack(profiles_dir=folder)
