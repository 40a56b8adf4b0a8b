"""Turns against a real OpenAI-compatible server: llama_cpp.server with the embedded GGUF.

The model is configured the way a user configures any server, as an alias in config.yaml
(`openai/<name>` with `api_base`), and every call goes through litellm's OpenAI client over
HTTP: streaming, cancelling, the server killed mid-answer, and a fallback when it is down.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from modes_tui.core.engine.engine import Engine
from modes_tui.core.history.events import (
    RequestBuilt,
    TextDelta,
    TurnCancelled,
    TurnEvent,
    TurnFailed,
    TurnFinished,
    Usage,
)
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.runtime import build_engine
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import load_session
from modes_tui.store.settings import load_settings
from tests.support.engine_support import engine_config
from tests.support.llama_server import END_OF_GENERATION, SERVED_NAME, LlamaServer, start_server

pytestmark = pytest.mark.local

KEY_VARIABLE = "MODES_TUI_TEST_SERVER_KEY"
KEY = "sk-test-never-in-a-file-1234"
# Gemma's end tokens are banned, so every answer runs to max_tokens: long enough to cancel
# or kill mid-stream on a slow, shared machine.
NO_END = END_OF_GENERATION


@pytest.fixture(scope="module")
def gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("llama_cpp")
    for module in ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
        pytest.importorskip(module, reason="llama-cpp-python[server] (the local extra)")
    from modes_tui.llm import gguf

    pytest.importorskip(gguf.GGUF_MODULE)
    return gguf.ensure_model_file(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def server(gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """One server for the module; killed at teardown."""
    running = start_server(gguf, tmp_path_factory.mktemp("logs"))
    yield running
    running.stop()


def configure(models: dict[str, Any], default: str) -> None:
    """Write config.yaml into this test's MODES_TUI_HOME."""
    path = app_dirs().settings_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"default_model": default, "models": models}), "utf-8")


def alias(api_base: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": f"openai/{SERVED_NAME}",
        "api_base": api_base,
        "api_key_env": KEY_VARIABLE,
        "tools": False,
        "reasoning": False,
        "context_window": 2048,
        "input_cost_per_token": 0.000001,
        "output_cost_per_token": 0.000002,
        "params": {"logit_bias": NO_END},
        **extra,
    }


def engine_for(write_pack: Any, modes: dict[str, Any] | None = None) -> tuple[Engine, SessionLog]:
    settings = load_settings(app_dirs())
    folder = write_pack(
        router={"classifier": "keyword", "fallback": "chat"},
        modes=modes
        or {"chat": {"description": "Everyday chat.", "max_tokens": 40, "temperature": 0}},
    )
    pack = load_pack(profiles_dir=folder)
    session = SessionLog.create(app_dirs(), pack=pack.name, model=settings.default_model)
    engine = build_engine(
        engine_config(
            default_model=settings.default_model, models=settings.catalog(), budget=settings.budget
        ),
        pack=pack,
        session=session,
        dirs=app_dirs(),
    )
    return engine, session


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    return KEY


async def collect(engine: Engine, text: str) -> list[TurnEvent]:
    return [event async for event in engine.run_turn(text)]


async def test_a_turn_streams_through_the_configured_alias(
    server: LlamaServer, write_pack: Any, key: str
) -> None:
    configure({"box": alias(server.api_base)}, default="box")
    engine, session = engine_for(write_pack)
    events = await collect(engine, "Tell me about the sea.")
    session.close()

    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 5, events  # streamed in pieces, not one block at the end
    finished = events[-1]
    assert isinstance(finished, TurnFinished), events[-1]
    assert finished.message.model == "box"
    assert finished.message.content == "".join(d.text for d in deltas)
    usage = next(e for e in events if isinstance(e, Usage))
    assert usage.prompt_tokens > 0 and 30 <= usage.completion_tokens <= 40  # capped at 40
    # the configured price, not litellm's: 1e-6 per prompt token, 2e-6 per completion token
    assert usage.cost == pytest.approx(usage.prompt_tokens * 1e-6 + usage.completion_tokens * 2e-6)
    assert engine.costs.ledger.total == pytest.approx(usage.cost)

    text = session.path.read_text("utf-8")
    assert key not in text  # the key is read from the variable at call time, never stored
    records = [json.loads(line) for line in text.splitlines()]
    requests = [r for r in records if r["type"] == "request"]
    assert requests[0]["request"]["model"] == "box"


async def test_cancel_mid_stream_keeps_the_partial_answer(
    server: LlamaServer, write_pack: Any, key: str
) -> None:
    configure({"box": alias(server.api_base)}, default="box")
    # 64 tokens: still streaming when the third piece cancels it, and what the server goes on
    # generating after the cancel (and the next answer) stays short (400 took ~25 s)
    engine, session = engine_for(
        write_pack, {"chat": {"description": "Everyday chat.", "max_tokens": 64}}
    )
    events: list[TurnEvent] = []
    async for event in engine.run_turn("Write a long story about a lighthouse."):
        events.append(event)
        if sum(isinstance(e, TextDelta) for e in events) == 3:
            engine.cancel()
    cancelled = events[-1]
    assert isinstance(cancelled, TurnCancelled), events[-1]
    assert cancelled.partial
    stored = engine.conversation.messages[-1]
    assert stored.role == "assistant" and stored.cancelled
    assert stored.content == cancelled.partial
    # the server is fine and the conversation goes on
    engine_after = await collect(engine, "Thanks.")
    assert isinstance(engine_after[-1], TurnFinished), engine_after[-1]
    session.close()


async def test_a_server_killed_mid_stream_is_a_retryable_failure_and_nothing_is_lost(
    gguf: Path, write_pack: Any, key: str, tmp_path: Path
) -> None:
    doomed = start_server(gguf, tmp_path)  # its own server: this test kills it
    try:
        configure({"box": alias(doomed.api_base)}, default="box")
        engine, session = engine_for(
            write_pack, {"chat": {"description": "Everyday chat.", "max_tokens": 400}}
        )
        events: list[TurnEvent] = []
        async for event in engine.run_turn("Write a long story about a lighthouse."):
            events.append(event)
            if isinstance(event, TextDelta) and sum(isinstance(e, TextDelta) for e in events) == 3:
                await asyncio.to_thread(doomed.kill)
        session.close()
    finally:
        doomed.kill()

    failed = events[-1]
    assert isinstance(failed, TurnFailed), events[-1]
    assert failed.retryable, failed
    assert failed.kind in {"connection", "bad_stream"}, failed
    received = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert failed.partial == received and received
    user, answer = engine.conversation.messages[-2:]
    assert user.role == "user" and user.content == "Write a long story about a lighthouse."
    assert answer.role == "assistant" and answer.content == received
    loaded = load_session(session.path)
    kinds = [record["type"] for record in loaded.records]
    assert "user" in kinds
    last = [r for r in loaded.records if r["type"] == "assistant"][-1]
    assert last["message"]["content"] == received
    assert last["retryable"] is True


async def test_a_fallback_answers_when_the_first_server_is_down(
    server: LlamaServer, gguf: Path, write_pack: Any, key: str, tmp_path: Path
) -> None:
    gone = start_server(gguf, tmp_path)
    gone.kill()  # a real server that was there and died: connection refused now
    configure(
        {"primary": alias(gone.api_base), "backup": alias(server.api_base)}, default="primary"
    )
    engine, session = engine_for(
        write_pack,
        {
            "chat": {
                "description": "Everyday chat.",
                "max_tokens": 20,
                "fallback_models": ["backup"],
            }
        },
    )
    events = await collect(engine, "Hello there.")
    session.close()
    finished = events[-1]
    assert isinstance(finished, TurnFinished), events[-1]
    assert finished.message.model == "backup"
    requests = [e for e in events if isinstance(e, RequestBuilt)]
    assert [r.request.model for r in requests] == ["primary", "backup"]
    note = requests[-1].notes[-1]
    assert note.startswith("answered by backup: primary failed (connection")
    records = load_session(session.path).records
    sent = [r for r in records if r["type"] == "request"]
    assert sent[-1]["fallback"]["from"] == "primary"
    assert sent[-1]["fallback"]["kind"] == "connection"
    answer = [r for r in records if r["type"] == "assistant"][-1]
    assert answer["message"]["model"] == "backup"
