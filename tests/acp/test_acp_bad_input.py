"""`modes-tui acp` and bad input: each bad message gets a JSON-RPC error and the agent serves
on; closing stdin ends the agent, with the running turn's partial answer in its log.

These tests write raw lines (a malformed line cannot be sent through the SDK's client), and
read the agent's answers line by line, each read bounded in time.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.paths import app_dirs
from modes_tui.store.session_reader import load_session
from tests.support.acp_support import REPO, agent_env, bounded

LIMIT = 1_000_000


class RawAgent:
    """The agent process with its stdin and stdout as raw lines."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 100

    async def send_line(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        await self.process.stdin.drain()

    async def request(self, method: str, params: Any) -> int:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        await self.send_line(json.dumps(message).encode())
        return self.next_id

    async def answer(self, request_id: int | None) -> dict[str, Any]:
        """The response with `request_id` (None: an error about an unreadable message);
        notifications on the way are skipped."""
        assert self.process.stdout is not None
        while True:
            line = await bounded(self.process.stdout.readline(), 60)
            assert line, "the agent closed its stdout"
            message = json.loads(line)  # every line on stdout is protocol
            if "method" not in message and message.get("id") == request_id:
                return dict(message)


async def start(home: Path, cwd: Path, model: str = "scripted/echo") -> RawAgent:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "modes_tui", "--model", model, "acp", "--classifier", "keyword"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=(home / "agent-stderr.log").open("wb"),
        env=agent_env(home),
        cwd=REPO,
        limit=16 * 1024 * 1024,
    )
    return RawAgent(process)


async def new_session(agent: RawAgent, cwd: Path) -> str:
    await agent.answer(await agent.request("initialize", {"protocolVersion": 1}))
    made = await agent.answer(
        await agent.request("session/new", {"cwd": str(cwd), "mcpServers": []})
    )
    return str(made["result"]["sessionId"])


def prompt(session: str, text: str) -> dict[str, Any]:
    return {"sessionId": session, "prompt": [{"type": "text", "text": text}]}


@pytest.fixture
async def agent(modes_home: Path, tmp_path: Path) -> Any:
    started = await start(modes_home, tmp_path)
    yield started
    if started.process.returncode is None:
        started.process.kill()
        await started.process.wait()


async def test_each_bad_message_gets_an_error_and_the_agent_keeps_serving(
    agent: RawAgent, tmp_path: Path
) -> None:
    session = await new_session(agent, tmp_path)

    await agent.send_line(b"{this is not json")
    assert (await agent.answer(None))["error"]["code"] == -32700

    await agent.send_line(b"[1, 2, 3]")
    assert (await agent.answer(None))["error"]["code"] == -32600

    unknown = await agent.answer(await agent.request("session/teleport", {}))
    assert unknown["error"]["code"] == -32601

    stray = await agent.answer(await agent.request("session/prompt", prompt("no-such", "hi")))
    assert stray["error"]["code"] == -32602
    assert "no session 'no-such'" in stray["error"]["data"]["details"]

    huge = await agent.answer(
        await agent.request("session/prompt", prompt(session, "x" * (LIMIT + 1)))
    )
    assert huge["error"]["code"] == -32602
    assert "over the limit of 1000000" in huge["error"]["data"]["details"]

    relative = await agent.answer(
        await agent.request("session/new", {"cwd": "not/absolute", "mcpServers": []})
    )
    assert relative["error"]["code"] == -32602
    assert "not an absolute path" in relative["error"]["data"]["details"]

    wrong = await agent.answer(await agent.request("session/prompt", {"sessionId": session}))
    assert wrong["error"]["code"] == -32602  # the prompt is missing

    fine = await agent.answer(
        await agent.request("session/prompt", prompt(session, "still there?"))
    )
    assert fine["result"]["stopReason"] == "end_turn"
    users = [r for r in load_session(session, app_dirs()).records if r["type"] == "user"]
    assert [r["content"] for r in users] == ["still there?"]  # nothing refused was recorded


async def test_closing_stdin_ends_the_agent_and_the_partial_answer_is_logged(
    modes_home: Path, tmp_path: Path
) -> None:
    agent = await start(modes_home, tmp_path, model="scripted/slow")
    try:
        session = await new_session(agent, tmp_path)
        await agent.request("session/prompt", prompt(session, "a long story please"))
        assert agent.process.stdout is not None
        while b"agent_message_chunk" not in await bounded(agent.process.stdout.readline(), 60):
            pass
        while b"0002" not in await bounded(agent.process.stdout.readline(), 60):
            pass  # the answer is streaming
        assert agent.process.stdin is not None
        agent.process.stdin.close()
        code = await bounded(agent.process.wait(), 10)  # a few seconds, not the whole answer
    finally:
        if agent.process.returncode is None:
            agent.process.kill()
            await agent.process.wait()
    assert code == 0
    records = load_session(session, app_dirs()).records
    assert [r["content"] for r in records if r["type"] == "user"] == ["a long story please"]
    cancels = [r for r in records if r.get("event") == "cancel"]
    assert cancels and cancels[0]["partial"].startswith("0001 ")


def test_a_broken_config_is_said_on_stderr_and_stdout_stays_empty(modes_home: Path) -> None:
    from tests.support.cli_support import run_cli

    settings = app_dirs().settings_file
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text("default_model: [not, a, name]\nno_such_key: 1\n")
    done = run_cli("", "acp", home=modes_home)
    assert done.returncode == 1
    assert done.stdout == ""  # an editor reading the protocol reads nothing broken
    assert "config.yaml" in done.stderr
