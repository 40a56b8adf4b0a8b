"""`modes_tui.runtime.Runtime`: one wiring, from the settings and the options, for every run."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import yaml

from modes_tui.core.config.models import EMBEDDED_MODEL
from modes_tui.core.errors import ModesError, SettingsError
from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import TurnFinished
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.llm.fake import ScriptedModel
from modes_tui.runtime import RunOptions, Runtime, offline_for
from modes_tui.store.session_reader import load_session
from modes_tui.store.sessions import list_sessions

REPO = Path(__file__).resolve().parents[2]


def write_settings(**values: Any) -> None:
    dirs = app_dirs()
    dirs.settings_file.parent.mkdir(parents=True, exist_ok=True)
    dirs.settings_file.write_text(yaml.safe_dump(values), encoding="utf-8")


async def test_a_chat_runtime_follows_the_options_and_records_the_turns(tmp_path: Path) -> None:
    options = RunOptions(pack="support", model="scripted/echo", classifier="keyword")
    runtime = Runtime.for_chat(options)
    try:
        assert runtime.pack.name == "support"
        assert runtime.model_id == "scripted/echo"
        assert isinstance(runtime.model, ScriptedModel)  # answers offline, no litellm
        assert runtime.control is not None and runtime.control.read().mode == "auto"
        engine = runtime.engine()
        events = [event async for event in engine.run_turn("where is my order NW-10234")]
    finally:
        assert runtime.current is not None
        runtime.current.close()
    finished = events[-1]
    assert isinstance(finished, TurnFinished)
    assert finished.message.mode == "orders"  # the keyword classifier asked for
    [summary] = list_sessions(runtime.dirs)
    session = load_session(summary.path)
    assert session.pack == "support"
    assert session.meta["model"] == "scripted/echo"
    users = [r["content"] for r in session.records if r["type"] == "user"]
    assert users == ["where is my order NW-10234"]


def test_the_options_win_over_the_settings_which_win_over_the_pack() -> None:
    write_settings(router_classifier="keyword", default_model="openai/gpt-4.1-mini")
    runtime = Runtime.load()
    assert runtime.classifier_name == "keyword"
    assert runtime.model_id == "openai/gpt-4.1-mini"
    assert runtime.classifier_services().default_model == "openai/gpt-4.1-mini"
    chosen = Runtime.load(RunOptions(classifier="embedding", model="scripted/echo"))
    assert chosen.classifier_name == "embedding"
    assert chosen.model_id == "scripted/echo"
    write_settings()
    assert Runtime.load().classifier_name is None  # the pack's own, from router.yaml
    assert Runtime.load().model_id == EMBEDDED_MODEL


async def test_a_verb_routes_with_the_classifier_in_force() -> None:
    write_settings(router_classifier="keyword")
    route = await Runtime.load().router().route([Message("user", "my build has a segfault")])
    assert route.mode_name == "code"
    assert route.classifier is not None and route.classifier.with_ == "keyword"


def test_the_repl_and_the_app_count_fallback_models_as_in_use(write_pack: Any) -> None:
    # before the runtime, the app ignored fallback models and called itself offline
    remote_fallback = write_pack(
        modes={"chat": {"description": "Chat.", "fallback_models": ["openai/gpt-4.1-mini"]}}
    )
    local_only = write_pack(modes={"chat": {"description": "Chat."}}, name="local")
    runtime = Runtime.load(RunOptions(profiles=str(remote_fallback)))
    assert runtime.offline is False
    assert Runtime.load(RunOptions(profiles=str(local_only))).offline is True
    pack = load_pack(profiles_dir=remote_fallback)
    # --model replaces every mode's model, fallbacks included
    assert offline_for(pack, runtime.catalog, EMBEDDED_MODEL) is True
    assert offline_for(pack, runtime.catalog, "anthropic/claude-x") is False


def test_a_mistyped_model_fails_when_the_engine_is_built_naming_where(write_pack: Any) -> None:
    write_settings(models={"fast": {"model": "openai/gpt-4.1-mini"}})
    folder = write_pack(modes={"chat": {"description": "Chat.", "model": "fsat"}})
    runtime = Runtime.load(RunOptions(profiles=str(folder)))
    with pytest.raises(SettingsError, match=r"chat\.yaml: model: 'fsat' .* did you mean 'fast'"):
        runtime.engine()


def test_a_wrong_resume_id_fails_before_anything_is_written() -> None:
    with pytest.raises(ModesError, match="nope"):
        Runtime.for_chat(RunOptions(resume="nope"))
    dirs = app_dirs()
    assert not dirs.control_file.exists()
    assert list_sessions(dirs) == []


def test_the_terminal_ui_needs_a_control_file() -> None:
    with pytest.raises(ValueError, match="control file"):
        Runtime.load().app_services(lambda confirm: None)  # type: ignore[arg-type, return-value]


def test_the_app_services_come_from_the_settings() -> None:
    write_settings(theme="nord", keymap={"auto": "f12"})
    runtime = Runtime.for_chat(RunOptions(model="scripted/echo"))
    try:
        services = runtime.tui_services()
        assert services.pack is runtime.pack and services.model == "scripted/echo"
        assert services.theme == "nord" and services.keymap == {"auto": "f12"}
        assert services.current is runtime.current
        assert services.preload is None  # a scripted model has nothing to warm
    finally:
        assert runtime.current is not None
        runtime.current.close()


def _spelled_out(path: Path) -> list[int]:
    """Lines where the embedded model id is a string of its own (docstrings and sentences
    that mention it do not count: they are words for people)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value == EMBEDDED_MODEL
    ]


def test_the_embedded_model_id_is_written_once() -> None:
    files = [
        path
        for folder in ("modes_tui", "bench", "scripts")
        for path in sorted((REPO / folder).rglob("*.py"))
    ]
    found = {str(path.relative_to(REPO)): lines for path in files if (lines := _spelled_out(path))}
    assert list(found) == ["modes_tui/core/config/models.py"]
    assert len(found["modes_tui/core/config/models.py"]) == 1
