"""`modes-tui acp`: the real agent process, driven over stdio by the SDK's client side.

The scripted models answer offline (`--model scripted/echo|edit|command|slow`) and the keyword
router decides, so every turn is deterministic; `test_acp_served.py` does the same through
litellm against the fake OpenAI-compatible server.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from modes_tui.core.paths import app_dirs
from modes_tui.store.session_reader import load_session
from tests.support.acp_support import HOLD, bounded, running_agent
from tests.support.cli_support import run_cli

EDIT = "replace `a - b` with `a + b` in calc.py"
FAILING = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "calc.py").write_text(FAILING)
    return root


def records(session_id: str) -> list[dict]:
    return list(load_session(session_id, app_dirs()).records)


# --------------------------------------------------------------------------- initialize, new


async def test_initialize_answers_version_1_and_new_lists_the_packs_modes(
    modes_home: Path, project: Path
) -> None:
    async with running_agent(modes_home, project) as editor:
        init = await bounded(editor.conn.initialize(protocol_version=1))
        assert init.protocol_version == 1
        assert init.agent_capabilities.load_session is True
        assert init.agent_capabilities.prompt_capabilities.embedded_context is True
        assert init.agent_info.name == "modes-tui"
        new = await bounded(editor.conn.new_session(cwd=str(project), mcp_servers=[]))
    modes = {mode.id: mode for mode in new.modes.available_modes}
    assert list(modes) == ["auto", "chat", "code", "reason", "shell", "write", "off"]
    assert modes["code"].description.startswith("Writing, reading, reviewing")
    assert new.modes.current_mode_id == "auto"
    [option] = new.config_options
    assert option.id == "mode" and option.current_value == "auto"
    assert [choice.value for choice in option.options] == list(modes)


async def test_new_session_starts_in_the_packs_setting(modes_home: Path, project: Path) -> None:
    done = run_cli("", "mode", "write", home=modes_home)
    assert done.returncode == 0, done.stderr
    async with running_agent(modes_home, project) as editor:
        await bounded(editor.conn.initialize(protocol_version=1))
        new = await bounded(editor.conn.new_session(cwd=str(project), mcp_servers=[]))
    assert new.modes.current_mode_id == "write"


# --------------------------------------------------------------------------- a routed turn


async def test_a_routed_turn_is_announced_before_the_answer(
    modes_home: Path, project: Path
) -> None:
    async with running_agent(modes_home, project) as editor:
        session = await editor.start(project)
        stop = await editor.say(session, "my python traceback says TypeError")
    assert stop == "end_turn"
    kinds = editor.kinds()
    first_mode = kinds.index("current_mode_update")
    first_chunk = kinds.index("agent_message_chunk")
    assert first_mode < first_chunk
    assert editor.modes() == ["code", "auto"]  # the mode that answers, then the setting again
    said = editor.text()
    note, answer = said.split("\n\n", 1)
    assert note.startswith("> → code · by classifier 0.99")
    assert "keywords:" in note  # the reason
    assert answer == "(scripted model, no real answer) You said: my python traceback says TypeError"
    [(_, chunk)] = [(s, d) for s, d in editor.updates if "_meta" in d]
    assert chunk["_meta"]["modes-tui"]["route"]["mode_name"] == "code"
    routes = [r for r in records(session) if r["type"] == "route"]
    assert [(r["route"]["mode_name"], r["route"]["decided_by"]) for r in routes] == [
        ("code", "classifier")
    ]


async def test_a_library_printing_to_stdout_does_not_corrupt_the_stream(
    modes_home: Path, project: Path
) -> None:
    noisy = (
        "import os, sys, warnings\n"
        "import modes_tui.acp.server as server\n"
        "serve = server.serve\n"
        "def noisy(runtime, streams):\n"
        "    print('a library says hello on stdout')\n"
        "    os.write(1, b'a C library writes to fd 1\\n')\n"
        "    warnings.warn('a library warning')\n"
        "    return serve(runtime, streams)\n"
        "server.serve = noisy\n"
        "from modes_tui.cli import main\n"
        "sys.exit(main(['--model', 'scripted/echo', 'acp', '--classifier', 'keyword']))\n"
    )
    async with running_agent(modes_home, project, command=("-c", noisy)) as editor:
        session = await editor.start(project)
        assert await editor.say(session, "hello there") == "end_turn"
    assert "You said: hello there" in editor.text()
    assert editor.stderr is not None
    logged = editor.stderr.read_text()
    assert "a library says hello on stdout" in logged
    assert "a C library writes to fd 1" in logged


# --------------------------------------------------------------------------- permissions


async def test_a_rejected_edit_leaves_the_file_and_an_allowed_one_applies_it(
    modes_home: Path, project: Path
) -> None:
    async with running_agent(modes_home, project, model="scripted/edit") as editor:
        session = await editor.start(project)
        await bounded(editor.conn.set_session_mode(session_id=session, mode_id="code"))
        editor.answers = ["reject-once"]
        assert await editor.say(session, EDIT) == "end_turn"
        assert (project / "calc.py").read_text() == FAILING
        [asked] = editor.questions
        assert asked.tool_call.kind == "edit"
        [diff] = asked.tool_call.content
        assert (diff.type, diff.path) == ("diff", str(project / "calc.py"))  # absolute
        assert (diff.old_text, diff.new_text) == (FAILING, FIXED)
        assert [o.kind for o in asked.options] == [
            "allow_once",
            "allow_always",
            "reject_once",
            "reject_always",
        ]
        updates = [d for _, d in editor.updates if d["sessionUpdate"] == "tool_call_update"]
        assert updates[-1]["status"] == "failed"

        editor.answers = ["allow-once"]
        assert await editor.say(session, EDIT) == "end_turn"
    assert (project / "calc.py").read_text() == FIXED
    assert len(editor.questions) == 2
    policy = [r for r in records(session) if r.get("event") == "policy"]
    assert [p["answer"] for p in policy] == [False, True]


async def test_a_cancelled_question_counts_as_no(modes_home: Path, project: Path) -> None:
    async with running_agent(modes_home, project, model="scripted/edit") as editor:
        session = await editor.start(project)
        await bounded(editor.conn.set_session_mode(session_id=session, mode_id="code"))
        editor.answers = [None]  # the client cannot answer
        assert await editor.say(session, EDIT) == "end_turn"
    assert (project / "calc.py").read_text() == FAILING


async def test_cancel_while_a_question_is_open_stops_the_turn_and_changes_nothing(
    modes_home: Path, project: Path
) -> None:
    async with running_agent(modes_home, project, model="scripted/edit") as editor:
        session = await editor.start(project)
        await bounded(editor.conn.set_session_mode(session_id=session, mode_id="code"))
        editor.answers = [HOLD]
        turn = asyncio.create_task(editor.say(session, EDIT))
        while not editor.questions:
            await bounded(asyncio.sleep(0.05))
        await editor.conn.cancel(session_id=session)
        assert await bounded(turn) == "cancelled"
        assert (project / "calc.py").read_text() == FAILING
        assert await editor.say(session, "hello again") == "end_turn"  # serving on
    assert (project / "calc.py").read_text() == FAILING


async def test_a_command_is_asked_and_allow_always_lasts_for_the_tool_in_that_mode(
    modes_home: Path, project: Path
) -> None:
    async with running_agent(modes_home, project, model="scripted/command") as editor:
        session = await editor.start(project)
        await bounded(editor.conn.set_session_mode(session_id=session, mode_id="shell"))
        editor.answers = ["reject-once"]
        await editor.say(session, "echo one > one.txt")
        assert not (project / "one.txt").exists()
        [asked] = editor.questions
        assert asked.tool_call.kind == "execute"
        assert asked.tool_call.title == "Run `echo one > one.txt`"

        editor.answers = ["allow-always"]
        await editor.say(session, "echo two > two.txt")
        await editor.say(session, "echo three > three.txt")  # not asked again
    assert (project / "two.txt").exists() and (project / "three.txt").exists()
    assert len(editor.questions) == 2
    finished = [d for _, d in editor.updates if d.get("status") == "completed"]
    assert finished, "the command's output reaches the editor as a completed tool call"


async def test_entering_a_confirm_first_mode_is_asked_and_a_no_falls_back(
    modes_home: Path, project: Path
) -> None:
    async with running_agent(modes_home, project) as editor:
        session = await editor.start(project)
        editor.answers = ["reject-once"]
        await editor.say(session, "git rebase conflict, how do I get out")
    [asked] = editor.questions
    assert asked.tool_call.title == "Enter shell?"
    assert asked.tool_call.kind == "switch_mode"
    assert editor.modes()[0] == "chat"  # the fallback answered
    assert "by fallback" in editor.text()
    # the question's card is settled with the answer, not left waiting
    [settled] = [
        d for _, d in editor.updates if d.get("toolCallId") == asked.tool_call.tool_call_id
    ]
    assert (settled["sessionUpdate"], settled["status"]) == ("tool_call_update", "completed")
    assert settled["content"][-1]["content"]["text"] == "No"
    assert settled["content"][0]["content"]["text"] == asked.tool_call.content[0].content.text


async def test_an_unsure_route_is_asked_and_the_mode_taken_answers_and_is_learned(
    modes_home: Path, project: Path
) -> None:
    # keywords give code 0.60 (python, traceback, regex) against shell 0.40 (git, bash): just
    # under the default pack's threshold of 0.65, so the turn would fall back to chat
    async with running_agent(modes_home, project) as editor:
        session = await editor.start(project)
        editor.answers = ["mode:code"]
        await editor.say(session, "python traceback with a regex after git pull in bash")
        [asked] = editor.questions
        assert asked.tool_call.kind == "switch_mode"
        assert [o.option_id for o in asked.options][:2] == ["mode:chat", "mode:code"]
        assert editor.modes() == ["code", "auto"]  # the mode taken answers
        assert "Chosen by you: the router was unsure (unsure: chat or code 0.60)" in editor.text()
        [settled] = [
            d for _, d in editor.updates if d.get("toolCallId") == asked.tool_call.tool_call_id
        ]
        assert (settled["status"], settled["content"][-1]["content"]["text"]) == (
            "completed",
            "code answers",
        )

        editor.answers = [None]  # cancelled: the fallback runs, the note says it was unsure
        since = len(editor.updates)
        await editor.say(session, "fix the python regex bug after git clone in bash")
    assert editor.modes(since) == ["chat", "auto"] and len(editor.questions) == 2
    assert "unsure: chat or code 0.60" in editor.text(since=since)
    listed = run_cli("", "corrections", "--json", home=modes_home)
    [correction] = json.loads(listed.stdout)
    assert (correction["routed_mode"], correction["corrected_mode"]) == ("chat", "code")


# --------------------------------------------------------------------------- set_mode


async def test_set_mode_holds_across_turns_and_auto_restores_routing(
    modes_home: Path, project: Path
) -> None:
    async with running_agent(modes_home, project) as editor:
        session = await editor.start(project)
        await bounded(editor.conn.set_session_mode(session_id=session, mode_id="write"))
        await editor.say(session, "my python traceback says TypeError")
        await editor.say(session, "refactor this python class")
        await bounded(editor.conn.set_session_mode(session_id=session, mode_id="auto"))
        await editor.say(session, "my python traceback says TypeError")
        with pytest.raises(Exception, match="Invalid params") as refused:
            await bounded(editor.conn.set_session_mode(session_id=session, mode_id="nope"))
        assert "nope" in json.dumps(getattr(refused.value, "data", None))
    assert editor.modes() == ["write", "write", "write", "write", "code", "auto"]
    routes = [r["route"] for r in records(session) if r["type"] == "route"]
    assert [(r["mode_name"], r["decided_by"]) for r in routes] == [
        ("write", "caller"),
        ("write", "caller"),
        ("code", "classifier"),
    ]
    settings = [r["setting"] for r in records(session) if r["type"] == "route"]
    assert settings == ["write", "write", "auto"]
    assert "mode set to write" in editor.text()
    # the control file, shared with the app's other windows, is untouched
    assert not app_dirs().control_file.exists()


async def test_the_mode_config_option_is_the_same_setting(modes_home: Path, project: Path) -> None:
    async with running_agent(modes_home, project) as editor:
        session = await editor.start(project)
        changed = await bounded(
            editor.conn.set_config_option(config_id="mode", session_id=session, value="reason")
        )
        assert changed.config_options[0].current_value == "reason"
        assert editor.modes() == ["reason"]  # the mode selector follows
        await editor.say(session, "my python traceback says TypeError")
        with pytest.raises(Exception, match="Invalid params"):
            await bounded(
                editor.conn.set_config_option(config_id="model", session_id=session, value="x")
            )
    assert editor.modes() == ["reason", "reason", "reason"]


# --------------------------------------------------------------------------- cancel, load


async def test_cancel_stops_the_turn_and_the_partial_answer_is_logged(
    modes_home: Path, project: Path
) -> None:
    async with running_agent(modes_home, project, model="scripted/slow") as editor:
        session = await editor.start(project)
        chunks = asyncio.Event()

        def seen(data: dict) -> None:
            if data["sessionUpdate"] == "agent_message_chunk" and "_meta" not in data:
                chunks.set()

        editor.on_update = seen
        turn = asyncio.create_task(editor.say(session, "hello there"))
        await bounded(chunks.wait())
        await editor.conn.cancel(session_id=session)
        assert await bounded(turn) == "cancelled"
        partial = editor.text().split("\n\n", 1)[1]
        assert partial.startswith("0001 ") and "1000 " not in partial
        # the agent serves on: the next turn answers
        editor.on_update = None
    cancels = [r for r in records(session) if r.get("event") == "cancel"]
    assert cancels and cancels[0]["partial"].startswith("0001 ")


async def test_load_replays_a_saved_session_and_carries_it_on(
    modes_home: Path, project: Path
) -> None:
    async with running_agent(modes_home, project) as editor:
        session = await editor.start(project)
        await editor.say(session, "my python traceback says TypeError")
    listed = run_cli("", "sessions", home=modes_home)
    assert session in listed.stdout

    async with running_agent(modes_home, project) as editor:
        await bounded(editor.conn.initialize(protocol_version=1))
        loaded = await bounded(
            editor.conn.load_session(cwd=str(project), session_id=session, mcp_servers=[])
        )
        assert loaded.modes.current_mode_id == "auto"
        kinds = editor.kinds()
        assert kinds[0] == "user_message_chunk"
        assert editor.text("user_message_chunk") == "my python traceback says TypeError"
        assert "You said: my python traceback says TypeError" in editor.text()
        assert editor.modes()[0] == "code"
        seen = len(editor.updates)
        await editor.say(session, "and what about refactor python")
        assert "You said: and what about refactor python" in editor.text(since=seen)
    users = [r["content"] for r in records(session) if r["type"] == "user"]
    assert users == ["my python traceback says TypeError", "and what about refactor python"]
    replayed = run_cli("", "replay", session, home=modes_home)
    assert replayed.returncode == 0 and "and what about refactor python" in replayed.stdout
    rerouted = run_cli("", "replay", session, "--reroute", home=modes_home)
    assert rerouted.returncode == 0, rerouted.stderr


async def test_load_of_an_unknown_session_is_an_error(modes_home: Path, project: Path) -> None:
    async with running_agent(modes_home, project) as editor:
        await bounded(editor.conn.initialize(protocol_version=1))
        with pytest.raises(Exception, match="Invalid params"):
            await bounded(
                editor.conn.load_session(cwd=str(project), session_id="nope", mcp_servers=[])
            )
        # still serving
        new = await bounded(editor.conn.new_session(cwd=str(project), mcp_servers=[]))
    assert new.session_id
