"""`runtime.build_engine`: the one engine factory (`Runtime.engine` calls it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from modes_tui.core.config.models import EMBEDDED_MODEL
from modes_tui.core.history.events import TurnFinished
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.tools.registry import BUILTIN_TOOL_NAMES
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.llm.litellm_model import LiteLLMChatModel
from modes_tui.runtime import build_engine
from tests.support.cli_support import run_python
from tests.support.engine_support import engine_config
from tests.support.fake_provider import FakeProvider, Reply


class Recorder:
    def __init__(self) -> None:
        self.types: list[str] = []

    def record(self, type: str, turn: int, **fields: Any) -> None:
        self.types.append(type)


async def test_a_built_engine_answers_through_litellm(
    tmp_path: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text=["Hi", "!"]))
    session = Recorder()
    engine = build_engine(
        engine_config(default_model="fake/plain", cwd=tmp_path),
        pack=load_pack("default"),
        classifier="keyword",
        session=session,
    )
    assert isinstance(engine.model, LiteLLMChatModel) and engine.model.offline
    assert engine.tools.names() == BUILTIN_TOOL_NAMES
    events = [event async for event in engine.run_turn("hello there")]
    finished = events[-1]
    assert isinstance(finished, TurnFinished) and finished.message.content == "Hi!"
    assert finished.message.mode == "chat" and finished.message.model == "fake/plain"
    assert session.types == ["user", "route", "request", "assistant"]


def test_the_default_model_is_the_embedded_one_and_offline(tmp_path: Path) -> None:
    engine = build_engine(
        engine_config(cwd=tmp_path), pack=load_pack("default"), classifier="keyword"
    )
    assert engine.default_model == EMBEDDED_MODEL == "local/gemma-3-270m"
    assert isinstance(engine.model, LiteLLMChatModel) and engine.model.offline
    remote = build_engine(
        engine_config(model_override="openai/gpt-4.1-mini"),
        pack=load_pack("default"),
        classifier="keyword",
    )
    assert isinstance(remote.model, LiteLLMChatModel) and not remote.model.offline


async def test_a_scripted_model_can_replace_litellm(tmp_path: Path) -> None:
    model = ScriptedModel().script(ScriptedReply("scripted"))
    engine = build_engine(
        engine_config(cwd=tmp_path), pack=load_pack("support"), classifier="keyword", model=model
    )
    events = [event async for event in engine.run_turn("where is my order NW-10234")]
    assert isinstance(events[-1], TurnFinished) and events[-1].message.content == "scripted"
    assert events[-1].message.mode == "orders"


def test_building_the_engine_loads_no_model_library(tmp_path: Path) -> None:
    heavy = ["textual", "prompt_toolkit", "litellm", "llama_cpp", "torch", "sentence_transformers"]
    code = (
        "import json, sys; from modes_tui.runtime import build_engine; "
        "from modes_tui.core.packs.profiles import load_pack; "
        "from modes_tui.core.engine.config import EngineConfig; "
        "build_engine(EngineConfig('local/gemma-3-270m'), pack=load_pack('default'), "
        "classifier='keyword'); "
        f"print(json.dumps([m for m in {heavy!r} if m in sys.modules]))"
    )
    out = run_python(code, env={"MODES_TUI_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert json.loads(out.strip().splitlines()[-1]) == []
