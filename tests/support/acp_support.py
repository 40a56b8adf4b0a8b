"""Driving the real `modes-tui acp` process over stdio with the SDK's client side.

`running_agent(...)` starts `python -m modes_tui ... acp ...` in its own home and working
folder and yields an `Editor`: the SDK's `ClientSideConnection` plus what the agent sent (every
session update, every permission question) and the answers the test scripts for those
questions. Everything is bounded: each wait has a timeout, and the process is killed if it
has not ended when the test leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acp import spawn_agent_process, text_block
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

if TYPE_CHECKING:
    from acp.interfaces import Client

REPO = Path(__file__).resolve().parents[2]
WAIT = 60.0
"""The longest any single step may take (a loaded machine is slow, never this slow)."""


HOLD = "hold"
"""An answer that never comes (until the agent gives up on the question)."""


@dataclass
class Question:
    """One `session/request_permission` the agent sent."""

    session_id: str
    tool_call: Any
    options: list[Any]


@dataclass
class Editor:
    """The client side: the connection, and what the agent sent to it."""

    conn: Any = None
    process: Any = None
    updates: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(session id, the update as JSON data with the protocol's names), in order."""
    questions: list[Question] = field(default_factory=list)
    answers: list[str | None] = field(default_factory=list)
    """Option ids to answer the next questions with, in order (None: cancelled). When it
    runs out, questions are answered with `default_answer`."""
    default_answer: str | None = "allow-once"
    on_update: Callable[[dict[str, Any]], None] | None = None
    stderr: Path | None = None
    """Where the agent's stderr goes (its logs and warnings)."""

    # the Client protocol ---------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        data = update.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.updates.append((session_id, data))
        if self.on_update is not None:
            self.on_update(data)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> RequestPermissionResponse:
        self.questions.append(Question(session_id, tool_call, options))
        answer = self.answers.pop(0) if self.answers else self.default_answer
        if answer == HOLD:  # the user has not answered yet: the editor waits
            await asyncio.sleep(WAIT)
        if answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    # helpers -----------------------------------------------------------------------

    async def start(self, cwd: Path, **new: Any) -> str:
        """initialize, then session/new in `cwd`; the session id."""
        await bounded(self.conn.initialize(protocol_version=1))
        created = await bounded(self.conn.new_session(cwd=str(cwd), mcp_servers=[], **new))
        return str(created.session_id)

    async def say(self, session_id: str, text: str) -> str:
        """One prompt; its stop reason."""
        response = await bounded(self.conn.prompt(session_id=session_id, prompt=[text_block(text)]))
        return str(response.stop_reason)

    def kinds(self, since: int = 0) -> list[str]:
        """The `sessionUpdate` kind of every update from index `since`."""
        return [data["sessionUpdate"] for _, data in self.updates[since:]]

    def text(self, kind: str = "agent_message_chunk", since: int = 0) -> str:
        """The text of the updates of one kind, joined."""
        return "".join(
            data["content"]["text"]
            for _, data in self.updates[since:]
            if data["sessionUpdate"] == kind and data["content"].get("type") == "text"
        )

    def modes(self, since: int = 0) -> list[str]:
        """The current_mode_update ids, in order."""
        return [
            data["currentModeId"]
            for _, data in self.updates[since:]
            if data["sessionUpdate"] == "current_mode_update"
        ]


async def bounded(work: Any, seconds: float = WAIT) -> Any:
    """Await `work`, failing the test (never hanging) after `seconds`."""
    async with asyncio.timeout(seconds):
        return await work


def agent_env(home: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "MODES_TUI_HOME": str(home),
        "PYTHONPATH": str(REPO),
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


@contextlib.asynccontextmanager
async def running_agent(
    home: Path,
    cwd: Path,
    *args: str,
    model: str | None = "scripted/echo",
    classifier: str = "keyword",
    command: tuple[str, ...] | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Editor]:
    """The agent process (`modes-tui --model MODEL acp --classifier CLASSIFIER ARGS`), with an
    `Editor` connected to it. `model` None: the settings' model (config.yaml). `command`
    replaces the Python arguments (`-c CODE`)."""
    log = home / "agent-stderr.log"
    editor = Editor(stderr=log)
    chosen = ("--model", model) if model is not None else ()
    argv = command or ("-m", "modes_tui", *chosen, "acp", "--classifier", classifier)
    errors = log.open("ab")
    async with contextlib.AsyncExitStack() as stack:
        stack.callback(errors.close)
        conn, process = await stack.enter_async_context(
            spawn_agent_process(
                cast("Client", editor),
                sys.executable,
                *argv,
                *args,
                env=env or agent_env(home),
                cwd=cwd,
                # the SDK waits this long after closing stdin before it terminates; its 2 s
                # default lost a race on a loaded CI machine (the agent exited as terminate()
                # was called: ProcessLookupError from inside the SDK)
                transport_kwargs={"stderr": errors.fileno(), "shutdown_timeout": 30.0},
            )
        )
        editor.conn, editor.process = conn, process
        yield editor  # leaving closes stdin, waits, then terminates (the SDK's escalation)
