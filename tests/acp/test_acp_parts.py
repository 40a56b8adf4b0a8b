"""The ACP edge's parts without a process: events as updates, the route note, the editor's
MCP servers, and the permission answers that last."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    EnvVariable,
    McpServerStdio,
    RequestPermissionResponse,
    SseMcpServer,
)

from modes_tui.acp.editor_servers import editor_servers, offer_to_modes
from modes_tui.acp.permissions import PermissionAsker
from modes_tui.acp.updates import route_note, translate
from modes_tui.core.engine.questions import ModeChoice, Question
from modes_tui.core.history.events import (
    ReasoningDelta,
    RouteDecided,
    ToolCallFinished,
    ToolCallRequested,
)
from modes_tui.core.model.wire import ToolCall
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.values.doubt import Unsure
from modes_tui.core.values.route import Decision, Route
from modes_tui.mcp.config import McpServer

COMMAND = ToolCall("call_1", "run_command", {"command": "ls"})


def kinds(updates: list[Any]) -> list[str]:
    return [update.session_update for update in updates]


def test_reasoning_is_a_thought_and_a_tool_call_its_start_and_its_result() -> None:
    [thought] = translate(ReasoningDelta("hmm"))
    assert (thought.session_update, thought.content.text) == ("agent_thought_chunk", "hmm")
    [start] = translate(ToolCallRequested(COMMAND, needs_confirmation=True))
    assert (start.title, start.kind, start.status) == ("Run `ls`", "execute", "pending")
    [done] = translate(ToolCallFinished(COMMAND, "blocked", '{"error": "no"}'))
    assert (done.status, done.content[0].content.text) == ("failed", '{"error": "no"}')


def test_the_route_note_says_mode_who_confidence_runner_up_and_why() -> None:
    route = Route(
        "code",
        "classifier",
        "a stack trace",
        decision=Decision("code", 0.82),
        runner_up="shell",
    )
    assert route_note(route) == "→ code · by classifier 0.82 · runner-up shell · a stack trace"
    mode, message = translate(RouteDecided(route))
    assert kinds([mode, message]) == ["current_mode_update", "agent_message_chunk"]
    assert mode.current_mode_id == "code"
    assert message.field_meta["modes-tui"]["route"]["runner_up"] == "shell"
    forced = Route("write", "caller", "forced by the caller")
    assert "mode set to write" in route_note(forced, "write")


def test_editor_servers_get_safe_names_and_reach_the_modes_with_tools(tmp_path: Path) -> None:
    given = [
        McpServerStdio(name="My Files!", command=sys.executable, args=["-V"], env=[]),
        McpServerStdio(name="git", command="uvx", args=[], env=[EnvVariable(name="A", value="b")]),
        SseMcpServer(type="sse", name="old", url="http://127.0.0.1:1/sse", headers=[]),
    ]
    configured = {"git": McpServer(name="git", transport="stdio", command="git-mcp")}
    found, notes = editor_servers(given, tmp_path, configured)
    assert list(found) == ["my-files", "git-editor"]
    assert found["git-editor"].env == {"A": "b"} and found["git-editor"].cwd == tmp_path
    assert not found["my-files"].trust  # asked about, unless a rule says otherwise
    assert notes == ["MCP server 'old' (sse) skipped: only stdio and http work"]
    pack = offer_to_modes(load_pack("default"), list(found))
    offered = {profile.name: profile.mcp for profile in pack.profiles}
    assert offered["code"] == ("my-files", "git-editor")
    assert offered["shell"] == ("my-files", "git-editor")
    assert offered["chat"] == ()  # a mode without tools stays without


class FakeEditor:
    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.asked: list[Any] = []
        self.options: list[list[Any]] = []

    async def __call__(self, session: str, call: Any, options: list[Any]) -> Any:
        self.asked.append(call)
        self.options.append(options)
        answer = self.answers.pop(0)
        if answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )


async def test_always_lasts_per_tool_and_mode_and_cancelled_is_no() -> None:
    mode = ["shell"]
    editor = FakeEditor("allow-always", "reject-always", None)
    asker = PermissionAsker("s1", editor, lambda: mode[0], Path("/work"))
    assert await asker.confirm(COMMAND, None) is True  # type: ignore[arg-type]
    assert await asker.confirm(COMMAND, None) is True  # type: ignore[arg-type]
    assert len(editor.asked) == 1
    mode[0] = "code"  # another mode: asked again
    assert await asker.confirm(COMMAND, None) is False  # type: ignore[arg-type]
    assert await asker.confirm(COMMAND, None) is False  # type: ignore[arg-type]
    question = Question("enter_mode", "Enter shell?", "The router wants shell.")
    assert await asker.ask(question) is False  # cancelled
    assert len(editor.asked) == 3
    assert editor.asked[-1].title == "Enter shell?"


async def test_a_broken_editor_answers_no() -> None:
    async def broken(*_: Any) -> Any:
        raise ConnectionError("gone")

    asker = PermissionAsker("s1", broken, lambda: "shell", Path("/work"))
    assert await asker.confirm(COMMAND, None) is False  # type: ignore[arg-type]


NEAR_MISS = ModeChoice(
    Unsure("chat", None, "code", 0.67, "threshold"),
    "python traceback after git pull",
    "Below confidence threshold",
    ("chat", "code", "shell"),
)


async def test_an_unsure_route_offers_the_modes_and_the_answer_picks_one() -> None:
    editor = FakeEditor("mode:code", "mode:nonsense", "allow-once", None)
    asker = PermissionAsker("s1", editor, lambda: "chat", Path("/work"))
    assert await asker.choose(NEAR_MISS) == "code"
    [options] = editor.options[:1]
    assert [o.option_id for o in options] == ["mode:chat", "mode:code", "mode:shell"]
    assert [o.name for o in options] == [
        "chat (the fallback)",
        "code 0.67 (the router's pick)",
        "shell",
    ]
    asked = editor.asked[0]
    assert asked.kind == "switch_mode" and "which mode answers" in asked.title
    assert "unsure: chat or code 0.67" in asked.content[0].content.text
    # an unknown mode, an answer that is not a mode, a cancel: the first offered runs
    assert await asker.choose(NEAR_MISS) is None
    assert await asker.choose(NEAR_MISS) is None
    assert await asker.choose(NEAR_MISS) is None


def test_the_route_note_says_when_the_router_was_unsure() -> None:
    unsure = Unsure("chat", None, "code", 0.67, "threshold")
    route = Route("chat", "fallback", "Below confidence threshold", unsure=unsure)
    assert route_note(route).endswith("Below confidence threshold · unsure: chat or code 0.67")
    chosen = Route(
        "code",
        "caller",
        "Chosen by you: the router was unsure (unsure: chat or code 0.67)",
        unsure=unsure,
    )
    assert route_note(chosen).count("unsure: chat or code 0.67") == 1


async def test_a_mode_choice_the_editor_cannot_answer_runs_the_first() -> None:
    async def broken(*_: Any) -> Any:
        raise ConnectionError("gone")

    asker = PermissionAsker("s1", broken, lambda: "chat", Path("/work"))
    assert await asker.choose(NEAR_MISS) is None


async def test_a_mode_choice_offers_each_mode_once_and_only_the_available_ones() -> None:
    editor = FakeEditor("mode:shell")
    asker = PermissionAsker("s1", editor, lambda: "chat", Path("/work"))
    odd = ModeChoice(Unsure("code", 0.46, "write", 0.41), "x", "r", ("chat", "code", "shell"))
    assert await asker.choose(odd) == "shell"
    assert [o.option_id for o in editor.options[0]] == ["mode:code", "mode:chat", "mode:shell"]


async def test_a_question_card_is_settled_with_its_answer_once_answered() -> None:
    """A question is no tool call of the engine's: nothing else would ever finish its card,
    and the editor would show it waiting after the turn has moved on."""
    sent: list[tuple[str, Any]] = []

    async def send(session_id: str, update: Any) -> None:
        sent.append((session_id, update))

    editor = FakeEditor(
        "allow-once", "reject-once", None, "allow-always", "mode:code", None, "reject-once"
    )
    asker = PermissionAsker("s1", editor, lambda: "chat", Path("/work"), send)
    budget = Question("budget", "Over budget?", "The turn would cost more than the budget.")
    assert await asker.ask(budget) is True
    assert await asker.ask(budget) is False
    assert await asker.ask(budget) is False  # cancelled
    assert await asker.ask(budget) is True  # allow always: asked...
    assert await asker.ask(budget) is True  # ...and then answered without asking
    assert await asker.choose(NEAR_MISS) == "code"
    assert await asker.choose(NEAR_MISS) is None  # cancelled
    settled = [(s, u.tool_call_id, u.status, u.content[-1].content.text) for s, u in sent]
    # the update replaces the card's content: the question stays above the answer
    question_texts = [q.content[0].content.text for q in editor.asked]
    assert [u.content[0].content.text for _, u in sent] == question_texts[:6]
    ids = [q.tool_call_id for q in editor.asked]
    assert settled == [
        ("s1", ids[0], "completed", "Yes"),
        ("s1", ids[1], "completed", "No"),
        ("s1", ids[2], "failed", "No answer"),
        ("s1", ids[3], "completed", "Yes"),
        ("s1", ids[4], "completed", "code answers"),
        ("s1", ids[5], "failed", "No answer"),
    ]
    assert len(set(ids)) == 6 and all(u.session_update == "tool_call_update" for _, u in sent)
    # a tool call is the engine's to finish (ToolCallFinished): confirm settles nothing
    assert await asker.confirm(COMMAND, None) is False  # type: ignore[arg-type]
    assert len(sent) == 6


async def test_a_turn_cancelled_while_a_question_is_open_settles_its_card_and_stops() -> None:
    sent: list[Any] = []

    async def send(_: str, update: Any) -> None:
        sent.append(update)

    async def never_answers(*_: Any) -> Any:
        await asyncio.Event().wait()

    for asking in ("ask", "choose"):
        sent.clear()
        asker = PermissionAsker("s1", never_answers, lambda: "chat", Path("/work"), send)
        question = Question("enter_mode", "Enter shell?", "The router wants shell.")
        call = asker.ask(question) if asking == "ask" else asker.choose(NEAR_MISS)
        task = asyncio.ensure_future(call)
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        [update] = sent
        assert (update.status, update.content[-1].content.text) == ("failed", "No answer"), asking
