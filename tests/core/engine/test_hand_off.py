"""Hand-off (issue 23): a mode's model calls `switch_mode(mode, reason)`, the rest of the
turn is answered in that mode (a route `decided_by: model` with the model's reason), once
per turn and only to modes the profile's `hand_off:` allows; accepting it records a
correction the router learns from. With the scripted model and a scripted OpenAI-compatible
server on 127.0.0.1 (the real small model does not call tools reliably)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.config.models import ModelCatalog, ModelConfig
from modes_tui.core.engine.engine import Engine
from modes_tui.core.errors import DeclarationError
from modes_tui.core.history.events import (
    ModeChanged,
    RequestBuilt,
    RouteDecided,
    ToolCallFinished,
    TurnCorrected,
    TurnEvent,
    TurnFinished,
)
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.corrections import MemoryCorrections
from modes_tui.core.routing.router import Router
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.route_format import marks
from modes_tui.store.replay import replay
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import load_session
from tests.conftest import PackWriter
from tests.support.engine_support import with_config
from tests.support.fake_openai_server import ServerReply, scripted_openai_server

HAND = ("switch_mode", {"mode": "code", "reason": "this needs a change to calc.py"})


def a_pack(write_pack: PackWriter, **chat: Any) -> Pack:
    modes = {
        "chat": {
            "description": "Everyday chat.",
            "keywords": ["hello"],
            "tools": ["switch_mode"],
            "hand_off": ["code"],
            **chat,
        },
        "code": {"description": "Code.", "keywords": ["function"], "tools": ["read_file"]},
        "shell": {"description": "Shell.", "keywords": ["terminal"]},
    }
    return load_pack(profiles_dir=write_pack(modes=modes))


def an_engine(pack: Pack, root: Path, model: Any, **kwargs: Any) -> Engine:
    return Engine(
        **with_config(
            pack=pack,
            router=Router(pack, KeywordClassifier()),
            model=model,
            default_model="scripted/plain",
            cwd=root,
            **kwargs,
        )
    )


async def play(events: Any) -> list[TurnEvent]:
    return [event async for event in events]


async def test_the_model_hands_the_rest_of_the_turn_to_another_mode(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    log = SessionLog.create(app_dirs(), pack="testpack", model="scripted/plain")
    model = ScriptedModel().script(
        ScriptedReply("", tool_calls=[HAND]), ScriptedReply("In code mode: fixed.")
    )
    engine = an_engine(a_pack(write_pack), tmp_path, model, session=log)
    events = await play(engine.run_turn("hello, can you fix my calc.py"))
    log.close()

    routes = [event.route for event in events if isinstance(event, RouteDecided)]
    assert [(r.mode_name, r.decided_by) for r in routes] == [
        ("chat", "classifier"),
        ("code", "model"),
    ]
    assert routes[1].reason == "this needs a change to calc.py"
    assert "hand-off" in marks(routes[1])
    changes = [(e.previous, e.current) for e in events if isinstance(e, ModeChanged)]
    assert changes == [(None, "chat"), ("chat", "code")]
    requests = [event for event in events if isinstance(event, RequestBuilt)]
    assert [r.mode for r in requests] == ["chat", "code"]
    assert [t.name for t in requests[1].request.tools] == ["read_file"]  # code's tools
    assert isinstance(events[-1], TurnFinished) and events[-1].message.mode == "code"
    assert engine.mode == "code" and [r.mode_name for r in engine.routes] == ["chat", "code"]

    session = load_session(log.id, app_dirs())
    recorded = [r["route"] for r in session.records if r["type"] == "route"]
    assert [(r["mode_name"], r["decided_by"]) for r in recorded] == [
        ("chat", "classifier"),
        ("code", "model"),
    ]
    replayed = list(replay(session).turns[0].events)
    assert [(e.previous, e.current) for e in replayed if isinstance(e, ModeChanged)] == [
        (None, "chat"),
        ("chat", "code"),
    ]


async def test_accepting_a_hand_off_records_a_correction_without_answering_again(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    store = MemoryCorrections()
    model = ScriptedModel().script(
        ScriptedReply("", tool_calls=[HAND]), ScriptedReply("In code mode: fixed.")
    )
    engine = an_engine(a_pack(write_pack), tmp_path, model, corrections=store)
    await play(engine.run_turn("hello, can you fix my calc.py"))
    events = await play(engine.correct("code", rerun=False))

    [corrected] = events
    assert isinstance(corrected, TurnCorrected) and not corrected.rerun
    assert (corrected.answered_mode, corrected.corrected_mode) == ("chat", "code")
    [kept] = store.corrections()
    assert (kept.routed_mode, kept.corrected_mode, kept.text) == (
        "chat",
        "code",
        "hello, can you fix my calc.py",
    )
    assert model.requests and len(model.requests) == 2  # nothing was answered again
    assert engine.conversation.messages[-1].content == "In code mode: fixed."


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        ([("switch_mode", {"mode": "shell", "reason": "r"})], "may hand over only to code"),
        ([("switch_mode", {"mode": "nope", "reason": "r"})], "there is no mode 'nope'"),
        ([("switch_mode", {"mode": "chat", "reason": "r"})], "already in 'chat'"),
        ([HAND, HAND], "already handed over once"),
    ],
)
async def test_a_hand_off_the_policy_does_not_allow_is_refused(
    tmp_path: Path, write_pack: PackWriter, calls: list[Any], expected: str
) -> None:
    model = ScriptedModel().script(ScriptedReply("", tool_calls=calls), ScriptedReply("ok"))
    engine = an_engine(a_pack(write_pack), tmp_path, model)
    events = await play(engine.run_turn("hello there"))
    finished = [event for event in events if isinstance(event, ToolCallFinished)]
    assert finished[-1].outcome == "blocked" and expected in finished[-1].result
    routes = [event.route for event in events if isinstance(event, RouteDecided)]
    assert [r.decided_by for r in routes].count("model") == (1 if len(calls) == 2 else 0)


def test_hand_off_names_that_are_no_mode_are_named_with_file_and_key(
    write_pack: PackWriter,
) -> None:
    with pytest.raises(DeclarationError) as caught:
        a_pack(write_pack, hand_off=["code", "cod", "chat"])
    found = [str(problem) for problem in caught.value.problems]
    assert any(p.startswith("testpack/chat.yaml: hand_off[1]: 'cod' is not a mode") for p in found)
    assert any(p.startswith("testpack/chat.yaml: hand_off[2]: 'chat' is this mode") for p in found)


async def test_a_served_model_hands_over_through_litellm(
    tmp_path: Path, write_pack: PackWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modes_tui.llm.litellm_model import LiteLLMChatModel

    replies = [ServerReply("", tool_calls=(HAND,)), ServerReply("Code mode here.")]
    with scripted_openai_server(replies) as server:
        monkeypatch.setenv("FAKE_SERVER_KEY", "sk-test")
        served = ModelConfig(
            model="openai/scripted",
            alias="served",
            api_base=server.url,
            api_key_env="FAKE_SERVER_KEY",
            tools=True,
        )
        model = LiteLLMChatModel(timeout=30, models=ModelCatalog({"served": served}))
        engine = an_engine(a_pack(write_pack), tmp_path, model, model_override="served")
        events = await play(engine.run_turn("hello, fix my function please"))
    routes = [event.route for event in events if isinstance(event, RouteDecided)]
    assert [(r.mode_name, r.decided_by) for r in routes] == [
        ("chat", "classifier"),
        ("code", "model"),
    ]
    assert [t["function"]["name"] for t in server.bodies[0]["tools"]] == ["switch_mode"]
    assert [t["function"]["name"] for t in server.bodies[1]["tools"]] == ["read_file"]
    assert isinstance(events[-1], TurnFinished) and events[-1].message.content == "Code mode here."


async def test_in_the_app_the_panel_shows_the_hand_off_and_ctrl_n_keeps_it(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    from datetime import UTC

    from modes_tui.store.corrections import CorrectionStore
    from modes_tui.tui.app import build_app
    from tests.support.tui_support import all_text, real_app, started, until

    pack = a_pack(write_pack)
    rig = real_app(pack, tmp_path)
    rig.model.script(ScriptedReply("", tool_calls=[HAND]), ScriptedReply("Code here: fixed."))
    store = CorrectionStore.for_pack(app_dirs().data, pack.name)
    try:
        async with build_app(rig.services, tz=UTC).run_test(size=(140, 40)) as pilot:
            app = await started(pilot)
            app.conversation.prompt.value = "hello, can you fix my calc.py"
            await pilot.press("enter")
            await until(pilot, lambda: "Code here: fixed." in all_text(app.query("AnswerSegment")))
            options = app.conversation.panel.options
            cards = [
                str(options.get_option_at_index(i).prompt) for i in range(options.option_count)
            ]
            assert any("by model" in card and "hand-off" in card for card in cards), cards
            assert any("this needs a change to calc.py" in card for card in cards), cards
            assert store.corrections() == ()
            await pilot.press("ctrl+n")
            await until(pilot, lambda: len(store.corrections()) == 1)
            [kept] = store.corrections()
            assert (kept.routed_mode, kept.corrected_mode) == ("chat", "code")
            assert len(rig.model.requests) == 2  # kept, not answered again
    finally:
        rig.log.close()
