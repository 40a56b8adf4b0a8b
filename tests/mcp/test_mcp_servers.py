"""MCP servers against real servers nobody here wrote: mcp-server-time and mcp-server-git
from PyPI, started as `python -m mcp_server_time` / `-m mcp_server_git` over stdio (the
streamable-HTTP transport: test_mcp_http.py; the CLI: test_mcp_cli.py; the app: test_mcp_tui.py).

The model is scripted; everything between it and the servers is real: the engine, the
guards, the SDK's stdio and HTTP transports, the servers' processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.engine.config import EngineConfig
from modes_tui.core.engine.engine import Engine
from modes_tui.core.history.events import RequestBuilt, ToolCallFinished, TurnEvent, TurnFinished
from modes_tui.core.model.wire import ModelRequest, ToolCall
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.core.tools.registry import Tool, ToolRegistry
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.mcp.config import McpServer
from modes_tui.mcp.servers import McpServers, tool_name
from tests.support.mcp_support import MARK, make_git_repo, marked_processes, stdio, wait_until_gone

# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    return make_git_repo(tmp_path / "repo")


@pytest.fixture
def mark() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def configs(git_repo: Path, mark: str) -> dict[str, McpServer]:
    return {
        "time": stdio("time", "mcp_server_time", "--local-timezone", "UTC", mark=mark),
        "git": stdio("git", "mcp_server_git", "--repository", str(git_repo), mark=mark, trust=True),
        "nope": McpServer("nope", "stdio", command="no-such-mcp-server-here"),
    }


@pytest.fixture
async def servers(configs: dict[str, McpServer], tmp_path: Path) -> AsyncIterator[McpServers]:
    hub = McpServers(configs, log_dir=tmp_path / "mcp-logs")
    yield hub
    await hub.close()


MODES: dict[str, dict[str, Any]] = {
    "chat": {"description": "Everyday chat.", "keywords": ["hello"]},
    "repo": {"description": "Git work.", "keywords": ["git"], "mcp": ["git"]},
    "clock": {"description": "Times.", "keywords": ["time"], "mcp": ["time"]},
    "broken": {"description": "Missing server.", "keywords": ["nope"], "mcp": ["nope"]},
}


@pytest.fixture
def pack(write_pack: Callable[..., Path], configs: dict[str, McpServer]) -> Pack:
    folder = write_pack(router={"classifier": "keyword", "fallback": "chat"}, modes=MODES)
    return load_pack(profiles_dir=folder, known_servers=frozenset(configs))


@dataclass
class Confirm:
    """Says yes or no, and remembers what it was asked."""

    answer: bool = True
    asked: list[str] = field(default_factory=list)

    async def confirm(self, call: ToolCall, tool: Tool) -> bool:
        self.asked.append(tool.name)
        return self.answer


def engine_for(
    pack: Pack, model: ScriptedModel, servers: McpServers, confirm: Confirm | None = None
) -> Engine:
    return Engine(
        config=EngineConfig(default_model="scripted/test"),
        pack=pack,
        router=Router(pack, KeywordClassifier()),
        model=model,
        tools=ToolRegistry(),
        servers=servers,
        confirm=confirm or Confirm(),
    )


async def run(events: AsyncIterator[TurnEvent]) -> list[TurnEvent]:
    return [event async for event in events]


def of(events: list[TurnEvent], cls: type[Any]) -> list[Any]:
    return [event for event in events if isinstance(event, cls)]


def notes(events: list[TurnEvent]) -> list[str]:
    """The turn's notes (every round's request repeats them; the first one is enough)."""
    return list(of(events, RequestBuilt)[0].notes)


# --------------------------------------------------------------------------- listing


async def test_the_real_servers_tools_are_listed_namespaced_with_their_source(
    servers: McpServers,
) -> None:
    found = await servers.tools(["time", "git"])
    names = {tool.name: tool for tool in found.tools}
    assert found.problems == ()
    assert {"time__get_current_time", "time__convert_time"} <= set(names)
    assert {"git__git_status", "git__git_log", "git__git_diff_unstaged"} <= set(names)
    assert names["time__convert_time"].source == "mcp:time"
    assert names["git__git_status"].source == "mcp:git"
    # untrusted servers ask before every call; trust: true does not
    assert names["time__convert_time"].needs_confirmation is True
    assert names["git__git_status"].needs_confirmation is False
    schema = names["time__convert_time"].parameters
    assert schema["type"] == "object"
    assert set(schema["required"]) == {"source_timezone", "time", "target_timezone"}


def test_tool_names_fit_what_openai_style_apis_accept() -> None:
    assert tool_name("time", "get_current_time") == "time__get_current_time"
    assert tool_name("docs", "search.v2 (beta)") == "docs__search_v2__beta_"
    long = tool_name("server", "x" * 100)
    assert len(long) == 64 and long.startswith("server__xxx")
    assert long != tool_name("server", "x" * 99)  # cut names stay distinct


# --------------------------------------------------------------------------- turns


async def test_a_turn_calls_the_real_git_server_and_the_model_reads_its_answer(
    pack: Pack, servers: McpServers, git_repo: Path
) -> None:
    model = ScriptedModel().script(
        ScriptedReply(tool_calls=[("git__git_status", {"repo_path": str(git_repo)})]),
        ScriptedReply("You changed tracked.txt and added brand-new.txt."),
    )
    confirm = Confirm()
    events = await run(engine_for(pack, model, servers, confirm).run_turn("git status please"))

    first = model.requests[0]
    offered = {spec.name for spec in first.tools}
    assert "git__git_status" in offered and not any(n.startswith("time__") for n in offered)
    finished = of(events, ToolCallFinished)[0]
    assert finished.outcome == "ok"
    assert "modified:   tracked.txt" in finished.result
    assert "brand-new.txt" in finished.result
    tool_message = next(m for m in model.requests[1].messages if m["role"] == "tool")
    assert tool_message["content"] == finished.result  # the model read the server's answer
    assert of(events, TurnFinished)[0].message.content.startswith("You changed")
    assert confirm.asked == []  # git is trusted
    assert notes(events) == []


async def test_an_untrusted_server_asks_first_and_a_no_keeps_the_tool_from_running(
    pack: Pack, servers: McpServers
) -> None:
    arguments = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    model = ScriptedModel().script(
        ScriptedReply(tool_calls=[("time__convert_time", arguments)]),
        ScriptedReply("Noon UTC is 21:00 in Tokyo."),
        ScriptedReply(tool_calls=[("time__convert_time", arguments)]),
        ScriptedReply("All right, I will not convert it."),
    )
    confirm = Confirm(answer=True)
    engine = engine_for(pack, model, servers, confirm)

    events = await run(engine.run_turn("what time is noon UTC in Tokyo"))
    assert confirm.asked == ["time__convert_time"]
    finished = of(events, ToolCallFinished)[0]
    assert finished.outcome == "ok"
    answer = json.loads(finished.result)
    assert answer["target"]["datetime"].endswith("21:00:00+09:00")
    assert answer["time_difference"] == "+9.0h"

    confirm.answer = False
    events = await run(engine.run_turn("and the time again"))
    assert confirm.asked == ["time__convert_time", "time__convert_time"]
    declined = of(events, ToolCallFinished)[0]
    assert declined.outcome == "cancelled"
    assert json.loads(declined.result)["cancelled"] is True
    assert of(events, TurnFinished)


async def test_a_server_command_that_does_not_exist_is_a_note_and_the_turn_goes_on(
    pack: Pack, servers: McpServers
) -> None:
    model = ScriptedModel().script(ScriptedReply("I have no tools for that, sorry."))
    events = await run(engine_for(pack, model, servers).run_turn("nope, try it"))

    assert notes(events) == [
        "MCP server 'nope' could not start: command 'no-such-mcp-server-here' not found; "
        "this turn runs without its tools"
    ]
    assert model.requests[0].tools == ()
    assert of(events, TurnFinished)[0].message.content == "I have no tools for that, sorry."


async def test_a_server_that_exits_at_start_says_why_from_its_stderr(
    write_pack: Callable[..., Path], tmp_path: Path, mark: str
) -> None:
    not_a_repo = tmp_path / "plain-folder"
    not_a_repo.mkdir()
    hub = McpServers(
        {"git": stdio("git", "mcp_server_git", "--repository", str(not_a_repo), mark=mark)},
        log_dir=tmp_path / "logs",
    )
    try:
        found = await hub.tools(["git"])
    finally:
        await hub.close()
    assert found.tools == ()
    (problem,) = found.problems
    assert problem.startswith("MCP server 'git' could not start: ")
    assert "is not a valid Git repository" in problem  # the server's own words, from stderr
    assert marked_processes(mark) == []


async def test_a_server_killed_mid_session_is_an_error_then_restarts_on_the_next_turn(
    pack: Pack, servers: McpServers, git_repo: Path, mark: str
) -> None:
    status = ("git__git_status", {"repo_path": str(git_repo)})
    killed: list[int] = []

    def kill_then_call(request: ModelRequest) -> ScriptedReply:
        # the server is up (the turn's setup pinged it); kill it before the call goes out
        (pid,) = marked_processes(mark)
        os.kill(pid, signal.SIGKILL)
        assert wait_until_gone(pid)
        killed.append(pid)
        return ScriptedReply(tool_calls=[status])

    model = ScriptedModel().script(ScriptedReply(tool_calls=[status]), ScriptedReply("fine"))
    engine = engine_for(pack, model, servers)
    events = await run(engine.run_turn("git status"))
    assert of(events, ToolCallFinished)[0].outcome == "ok"

    answers = iter([kill_then_call, lambda _request: ScriptedReply("The git server went away.")])
    model.responder = lambda request: next(answers)(request)
    events = await run(engine.run_turn("git status again"))
    failed = of(events, ToolCallFinished)[0]
    assert failed.outcome == "error"
    assert "the MCP server 'git' stopped" in failed.result
    assert of(events, TurnFinished)[0].message.content == "The git server went away."

    model.responder = None
    model.script(ScriptedReply(tool_calls=[status]), ScriptedReply("Back again."))
    events = await run(engine.run_turn("git status once more"))
    assert notes(events) == [
        "MCP server 'git' had stopped (its connection closed); starting it again"
    ]
    assert of(events, ToolCallFinished)[0].outcome == "ok"
    assert "brand-new.txt" in of(events, ToolCallFinished)[0].result
    (new_pid,) = marked_processes(mark)
    assert new_pid not in killed


async def test_closing_stops_every_server_and_leaves_no_process_or_zombie(
    servers: McpServers, mark: str
) -> None:
    await servers.tools(["time", "git"])
    pids = marked_processes(mark)
    assert len(pids) == 2
    await servers.close()
    assert all(wait_until_gone(pid) for pid in pids)
    assert servers.running() == {"time": False, "git": False}
    await servers.close()  # idempotent


async def test_a_turn_cancelled_while_its_server_starts_does_not_leak_it(
    pack: Pack, servers: McpServers, mark: str
) -> None:
    engine = engine_for(pack, ScriptedModel().script(ScriptedReply("unused")), servers)
    events: list[TurnEvent] = []

    async def consume() -> None:
        async for event in engine.run_turn("git status"):
            events.append(event)
            if type(event).__name__ == "ModeChanged":
                asyncio.get_running_loop().call_later(0.2, engine.cancel)

    await consume()
    assert type(events[-1]).__name__ == "TurnCancelled"
    await servers.close()
    for pid in marked_processes(mark):
        assert wait_until_gone(pid)


# --------------------------------------------------------------------------- guards and schemas


async def test_mcp_tools_pass_through_the_guards_like_built_ins(
    pack: Pack, servers: McpServers, git_repo: Path
) -> None:
    status = ("git__git_status", {"repo_path": str(git_repo)})
    model = ScriptedModel().script(
        ScriptedReply(tool_calls=[status, status, status]), ScriptedReply("Enough.")
    )
    events = await run(engine_for(pack, model, servers).run_turn("git status thrice"))
    outcomes = [event.outcome for event in of(events, ToolCallFinished)]
    assert outcomes == ["ok", "ok", "blocked"]
    assert json.loads(of(events, ToolCallFinished)[2].result)["type"] == "loop_detected"


async def test_a_mode_listing_a_server_nobody_configured_gets_a_note(
    write_pack: Callable[..., Path],
) -> None:
    folder = write_pack(modes={"chat": {"description": "Chat.", "mcp": ["ghost"]}})
    pack = load_pack(profiles_dir=folder)
    model = ScriptedModel().script(ScriptedReply("Hi."))
    engine = Engine(
        config=EngineConfig(default_model="scripted/test"),
        pack=pack,
        router=Router(pack, KeywordClassifier()),
        model=model,
        tools=ToolRegistry(),
    )
    events = await run(engine.run_turn("hello"))
    assert notes(events) == [
        "MCP server not configured here: ghost (add it to mcp_servers in config.yaml)"
    ]
    assert of(events, TurnFinished)


def test_argument_checks_accept_what_mcp_schemas_allow() -> None:
    from modes_tui.core.tools.registry import check_arguments

    schema = {
        "type": "object",
        "properties": {
            "when": {"type": ["string", "null"]},
            "count": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["when"],
    }
    assert check_arguments(schema, {"when": "today", "count": None}) is None
    assert check_arguments(schema, {"when": None}) is None
    assert check_arguments(schema, {"when": 3}) == (
        "argument 'when' must be one of the types string, null, got an integer"
    )
    # JSON Schema allows unlisted arguments unless the schema closes them
    assert check_arguments(schema, {"when": "x", "extra": 1}) is None
    closed = {**schema, "additionalProperties": False}
    assert "unknown argument 'extra'" in str(check_arguments(closed, {"when": "x", "extra": 1}))


async def test_a_server_that_never_answers_times_out_and_is_stopped(
    tmp_path: Path, mark: str
) -> None:
    # `sleep` reads nothing and writes nothing: a server stuck before its handshake
    silent = McpServer(
        "silent", "stdio", command="sleep", args=("60",), env={MARK: mark}, start_timeout=1.5
    )
    hub = McpServers({"silent": silent}, log_dir=tmp_path / "logs")
    started = time.monotonic()
    found = await hub.tools(["silent"])
    assert time.monotonic() - started < 15  # the timeout, then the SDK's bounded shutdown
    assert found.problems == (
        "MCP server 'silent' could not start: it did not start within 1.5 seconds; "
        "this turn runs without its tools",
    )
    assert marked_processes(mark) == []
    await hub.close()
