"""`modes-tui acp` with a served model: config.yaml names an OpenAI-compatible server (the
fake one of `tests/fake_openai_server.py` on 127.0.0.1), every call goes through litellm; and
an MCP server the editor passes in `session/new` is offered to the modes that use tools."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from acp.schema import EnvVariable, McpServerStdio

from modes_tui.core.paths import app_dirs
from modes_tui.store.session_reader import load_session
from tests.support.acp_support import agent_env, bounded, running_agent
from tests.support.fake_openai_server import ServerReply, scripted_openai_server

KEY = "FAKE_SERVER_KEY"


def configure(url: str) -> None:
    served = {"model": "openai/scripted", "api_base": url, "api_key_env": KEY, "tools": True}
    path = app_dirs().settings_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"default_model": "served", "models": {"served": served}}))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return root


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools") or []]


async def test_a_served_model_answers_a_routed_turn_and_its_allowed_edit_applies(
    modes_home: Path, project: Path
) -> None:
    fix = ("edit_file", {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"})
    replies = [ServerReply("Fixing it.", tool_calls=(fix,)), ServerReply("Fixed.")]
    with scripted_openai_server(replies) as server:
        configure(server.url)
        env = agent_env(modes_home, **{KEY: "sk-test"})
        async with running_agent(modes_home, project, model=None, env=env) as editor:
            session = await editor.start(project)
            editor.answers = ["allow-once"]
            stop = await editor.say(session, "fix the bug in my python function in calc.py")
    assert stop == "end_turn"
    kinds = editor.kinds()
    assert kinds.index("current_mode_update") < kinds.index("agent_message_chunk")
    assert editor.modes()[0] == "code"
    said = editor.text()
    assert said.startswith("> → code · by classifier")
    assert said.endswith("Fixing it.Fixed.")
    [asked] = editor.questions
    [diff] = asked.tool_call.content
    assert (diff.path, diff.new_text) == (
        str(project / "calc.py"),
        "def add(a, b):\n    return a + b\n",
    )
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert tool_names(server.bodies[0])[:2] == ["read_file", "list_files"]
    assistant = [r for r in load_session(session, app_dirs()).records if r["type"] == "assistant"]
    assert assistant[-1]["message"]["model"] == "served"


async def test_an_mcp_server_the_editor_passes_is_offered_to_modes_with_tools(
    modes_home: Path, project: Path
) -> None:
    call = ("clock__get_current_time", {"timezone": "UTC"})
    replies = [ServerReply("", tool_calls=(call,)), ServerReply("That is the time.")]
    clock = McpServerStdio(
        name="Clock",
        command=sys.executable,
        args=["-m", "mcp_server_time", "--local-timezone", "UTC"],
        env=[EnvVariable(name="MODES_TUI_TEST", value="1")],
    )
    with scripted_openai_server(replies) as server:
        configure(server.url)
        env = agent_env(modes_home, **{KEY: "sk-test"})
        async with running_agent(modes_home, project, model=None, env=env) as editor:
            await bounded(editor.conn.initialize(protocol_version=1))
            new = await bounded(editor.conn.new_session(cwd=str(project), mcp_servers=[clock]))
            session = str(new.session_id)
            await bounded(editor.conn.set_session_mode(session_id=session, mode_id="code"))
            editor.answers = ["allow-once"]
            assert await editor.say(session, "what time is it") == "end_turn"
    assert "clock__get_current_time" in tool_names(server.bodies[0])
    [asked] = editor.questions  # an editor's server is not trusted: the call is asked
    assert asked.tool_call.title == "clock__get_current_time"
    results = [d for _, d in editor.updates if d.get("status") == "completed"]
    assert results and "UTC" in results[0]["content"][0]["content"]["text"]
    assert editor.text().endswith("That is the time.")


async def test_a_hand_off_is_asked_announced_and_replayed_on_load(
    modes_home: Path, project: Path, write_pack: Any
) -> None:
    modes = {
        "chat": {
            "description": "Everyday chat.",
            "keywords": ["hello"],
            "tools": ["switch_mode"],
            "hand_off": ["code"],
            "permissions": {"switch_mode": "ask"},
        },
        "code": {"description": "Code.", "keywords": ["function"], "tools": ["read_file"]},
    }
    pack = write_pack(modes=modes)
    hand = ("switch_mode", {"mode": "code", "reason": "this needs a change to calc.py"})
    replies = [ServerReply("", tool_calls=(hand,)), ServerReply("Code mode here.")]
    with scripted_openai_server(replies) as server:
        configure(server.url)
        env = agent_env(modes_home, **{KEY: "sk-test"})
        options = ("--profiles", str(pack))
        async with running_agent(modes_home, project, *options, model=None, env=env) as editor:
            session = await editor.start(project)
            editor.answers = ["allow-once"]
            assert await editor.say(session, "hello, calc.py needs a fix") == "end_turn"
        [asked] = editor.questions
        assert (asked.tool_call.kind, asked.tool_call.title) == (
            "switch_mode",
            "Hand the turn to code",
        )
        assert editor.modes() == ["chat", "code", "auto"]
        said = editor.text()
        assert "> → chat · by classifier" in said
        assert "> → code · by model · hand-off · this needs a change to calc.py" in said
        assert said.endswith("Code mode here.")

        async with running_agent(modes_home, project, *options, model=None, env=env) as editor:
            await bounded(editor.conn.initialize(protocol_version=1))
            await bounded(
                editor.conn.load_session(cwd=str(project), session_id=session, mcp_servers=[])
            )
    kinds = editor.kinds()
    assert kinds[0] == "user_message_chunk"
    assert "tool_call" in kinds and "tool_call_update" in kinds
    assert editor.modes() == ["chat", "code", "auto"]
    assert editor.text().endswith("Code mode here.")
