"""MCP servers against real servers nobody here wrote: mcp-server-time and mcp-server-git
from PyPI (started as `python -m mcp_server_time` / `-m mcp_server_git`), plus a tiny
streamable-HTTP server built with the SDK's own server API (tests/mcp_http_server.py).

The model is scripted; everything between it and the servers is real: the engine, the
guards, the SDK's stdio and HTTP transports, the servers' processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.classifiers.keyword import KeywordClassifier
from modes_tui.core.conversation import ToolCall
from modes_tui.core.engine import Engine
from modes_tui.core.events import RequestBuilt, ToolCallFinished, TurnEvent, TurnFinished
from modes_tui.core.profiles import Pack, load_pack
from modes_tui.core.routing import Router
from modes_tui.core.tools import Tool, ToolRegistry
from modes_tui.llm.base import ModelRequest
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.mcp.config import McpServer
from modes_tui.mcp.servers import McpServers, tool_name

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-c", "import sys; from modes_tui.cli import main; sys.exit(main())"]
MARK = "MODES_TUI_TEST_MCP_MARK"
"""An environment variable every server started here carries, to find its processes."""


# --------------------------------------------------------------------------- processes


def marked_processes(mark: str) -> list[int]:
    """Pids of live (or zombie) processes whose environment carries `MARK=mark`."""
    found: list[int] = []
    needle = f"{MARK}={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def wait_until_gone(pid: int, timeout: float = 10.0) -> bool:
    """True once /proc no longer lists `pid`: dead *and* reaped, so not a zombie."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists():
            return True
        time.sleep(0.02)
    return False


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A real git repository with one commit, one modified file and one new file."""
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
            cwd=repo,
            check=True,
            capture_output=True,
        )

    git("init", "-q")
    (repo / "tracked.txt").write_text("one\n")
    git("add", "tracked.txt")
    git("commit", "-q", "-m", "first")
    (repo / "tracked.txt").write_text("two\n")
    (repo / "brand-new.txt").write_text("hello\n")
    return repo


@pytest.fixture
def mark() -> str:
    return uuid.uuid4().hex


def stdio(name: str, module: str, *args: str, mark: str, trust: bool = False) -> McpServer:
    return McpServer(
        name=name,
        transport="stdio",
        command=sys.executable,
        args=("-m", module, *args),
        env={MARK: mark},
        trust=trust,
        start_timeout=60.0,
    )


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
        pack=pack,
        router=Router(pack, KeywordClassifier()),
        model=model,
        default_model="scripted/test",
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
    assert all(wait_until_gone(pid, timeout=1.0) for pid in pids)
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
        assert wait_until_gone(pid, timeout=1.0)


# --------------------------------------------------------------------------- the CLI


def test_chat_plain_starts_the_server_for_its_mode_and_stops_it_at_exit(
    write_pack: Callable[..., Path], modes_home: Path, mark: str
) -> None:
    config = modes_home / "config" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(
        json.dumps(
            {
                "mcp_servers": {
                    "time": {
                        "command": sys.executable,
                        "args": ["-m", "mcp_server_time"],
                        "env": {MARK: mark},
                    }
                }
            }
        )
    )
    clock = dict(MODES)
    del clock["repo"], clock["broken"]
    folder = write_pack(router={"classifier": "keyword", "fallback": "chat"}, modes=clock)
    env = {**os.environ, "MODES_TUI_HOME": str(modes_home), "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [*CLI, "--model", "scripted/echo", "chat", "--plain", "--json", "--profiles", str(folder)],
        input="what time is it\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    built = [e for e in events if e["type"] == "request_built"]
    offered = [tool["function"]["name"] for tool in built[0]["request"]["tools"]]
    assert offered == ["time__get_current_time", "time__convert_time"]
    assert marked_processes(mark) == []  # the REPL stopped the server before exiting


def test_tools_verb_lists_each_modes_tools_with_their_source(
    write_pack: Callable[..., Path], modes_home: Path, git_repo: Path, mark: str
) -> None:
    config = modes_home / "config" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(
        json.dumps(
            {
                "mcp_servers": {
                    "git": {
                        "command": sys.executable,
                        "args": ["-m", "mcp_server_git", "--repository", str(git_repo)],
                        "env": {MARK: mark},
                        "trust": True,
                    },
                    "nope": {"command": "no-such-mcp-server-here"},
                }
            }
        )
    )
    modes = {
        "chat": {"description": "Everyday chat."},
        "repo": {"description": "Git work.", "tools": ["read_file"], "mcp": ["git"]},
        "broken": {"description": "Missing server.", "mcp": ["nope"]},
    }
    folder = write_pack(router={"classifier": "keyword", "fallback": "chat"}, modes=modes)
    env = {**os.environ, "MODES_TUI_HOME": str(modes_home), "PYTHONPATH": str(REPO)}
    command = [*CLI, "tools", "--profiles", str(folder)]

    out = subprocess.run(
        [*command, "--mode", "repo", "--json"], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    (mode,) = json.loads(out.stdout)["modes"]
    sources = {tool["name"]: (tool["source"], tool["confirm"]) for tool in mode["tools"]}
    assert sources["read_file"] == ("built-in", False)
    assert sources["git__git_status"] == ("mcp:git", False)
    assert mode["problems"] == []

    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 1  # a server that cannot start is a failure scripts can see
    assert "read_file  " in out.stdout and "[mcp:git]" in out.stdout
    assert (
        "! MCP server 'nope' could not start: command 'no-such-mcp-server-here' not found"
        in out.stdout
    )
    assert marked_processes(mark) == []

    out = subprocess.run(
        [*command, "--mode", "nosuch"], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 1 and "unknown mode 'nosuch'" in out.stderr


# --------------------------------------------------------------------------- streamable HTTP


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "mcp_http_server.py"), str(port), "s3cret"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the test server did not start: {process.stderr}") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_a_streamable_http_server_gets_the_configured_headers(
    http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARITH_TOKEN", "s3cret")
    good = McpServer(
        "arith", "http", url=http_server, headers={"X-Token": "${ARITH_TOKEN}"}, trust=True
    )
    bad = McpServer("wrong", "http", url=http_server, headers={"X-Token": "guess"})
    hub = McpServers({"arith": good, "wrong": bad})
    try:
        found = await hub.tools(["arith", "wrong"])
        (add,) = found.tools
        assert (add.name, add.source, add.needs_confirmation) == ("arith__add", "mcp:arith", False)
        assert await add.invoke({"a": 2, "b": 40}) == "42"
        (problem,) = found.problems
        assert problem.startswith("MCP server 'wrong' could not start: ")
        assert "(HTTP 401 Unauthorized from http://127.0.0.1:" in problem
    finally:
        await hub.close()


async def test_a_header_naming_an_unset_variable_is_a_clear_start_failure(
    http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARITH_TOKEN", raising=False)
    hub = McpServers(
        {
            "arith": McpServer(
                "arith", "http", url=http_server, headers={"X-Token": "${ARITH_TOKEN}"}
            )
        }
    )
    try:
        found = await hub.tools(["arith"])
    finally:
        await hub.close()
    assert found.problems == (
        "MCP server 'arith' could not start: mcp_servers.arith.headers.X-Token uses "
        "${ARITH_TOKEN}, which is not set; set ARITH_TOKEN or edit it; this turn runs without "
        "its tools",
    )


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
        pack=pack,
        router=Router(pack, KeywordClassifier()),
        model=model,
        default_model="scripted/test",
        tools=ToolRegistry(),
    )
    events = await run(engine.run_turn("hello"))
    assert notes(events) == [
        "MCP server not configured here: ghost (add it to mcp_servers in config.yaml)"
    ]
    assert of(events, TurnFinished)


def test_argument_checks_accept_what_mcp_schemas_allow() -> None:
    from modes_tui.core.tools import check_arguments

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
