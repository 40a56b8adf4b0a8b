"""Modes that change files, end to end through the engine (issue 23): the scripted model
(`ScriptedModel`) and a model behind a local OpenAI-compatible server on 127.0.0.1
(`tests/fake_openai_server.py`, through litellm) call write_file and edit_file; the policy
guard asks with the diff, refuses denied paths without asking, and every write is
checkpointed in the session log, shown in replay and export, and undone by `undo`.

The fake server scripts its tool calls: the bundled gemma model served by a real
llama_cpp.server does not call tools reliably, so it cannot drive these flows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.config.models import ModelCatalog, ModelConfig
from modes_tui.core.edits import Change
from modes_tui.core.engine.engine import Engine
from modes_tui.core.history.events import ToolCallFinished, TurnEvent, TurnFinished
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.store.export import session_markdown
from modes_tui.store.replay import replay
from modes_tui.store.resume import prepare_resume
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import load_session
from tests.conftest import PackWriter
from tests.support.engine_support import with_config
from tests.support.fake_openai_server import ServerReply, scripted_openai_server

FAILING = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
FIX_CALL = ("edit_file", {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"})


def a_project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "calc.py").write_text(FAILING)
    (root / "test_calc.py").write_text(TEST)
    (root / ".env").write_text("API_TOKEN=hunter2\n")
    return root


def coding_pack(write_pack: PackWriter, **code: Any) -> Pack:
    modes: dict[str, Any] = {
        "chat": {"description": "Everyday chat.", "keywords": ["hello"]},
        "code": {
            "description": "Code.",
            "keywords": ["fix", "write", "env"],
            "tools": ["read_file", "write_file", "edit_file"],
            **code,
        },
    }
    return load_pack(profiles_dir=write_pack(modes=modes))


class Confirmer:
    """Answers every question with `answer`; keeps the diffs it was shown."""

    def __init__(self, answer: bool, meanwhile: Any = None) -> None:
        self.answer = answer
        self.meanwhile = meanwhile
        self.shown: list[Change | None] = []

    async def confirm(self, call: Any, tool: Any, preview: Change | None = None) -> bool:
        self.shown.append(preview)
        if self.meanwhile is not None:
            self.meanwhile()  # what happens on disk while the dialog is open
        return self.answer


def an_engine(pack: Pack, root: Path, model: Any, confirmer: Confirmer, **kwargs: Any) -> Engine:
    return Engine(
        **with_config(
            pack=pack,
            router=Router(pack, KeywordClassifier()),
            model=model,
            default_model="scripted/plain",
            cwd=root,
            confirm=confirmer,
            **kwargs,
        )
    )


def scripted(*calls: tuple[str, dict[str, Any]]) -> ScriptedModel:
    return ScriptedModel().script(
        ScriptedReply("On it.", tool_calls=list(calls)), ScriptedReply("Done.")
    )


async def play(engine: Engine, text: str) -> list[TurnEvent]:
    return [event async for event in engine.run_turn(text)]


def finished(events: list[TurnEvent]) -> list[ToolCallFinished]:
    return [event for event in events if isinstance(event, ToolCallFinished)]


# --------------------------------------------------------------------------- scripted model


async def test_a_failing_function_is_fixed_through_edit_file_with_the_diff_shown(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    root = a_project(tmp_path)
    log = SessionLog.create(app_dirs(), pack="testpack", model="scripted/plain")
    confirmer = Confirmer(True)
    engine = an_engine(coding_pack(write_pack), root, scripted(FIX_CALL), confirmer, session=log)
    events = await play(engine, "fix the failing test in calc.py")
    log.close()

    [preview] = confirmer.shown
    assert preview is not None and preview.summary == "change calc.py (+1 -1)"
    assert "-    return a - b\n+    return a + b" in preview.diff
    [done] = finished(events)
    assert done.outcome == "ok" and "+    return a + b" in done.result
    assert isinstance(events[-1], TurnFinished)
    assert (root / "calc.py").read_text() == FIXED
    namespace: dict[str, Any] = {}
    exec(compile((root / "calc.py").read_text(), "calc.py", "exec"), namespace)
    assert namespace["add"](2, 3) == 5  # the test the function failed now passes

    session = load_session(log.id, app_dirs())
    types = [record["type"] for record in session.records]
    assert types.index("checkpoint") < types.index("tool_result")
    [checkpoint] = [r for r in session.records if r["type"] == "checkpoint"]
    assert (checkpoint["path"], checkpoint["before"], checkpoint["turn"]) == ("calc.py", FAILING, 1)
    [policy] = [r for r in session.records if r.get("event") == "policy"]
    assert (policy["tool"], policy["permission"], policy["answer"]) == ("edit_file", "ask", True)

    replayed = replay(session)
    [shown] = finished(list(replayed.turns[0].events))
    assert "-    return a - b\n+    return a + b" in shown.result  # replay shows the diff
    markdown = session_markdown(replayed)
    assert "```diff\nchange calc.py (+1 -1)\n--- a/calc.py" in markdown


async def test_a_refused_write_leaves_the_file_untouched(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    root = a_project(tmp_path)
    confirmer = Confirmer(False)
    model = scripted(("write_file", {"path": "calc.py", "content": "import os; os.remove('x')\n"}))
    engine = an_engine(coding_pack(write_pack), root, model, confirmer)
    events = await play(engine, "fix calc.py")
    [done] = finished(events)
    assert done.outcome == "cancelled" and "declined" in done.result
    assert len(confirmer.shown) == 1
    assert (root / "calc.py").read_text() == FAILING
    assert engine.checkpoints.items == []
    # the model read that the user said no
    assert "declined" in str(model.requests[-1].messages[-1]["content"])


async def test_a_denied_path_is_refused_without_asking(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    root = a_project(tmp_path)
    confirmer = Confirmer(True)
    model = ScriptedModel().script(
        ScriptedReply(
            "",
            tool_calls=[
                ("read_file", {"path": ".env"}),
                ("write_file", {"path": ".env", "content": "API_TOKEN=mine\n"}),
            ],
        ),
        ScriptedReply("I may not."),
    )
    pack = coding_pack(write_pack, paths={"deny": [".env", "**/*.pem"]})
    events = await play(an_engine(pack, root, model, confirmer), "show me the env file")
    outcomes = [(done.call.name, done.outcome) for done in finished(events)]
    assert outcomes == [("read_file", "blocked"), ("write_file", "blocked")]
    assert all("paths.deny: .env" in done.result for done in finished(events))
    assert "hunter2" not in json.dumps([done.result for done in finished(events)])
    assert confirmer.shown == []  # nobody was asked
    assert (root / ".env").read_text() == "API_TOKEN=hunter2\n"


async def test_a_permission_deny_and_an_allow_need_no_question(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    root = a_project(tmp_path)
    confirmer = Confirmer(False)
    pack = coding_pack(write_pack, permissions={"edit_file": "allow", "write_file": "deny"})
    model = scripted(FIX_CALL, ("write_file", {"path": "new.py", "content": "x = 1\n"}))
    events = await play(an_engine(pack, root, model, confirmer), "fix calc.py")
    assert [done.outcome for done in finished(events)] == ["ok", "blocked"]
    assert "permissions.write_file: deny" in finished(events)[1].result
    assert confirmer.shown == []
    assert (root / "calc.py").read_text() == FIXED and not (root / "new.py").exists()


async def test_a_file_changed_while_the_dialog_was_open_is_not_overwritten(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    root = a_project(tmp_path)

    def user_saves() -> None:
        (root / "calc.py").write_text("# the user's version\n" + FAILING)

    confirmer = Confirmer(True, meanwhile=user_saves)
    engine = an_engine(coding_pack(write_pack), root, scripted(FIX_CALL), confirmer)
    events = await play(engine, "fix calc.py")
    [done] = finished(events)
    assert done.outcome == "error" and "changed on disk since it was read" in done.result
    assert (root / "calc.py").read_text() == "# the user's version\n" + FAILING


async def test_undo_restores_the_last_turn_and_keeps_a_file_changed_since(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    root = a_project(tmp_path)
    log = SessionLog.create(app_dirs(), pack="testpack", model="scripted/plain")
    model = scripted(FIX_CALL)
    model.script(
        ScriptedReply("", tool_calls=[("write_file", {"path": "notes.md", "content": "n\n"})]),
        ScriptedReply("Noted."),
    )
    engine = an_engine(coding_pack(write_pack), root, model, Confirmer(True), session=log)
    await play(engine, "fix calc.py")
    await play(engine, "write notes")
    assert (root / "notes.md").exists() and (root / "calc.py").read_text() == FIXED

    result = engine.undo(engine.plan_undo(1))
    assert result.removed == ("notes.md",) and not (root / "notes.md").exists()
    assert (root / "calc.py").read_text() == FIXED  # turn 1 is not undone yet

    (root / "calc.py").write_text(FIXED + "# the user's line\n")
    plan = engine.plan_undo(1)
    assert plan.changed == ("calc.py",)
    kept = engine.undo(plan)
    assert kept.kept == ("calc.py",) and "changed on disk since" in kept.text()
    assert (root / "calc.py").read_text() == FIXED + "# the user's line\n"
    log.close()
    undos = [r for r in load_session(log.id, app_dirs()).records if r.get("event") == "undo"]
    assert [u["turns"] for u in undos] == [[2], [1]]


async def test_undo_works_after_a_resume(tmp_path: Path, write_pack: PackWriter) -> None:
    root = a_project(tmp_path)
    pack = coding_pack(write_pack)
    log = SessionLog.create(app_dirs(), pack="testpack", model="scripted/plain")
    engine = an_engine(pack, root, scripted(FIX_CALL), Confirmer(True), session=log)
    await play(engine, "fix calc.py")
    log.close()

    later = an_engine(pack, root, ScriptedModel(), Confirmer(True))
    prepare_resume(log.id).restore_into(later)
    result = later.undo(later.plan_undo(1))
    assert result.restored == ("calc.py",)
    assert (root / "calc.py").read_text() == FAILING


# --------------------------------------------------------------------------- a real HTTP model


@pytest.fixture
def http_model(monkeypatch: pytest.MonkeyPatch) -> Any:
    from modes_tui.llm.litellm_model import LiteLLMChatModel

    def make(url: str) -> LiteLLMChatModel:
        monkeypatch.setenv("FAKE_SERVER_KEY", "sk-test")
        config = ModelConfig(
            model="openai/scripted",
            alias="served",
            api_base=url,
            api_key_env="FAKE_SERVER_KEY",
            tools=True,
        )
        return LiteLLMChatModel(timeout=30, models=ModelCatalog({"served": config}))

    return make


async def test_a_served_model_fixes_the_function_and_a_refused_write_stays_unwritten(
    tmp_path: Path, write_pack: PackWriter, http_model: Any
) -> None:
    root = a_project(tmp_path)
    replies = [
        ServerReply("Let me fix it.", tool_calls=(FIX_CALL,)),
        ServerReply("Fixed: add now adds."),
        ServerReply("", tool_calls=(("write_file", {"path": "test_calc.py", "content": ""}),)),
        ServerReply("Understood, I left the tests alone."),
    ]
    with scripted_openai_server(replies) as server:
        confirmer = Confirmer(True)
        engine = an_engine(
            coding_pack(write_pack),
            root,
            http_model(server.url),
            confirmer,
            model_override="served",
        )
        first = await play(engine, "fix the failing test in calc.py")
        confirmer.answer = False
        second = await play(engine, "now write an empty test file")

    assert [done.outcome for done in finished(first)] == ["ok"]
    assert (root / "calc.py").read_text() == FIXED
    assert confirmer.shown[0] is not None and "+    return a + b" in confirmer.shown[0].diff
    assert [done.outcome for done in finished(second)] == ["cancelled"]
    assert (root / "test_calc.py").read_text() == TEST
    # the server's model read the diff as the tool's result, and the refusal
    tool_messages = [m for m in server.bodies[1]["messages"] if m["role"] == "tool"]
    assert "+    return a + b" in tool_messages[0]["content"]
    refused = [m for m in server.bodies[3]["messages"] if m["role"] == "tool"][-1]
    assert "declined" in refused["content"]
    assert [t["function"]["name"] for t in server.bodies[0]["tools"]] == [
        "read_file",
        "write_file",
        "edit_file",
    ]
