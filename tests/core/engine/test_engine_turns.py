"""A turn as an object with phases: what a user notices of its kinds and of its settings.

The kinds (new, edit, retry, correction re-run) are covered turn by turn in test_engine*.py;
here: what a retry leaves of the attempt it replaces, a settings change that lands while a
turn runs, clear errors for a muddled construction, and the package's contract that no
module reaches into another's private members.
"""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.engine.config import EngineConfig
from modes_tui.core.engine.engine import Engine
from modes_tui.core.engine.guards import Limits
from modes_tui.core.history.events import (
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    TurnCancelled,
    TurnEvent,
    TurnFinished,
)
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.runtime import build_engine

ENGINE_PACKAGE = Path(__file__).resolve().parents[3] / "modes_tui" / "core" / "engine"


class Log:
    """A session writer that keeps (type, turn, fields) in order."""

    def __init__(self) -> None:
        self.records: list[tuple[str, int, dict[str, Any]]] = []

    def record(self, type: str, turn: int, **fields: Any) -> None:
        json.dumps(fields)  # plain data only, as a real log needs
        self.records.append((type, turn, fields))


@pytest.fixture
def pack() -> Pack:
    return load_pack("default")


def engine_for(pack: Pack, model: ScriptedModel, tmp_path: Path, **kwargs: Any) -> Engine:
    return Engine(
        pack=pack,
        router=Router(pack, KeywordClassifier()),
        model=model,
        config=EngineConfig(default_model="scripted/plain", cwd=tmp_path),
        **kwargs,
    )


async def test_a_retry_after_cancel_keeps_the_cut_answer_in_the_log_but_not_in_the_history(
    pack: Pack, tmp_path: Path
) -> None:
    model = ScriptedModel().script(
        ScriptedReply("the first try " * 40, chunk_size=7, delay=0.005),
        ScriptedReply("the second try"),
    )
    log = Log()
    engine = engine_for(pack, model, tmp_path, session=log)
    async for event in engine.run_turn("tell me a story"):
        if isinstance(event, TextDelta):
            engine.cancel()
    retried = [event async for event in engine.retry()]

    assert isinstance(retried[-1], TurnFinished)
    # the history the next model sees holds the retried answer only
    assert [(m.role, m.content) for m in engine.conversation] == [
        ("user", "tell me a story"),
        ("assistant", "the second try"),
    ]
    assert "the first try" not in json.dumps(model.requests[-1].messages)
    # the log keeps the cut answer, then says a retry followed
    events = [(kind, fields.get("event")) for kind, _, fields in log.records]
    cut = events.index(("ui_event", "cancel"))
    assert events[cut - 1] == ("assistant", None)
    assert log.records[cut - 1][2]["message"]["content"] == "the fir"
    assert log.records[cut - 1][2]["message"]["cancelled"] is True
    assert log.records[cut][2]["partial"] == "the fir"
    assert events[cut + 1] == ("ui_event", "retry")
    assert [turn for kind, turn, _ in log.records if kind == "user"] == [1]


async def test_settings_replaced_while_a_turn_runs_apply_from_the_next_turn(
    pack: Pack, tmp_path: Path
) -> None:
    model = ScriptedModel().script(
        ScriptedReply(tool_calls=[("list_files", {"path": "."})]),
        ScriptedReply("found them"),
        ScriptedReply(tool_calls=[("list_files", {"path": "."})]),
        ScriptedReply("never asked"),
    )
    engine = engine_for(pack, model, tmp_path)
    first: list[TurnEvent] = []
    async for event in engine.run_turn("list the python files", force="code"):
        first.append(event)
        if isinstance(event, ToolCallRequested):  # one model call per turn from now on
            engine.config = replace(engine.config, limits=Limits(model_rounds=1))
    finished = [e for e in first if isinstance(e, ToolCallFinished)]
    assert [e.outcome for e in finished] == ["ok"]  # the running turn kept its 10 rounds
    assert isinstance(first[-1], TurnFinished)

    second = [event async for event in engine.run_turn("list them again", force="code")]
    (blocked,) = [e for e in second if isinstance(e, ToolCallFinished)]
    assert blocked.outcome == "blocked" and "limit of 1 model calls" in blocked.result
    assert not isinstance(second[-1], (TurnFinished, TurnCancelled))


def test_the_engine_takes_its_settings_only_as_one_config(pack: Pack) -> None:
    with pytest.raises(TypeError, match="default_model"):
        Engine(  # type: ignore[call-arg]
            pack=pack,
            router=Router(pack, KeywordClassifier()),
            model=ScriptedModel(),
            config=EngineConfig(default_model="scripted/plain"),
            default_model="scripted/other",
        )
    with pytest.raises(TypeError, match="config"):
        build_engine(pack=pack, classifier="keyword")  # type: ignore[call-arg]


def test_the_config_built_for_an_engine_is_the_one_it_answers_with(
    pack: Pack, tmp_path: Path
) -> None:
    config = EngineConfig(
        default_model="scripted/plain",
        model_override="scripted/pinned",
        cwd=tmp_path,
        limits=Limits(model_rounds=3),
        budget=0.5,
    )
    engine = build_engine(config, pack=pack, classifier="keyword", model=ScriptedModel())
    assert engine.config == EngineConfig(
        default_model="scripted/plain",
        model_override="scripted/pinned",
        cwd=tmp_path,
        limits=Limits(model_rounds=3),
        budget=0.5,
    )
    assert engine.costs.ledger.budget == 0.5


def private_reaches(source: str) -> list[str]:
    """`other._name` in `source`: a private member reached through anything but self/cls."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        if node.attr.startswith("__"):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        found.append(f"line {node.lineno}: .{node.attr}")
    return found


def test_no_engine_module_reaches_into_another_objects_private_members() -> None:
    reaches = {
        path.name: private_reaches(path.read_text(encoding="utf-8"))
        for path in sorted(ENGINE_PACKAGE.glob("*.py"))
    }
    assert {name: found for name, found in reaches.items() if found} == {}
    assert private_reaches("engine._record(x)\nself._ok()\n") == ["line 1: ._record"]
