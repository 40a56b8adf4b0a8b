"""The turn engine, driven through litellm's real streaming code by the fake provider.

`ScriptedModel` stands in only where litellm is not the point (slow tools, guards).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.control_setting import ControlReading
from modes_tui.core.engine.config import EngineConfig
from modes_tui.core.engine.engine import Engine
from modes_tui.core.engine.guards import Limits
from modes_tui.core.engine.mode_note import mode_change_note
from modes_tui.core.engine.request import CUT_SHORT
from modes_tui.core.engine.verdicts import Answer, Block, Cancel, PendingCall
from modes_tui.core.history.events import (
    ModeChanged,
    ReasoningDelta,
    RequestBuilt,
    RouteDecided,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    TurnCancelled,
    TurnEvent,
    TurnFailed,
    TurnFinished,
    Usage,
)
from modes_tui.core.model.ports import ModelCapabilities
from modes_tui.core.model.wire import ToolCall
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.core.tools.registry import Tool, ToolRegistry, tool
from modes_tui.core.tools.toolbox import default_registry
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.llm.litellm_import import import_litellm
from modes_tui.llm.litellm_model import LiteLLMChatModel
from tests.support.engine_support import with_config
from tests.support.fake_provider import FakeProvider, Reply

MODES: dict[str, dict[str, Any]] = {
    "chat": {"description": "Everyday chat.", "keywords": ["hello"], "temperature": 0.7},
    "code": {
        "description": "Code questions.",
        "keywords": ["python", "file"],
        "thinking": "high",
        "tools": ["read_file", "list_files", "search_files"],
        "history": {"last": 30},
    },
    "shell": {
        "description": "Terminal commands.",
        "keywords": ["command", "git"],
        "tools": ["run_command"],
    },
    "think": {
        "description": "Hard problems.",
        "keywords": ["ponder"],
        "model": "fake/thinker",
        "thinking": "high",
    },
    "slow": {"description": "Slow tools.", "keywords": ["slow"], "tools": ["read_file"]},
}
PROMPTS = {
    "system.md": "BASE PROMPT.{% if mode.name != 'off' %} Mode: {{ mode.name }}.{% endif %}",
    "chat/instructions.md": "CHAT INSTRUCTIONS",
    "code/instructions.md": "CODE INSTRUCTIONS in {{ cwd }}",
}


@dataclass
class Recorder:
    """A session writer that keeps records in a list."""

    records: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)

    def record(self, type: str, turn: int, **fields: Any) -> None:
        json.dumps(fields)  # every record must be plain data
        self.records.append((type, turn, fields))

    def types(self) -> list[str]:
        return [r[0] for r in self.records]

    def of(self, type: str) -> list[dict[str, Any]]:
        return [r[2] for r in self.records if r[0] == type]


@dataclass
class Control:
    """A control source whose setting the test changes."""

    mode: str = "auto"
    warning: str | None = None

    def read(self) -> ControlReading:
        return ControlReading(self.mode, self.warning)


@dataclass
class Confirm:
    """Says yes or no, and remembers what it was asked."""

    answer: bool = True
    asked: list[str] = field(default_factory=list)

    async def confirm(self, call: ToolCall, tool: Tool) -> bool:
        self.asked.append(f"{tool.name}:{call.arguments.get('command')}")
        return self.answer


@pytest.fixture
def pack(write_pack: Callable[..., Path]) -> Pack:
    folder = write_pack(
        router={"classifier": "keyword", "fallback": "chat"}, modes=MODES, prompts=PROMPTS
    )
    return load_pack(profiles_dir=folder)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("beta\n")
    (tmp_path / "secret.txt").write_text("top secret\n")
    return root


def make_engine(pack: Pack, workdir: Path, model: Any = None, **kwargs: Any) -> Engine:
    kwargs.setdefault("session", Recorder())
    # Checkpoints are time-based: a test that counts records must not get one because the
    # machine was slow; the checkpoint tests set their own interval.
    kwargs.setdefault("checkpoint_seconds", 3600.0)
    return Engine(
        **with_config(
            pack=pack,
            router=Router(pack, KeywordClassifier()),
            model=model if model is not None else LiteLLMChatModel(offline=True),
            default_model="fake/plain",
            cwd=workdir,
            **kwargs,
        )
    )


async def run(events: AsyncIterator[TurnEvent]) -> list[TurnEvent]:
    return [event async for event in events]


def kinds(events: Sequence[TurnEvent]) -> list[str]:
    collapsed: list[str] = []
    for event in events:
        name = type(event).__name__
        if name in ("TextDelta", "ReasoningDelta") and collapsed and collapsed[-1] == name:
            continue
        collapsed.append(name)
    return collapsed


def of(events: Sequence[TurnEvent], cls: type[Any]) -> list[Any]:
    return [event for event in events if isinstance(event, cls)]


def wire_is_consistent(messages: Sequence[Any]) -> bool:
    """Every tool call in a request has a result, and every result answers a call."""
    asked = [c["id"] for m in messages if m.get("tool_calls") for c in m["tool_calls"]]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    return sorted(asked) == sorted(answered)


# --------------------------------------------------------------------------- a plain turn


async def test_a_plain_turn_streams_records_and_stamps_the_answer(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text=["Hel", "lo ", "there"], usage=(20, 4)))
    session = Recorder()
    engine = make_engine(pack, workdir, session=session)
    events = await run(engine.run_turn("hello"))

    assert kinds(events) == [
        "RouteDecided",
        "ModeChanged",
        "RequestBuilt",
        "TextDelta",
        "Usage",
        "TurnFinished",
    ]
    assert "".join(e.text for e in of(events, TextDelta)) == "Hello there"
    route = of(events, RouteDecided)[0]
    assert route.route.mode_name == "chat" and route.setting == "auto" and route.warnings == ()
    assert of(events, ModeChanged)[0] == ModeChanged(None, "chat")
    usage = of(events, Usage)[0]
    assert (usage.model, usage.prompt_tokens, usage.completion_tokens) == ("fake/plain", 20, 4)
    assert usage.cost == pytest.approx(20e-6 + 8e-6)

    message = of(events, TurnFinished)[0].message
    assert (message.content, message.mode, message.model, message.thinking) == (
        "Hello there",
        "chat",
        "fake/plain",
        "off",
    )
    assert engine.turn == 1 and engine.routes[0].mode_name == "chat"
    assert [m.role for m in engine.conversation] == ["user", "assistant"]

    built = of(events, RequestBuilt)[0]
    system = built.request.messages[0]
    assert system == {"role": "system", "content": "BASE PROMPT. Mode: chat.\n\nCHAT INSTRUCTIONS"}
    assert built.request.messages[1:] == ({"role": "user", "content": "hello"},)
    assert built.request.tools == () and built.request.temperature == 0.7
    assert fake_llm.seen[0].params["temperature"] == 0.7
    assert "reasoning_effort" not in fake_llm.seen[0].params

    assert session.types() == ["user", "route", "request", "assistant"]
    assert all(turn == 1 for _, turn, _ in session.records)
    assert session.of("user")[0] == {"content": "hello"}
    assert session.of("route")[0]["route"]["mode_name"] == "chat"
    assert session.of("request")[0]["round"] == 1
    assistant = session.of("assistant")[0]
    assert assistant["message"]["mode"] == "chat" and assistant["message"]["model"] == "fake/plain"
    assert assistant["turn_usage"] == {
        "prompt_tokens": 20,
        "completion_tokens": 4,
        "cost": pytest.approx(28e-6),
        "calls": 1,
    }


async def test_mode_instructions_never_enter_the_history(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text="one"), Reply(text="two"))
    engine = make_engine(pack, workdir)
    await run(engine.run_turn("hello"))
    await run(engine.run_turn("hello again"))
    second = fake_llm.seen[1].messages
    assert sum("CHAT INSTRUCTIONS" in str(m["content"]) for m in second) == 1
    assert all("INSTRUCTIONS" not in m.content for m in engine.conversation)
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]


# --------------------------------------------------------------------------- tools


async def test_a_turn_with_two_tool_calls(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(
        Reply(
            text="Looking.",
            tool_calls=[("read_file", {"path": "a.txt"}), ("list_files", {})],
            usage=(30, 6),
        ),
        Reply(text="a.txt says alpha.", usage=(50, 5)),
    )
    session = Recorder()
    engine = make_engine(pack, workdir, session=session)
    events = await run(engine.run_turn("what is in the python file"))

    assert kinds(events) == [
        "RouteDecided",
        "ModeChanged",
        "RequestBuilt",
        "TextDelta",
        "Usage",
        "ToolCallRequested",
        "ToolCallFinished",
        "ToolCallRequested",
        "ToolCallFinished",
        "RequestBuilt",
        "TextDelta",
        "Usage",
        "TurnFinished",
    ]
    first = of(events, RequestBuilt)[0].request
    assert [t.name for t in first.tools] == ["read_file", "list_files", "search_files"]
    finished = of(events, ToolCallFinished)
    assert [(f.call.name, f.outcome) for f in finished] == [
        ("read_file", "ok"),
        ("list_files", "ok"),
    ]
    assert finished[0].result == "alpha\n"
    assert "b.txt" in finished[1].result
    assert not any(r.needs_confirmation for r in of(events, ToolCallRequested))

    second = fake_llm.seen[1].messages
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool", "tool"]
    assert second[2]["tool_calls"][0]["function"]["name"] == "read_file"
    assert second[3]["tool_call_id"] == second[2]["tool_calls"][0]["id"]
    assert second[3]["content"] == "alpha\n"
    assert of(events, RequestBuilt)[1].round == 2

    assert session.types() == [
        "user",
        "route",
        "request",
        "assistant",
        "tool_result",
        "tool_result",
        "request",
        "assistant",
    ]
    tool_calls_record, final_record = session.of("assistant")
    assert (
        tool_calls_record["usage"]["prompt_tokens"] == 30 and "turn_usage" not in tool_calls_record
    )
    assert final_record["turn_usage"]["prompt_tokens"] == 80
    assert final_record["turn_usage"]["calls"] == 2
    assert session.of("tool_result")[0]["outcome"] == "ok"
    assert [m.role for m in engine.conversation] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert of(events, TurnFinished)[0].message.content == "a.txt says alpha."


async def test_a_declined_command_is_cancelled_and_never_runs(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(
        Reply(text="", tool_calls=[("run_command", {"command": "touch ran.txt"})]),
        Reply(text="OK, I did not run it."),
    )
    confirm = Confirm(answer=False)
    engine = make_engine(pack, workdir, confirm=confirm)
    events = await run(engine.run_turn("run a git command"))

    requested = of(events, ToolCallRequested)[0]
    assert requested.needs_confirmation is True
    finished = of(events, ToolCallFinished)[0]
    assert finished.outcome == "cancelled"
    assert json.loads(finished.result) == {
        "cancelled": True,
        "reason": "the user declined to run this; do not retry it, ask what they would like instead",
    }
    assert confirm.asked == ["run_command:touch ran.txt"]
    assert not (workdir / "ran.txt").exists()
    assert json.loads(fake_llm.seen[1].messages[-1]["content"])["cancelled"] is True


async def test_a_confirmed_command_runs_and_asks_every_time(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(
        Reply(text="", tool_calls=[("run_command", {"command": "echo hi > ran.txt"})]),
        Reply(text="", tool_calls=[("run_command", {"command": "cat ran.txt"})]),
        Reply(text="It says hi."),
    )
    confirm = Confirm(answer=True)
    engine = make_engine(pack, workdir, confirm=confirm)
    events = await run(engine.run_turn("run a command"))
    results = [json.loads(f.result) for f in of(events, ToolCallFinished)]
    assert results[1] == {"exit_code": 0, "output": "hi\n"}
    assert len(confirm.asked) == 2


async def test_without_a_confirmer_a_command_is_cancelled(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(
        Reply(text="", tool_calls=[("run_command", {"command": "ls"})]), Reply(text="ok")
    )
    events = await run(make_engine(pack, workdir).run_turn("run a command"))
    finished = of(events, ToolCallFinished)[0]
    assert finished.outcome == "cancelled" and "nobody can confirm" in finished.result


class PolicyGuard:
    """Blocks read_file of b.txt, cancels list_files, answers search_files."""

    def __init__(self) -> None:
        self.seen: list[PendingCall] = []

    def check(self, pending: PendingCall) -> Block | Cancel | Answer | None:
        self.seen.append(pending)
        if pending.call.name == "read_file" and pending.call.arguments.get("path") == "b.txt":
            return Block("b.txt is off limits", type="policy_error")
        if pending.call.name == "list_files":
            return Cancel("listing needs approval; ask the user first")
        if pending.call.name == "search_files":
            return Answer({"matches": ["cached.txt:1: alpha"]})
        return None


async def test_a_guard_can_block_cancel_answer_or_let_a_call_run(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(
        Reply(
            text="",
            tool_calls=[
                ("read_file", {"path": "b.txt"}),
                ("list_files", {}),
                ("search_files", {"pattern": "alpha"}),
                ("read_file", {"path": "a.txt"}),
            ],
        ),
        Reply(text="done"),
    )
    guard = PolicyGuard()
    engine = make_engine(pack, workdir, guards=[guard])
    events = await run(engine.run_turn("python file please"))
    finished = of(events, ToolCallFinished)
    assert [f.outcome for f in finished] == ["blocked", "cancelled", "answered", "ok"]
    assert json.loads(finished[0].result) == {
        "error": "b.txt is off limits",
        "type": "policy_error",
    }
    assert json.loads(finished[1].result)["reason"] == "listing needs approval; ask the user first"
    assert json.loads(finished[2].result) == {"matches": ["cached.txt:1: alpha"]}
    assert finished[3].result == "alpha\n"
    assert [len(p.earlier) for p in guard.seen] == [0, 1, 2, 3]
    assert guard.seen[0].turn == 1 and guard.seen[0].round == 1
    assert guard.seen[0].messages[0].content == "python file please"
    tool_messages = [m for m in fake_llm.seen[1].messages if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == [f.result for f in finished]


async def test_the_loop_guard_blocks_the_third_identical_call(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    same = ("read_file", {"path": "a.txt"})
    fake_llm.script(
        Reply(text="", tool_calls=[same]),
        Reply(text="", tool_calls=[same]),
        Reply(text="", tool_calls=[same, ("read_file", {"path": "b.txt"})]),
        Reply(text="I keep reading the same file."),
    )
    events = await run(make_engine(pack, workdir).run_turn("python file"))
    finished = of(events, ToolCallFinished)
    assert [f.outcome for f in finished] == ["ok", "ok", "blocked", "ok"]
    blocked = json.loads(finished[2].result)
    assert blocked["type"] == "loop_detected" and "already called 2 times" in blocked["error"]
    assert of(events, TurnFinished)


async def test_the_tool_budget_blocks_calls_past_the_limit(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(
        Reply(
            text="",
            tool_calls=[("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"})],
        ),
        Reply(text="", tool_calls=[("list_files", {})]),
        Reply(text="enough"),
    )
    engine = make_engine(pack, workdir, limits=Limits(tool_calls=2))
    events = await run(engine.run_turn("python file"))
    finished = of(events, ToolCallFinished)
    assert [f.outcome for f in finished] == ["ok", "ok", "blocked"]
    assert json.loads(finished[2].result)["type"] == "budget_spent"


async def test_a_tool_that_raises_reaches_the_model_as_a_generic_error(
    pack: Pack, workdir: Path, fake_llm: FakeProvider, caplog: pytest.LogCaptureFixture
) -> None:
    @tool(name="read_file")
    def broken(path: str) -> str:
        """Read a file."""
        raise RuntimeError(f"disk on fire at /secret/{path}")

    fake_llm.script(
        Reply(text="", tool_calls=[("read_file", {"path": "a.txt"})]), Reply(text="sorry")
    )
    engine = make_engine(pack, workdir, tools=ToolRegistry([broken]))
    with caplog.at_level(logging.ERROR, logger="modes_tui.engine"):
        events = await run(engine.run_turn("python file"))
    finished = of(events, ToolCallFinished)[0]
    assert finished.outcome == "error"
    assert json.loads(finished.result) == {
        "error": "the tool failed unexpectedly (a fault in the tool, not in the call); "
        "try another way to get what you need"
    }
    assert "disk on fire" not in json.dumps(fake_llm.seen[1].messages)
    assert "disk on fire at /secret/a.txt" in caplog.text
    assert of(events, RequestBuilt)[0].notes == (
        "thinking n/a for fake/plain",
        "tools not available here: list_files, search_files",
    )


async def test_a_tool_error_is_shown_to_the_model(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    (workdir / "escape.txt").symlink_to(workdir.parent / "secret.txt")
    fake_llm.script(
        Reply(
            text="",
            tool_calls=[
                ("read_file", {"path": "../secret.txt"}),
                ("read_file", {"path": "escape.txt"}),
            ],
        ),
        Reply(text="I cannot read those."),
    )
    events = await run(make_engine(pack, workdir).run_turn("python file"))
    outside, link = of(events, ToolCallFinished)
    assert outside.outcome == "error" and "outside the working directory" in outside.result
    assert link.outcome == "error" and "symbolic link that leads outside" in link.result
    assert "top secret" not in json.dumps(fake_llm.seen[1].messages)


async def test_odd_paths_reach_the_model_as_tool_errors_without_a_traceback(
    pack: Pack, workdir: Path, fake_llm: FakeProvider, caplog: pytest.LogCaptureFixture
) -> None:
    (workdir / "loop").symlink_to("loop")
    odd = ["a" * 5000, "a\0b", "loop"]
    fake_llm.script(
        Reply(text="", tool_calls=[("read_file", {"path": path}) for path in odd]),
        Reply(text="Those paths do not work."),
    )
    with caplog.at_level(logging.ERROR, logger="modes_tui"):
        events = await run(make_engine(pack, workdir).run_turn("python file"))
    long, nul, loop = of(events, ToolCallFinished)
    assert long.outcome == "error" and "is 5000 characters long" in long.result
    assert nul.outcome == "error" and "contains a NUL character" in nul.result
    assert loop.outcome == "error" and "a link loop" in loop.result
    assert not caplog.records  # nothing logged, so no traceback on stderr


async def test_invalid_tool_arguments_are_answered_with_an_error(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(
        Reply(
            text="",
            tool_calls=[
                ("read_file", '{"path": '),
                ("read_file", {"file": "a.txt"}),
                ("delete_everything", {}),
            ],
        ),
        Reply(text="let me fix that"),
    )
    events = await run(make_engine(pack, workdir).run_turn("python file"))
    broken, wrong, unknown = of(events, ToolCallFinished)
    assert (
        broken.outcome == "error"
        and "invalid arguments: arguments are not valid JSON" in broken.result
    )
    assert wrong.outcome == "error"
    assert "missing required argument 'path'" in wrong.result
    assert "unknown argument 'file'" in wrong.result
    assert unknown.outcome == "error"
    assert "no tool called 'delete_everything'" in unknown.result
    assert "read_file, list_files, search_files" in unknown.result
    assert wire_is_consistent(fake_llm.seen[1].messages)


async def test_tool_output_is_capped(pack: Pack, workdir: Path, fake_llm: FakeProvider) -> None:
    (workdir / "long.txt").write_text("x" * 5000)
    fake_llm.script(
        Reply(text="", tool_calls=[("read_file", {"path": "long.txt"})]), Reply(text="ok")
    )
    engine = make_engine(pack, workdir, limits=Limits(tool_output_chars=100))
    events = await run(engine.run_turn("python file"))
    result = of(events, ToolCallFinished)[0].result
    assert result.startswith("x" * 100 + "\n[… 4900 characters cut")
    assert fake_llm.seen[1].messages[-1]["content"] == result


async def test_the_round_trip_limit_stops_a_model_that_keeps_calling_tools(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(
        Reply(text="", tool_calls=[("read_file", {"path": "a.txt"})]),
        Reply(text="more", tool_calls=[("read_file", {"path": "b.txt"})]),
        Reply(text="never asked"),
    )
    session = Recorder()
    engine = make_engine(pack, workdir, session=session, limits=Limits(model_rounds=2))
    events = await run(engine.run_turn("python file"))
    assert len(fake_llm.seen) == 2
    finished = of(events, ToolCallFinished)
    assert [f.outcome for f in finished] == ["ok", "blocked"]
    assert "limit of 2 model calls" in finished[1].result
    failed = of(events, TurnFailed)[0]
    assert failed.kind == "round_limit" and failed.partial == "" and not failed.retryable
    record = session.of("assistant")[-1]
    assert record["error"].startswith("stopped after 2 model calls")
    assert record["message"]["content"] == ""  # "more" is stored with its tool call already
    assert record["hint"] == failed.hint and record["retryable"] is False

    fake_llm.script(Reply(text="fine"))
    await run(engine.run_turn("hello"))
    assert wire_is_consistent(fake_llm.seen[2].messages)


# --------------------------------------------------------------------------- modes


async def test_a_mode_change_leaves_a_marker_in_the_next_request_only(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text="hi"), Reply(text="code answer"), Reply(text="more code"))
    engine = make_engine(pack, workdir)
    await run(engine.run_turn("hello"))
    events = await run(engine.run_turn("I have a python question"))
    assert of(events, ModeChanged) == [ModeChanged("chat", "code")]
    first_user = fake_llm.seen[0].messages[-1]["content"]
    second_user = fake_llm.seen[1].messages[-1]["content"]
    assert first_user == "hello"
    # the note ends the system part; the user's words reach the model unchanged
    assert second_user == "I have a python question"
    second_system = fake_llm.seen[1].messages[0]["content"]
    assert second_system.endswith(mode_change_note("chat", "code"))
    assert second_system.rstrip().endswith("not the style or tools of earlier replies.]")
    assert not any("Mode changed" in m["content"] for m in fake_llm.seen[1].messages[1:])
    assert "[Mode changed" not in fake_llm.seen[0].messages[0]["content"]
    assert engine.conversation.messages[2].content == "I have a python question"
    assert "CODE INSTRUCTIONS in" in second_system
    assert "CHAT INSTRUCTIONS" not in second_system

    events = await run(engine.run_turn("another python question"))
    assert of(events, ModeChanged) == []
    assert fake_llm.seen[2].messages[-1]["content"] == "another python question"
    assert "[Mode changed" not in fake_llm.seen[2].messages[0]["content"]
    modes = [m.mode for m in engine.conversation if m.role == "assistant"]
    assert modes == ["chat", "code", "code"]


async def test_thinking_on_a_model_that_has_it(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text="42", reasoning=["Let me ", "ponder."]))
    events = await run(make_engine(pack, workdir).run_turn("ponder this"))
    assert kinds(events)[2:5] == ["RequestBuilt", "ReasoningDelta", "TextDelta"]
    assert "".join(e.text for e in of(events, ReasoningDelta)) == "Let me ponder."
    built = of(events, RequestBuilt)[0]
    assert built.request.reasoning_effort == "high" and built.notes == ()
    assert fake_llm.seen[0].params["reasoning_effort"] == "high"
    assert fake_llm.seen[0].model == "thinker"
    message = of(events, TurnFinished)[0].message
    assert (message.model, message.thinking, message.reasoning) == (
        "fake/thinker",
        "high",
        "Let me ponder.",
    )


async def test_thinking_on_a_model_without_it_is_dropped_with_a_note(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text="the answer"))
    events = await run(make_engine(pack, workdir).run_turn("python question"))
    built = of(events, RequestBuilt)[0]
    assert built.mode == "code"
    assert built.request.reasoning_effort is None
    assert built.notes == ("thinking n/a for fake/plain",)
    assert "reasoning_effort" not in fake_llm.seen[0].params
    assert of(events, TurnFinished)[0].message.thinking == "off"


async def test_off_means_no_mode(pack: Pack, workdir: Path, fake_llm: FakeProvider) -> None:
    fake_llm.script(Reply(text="plain"), Reply(text="plain again"))
    control = Control("off")
    engine = make_engine(pack, workdir, control=control)
    events = await run(engine.run_turn("a python question"))
    route = of(events, RouteDecided)[0]
    assert route.setting == "off"
    assert (route.route.mode_name, route.route.decided_by, route.route.reason) == (
        "off",
        "caller",
        "Modes are off",
    )
    assert of(events, ModeChanged) == []
    built = of(events, RequestBuilt)[0]
    assert built.mode is None
    assert built.request.messages[0]["content"] == "BASE PROMPT."
    assert built.request.tools == () and built.request.model == "fake/plain"
    message = of(events, TurnFinished)[0].message
    assert (message.mode, message.model, message.thinking) == (None, "fake/plain", "off")

    control.mode = "auto"
    fake_llm.script(Reply(text="code"))
    await run(engine.run_turn("python again"))
    assert fake_llm.seen[1].messages[0]["content"].endswith(mode_change_note(None, "code"))
    assert "[Mode changed from no mode to code:" in fake_llm.seen[1].messages[0]["content"]
    assert fake_llm.seen[1].messages[-1]["content"] == "python again"


async def test_force_off_and_force_a_mode_for_one_turn(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text="a"), Reply(text="b"))
    engine = make_engine(pack, workdir)
    first = await run(engine.run_turn("hello", force="off"))
    assert of(first, RouteDecided)[0].route.mode_name == "off"
    second = await run(engine.run_turn("hello", force="shell"))
    route = of(second, RouteDecided)[0].route
    assert (route.mode_name, route.decided_by) == ("shell", "caller")
    assert [t.name for t in of(second, RequestBuilt)[0].request.tools] == ["run_command"]


async def test_the_control_file_forces_a_mode_and_its_warnings_are_shown(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text="x"), Reply(text="y"), Reply(text="z"))
    control = Control("code")
    engine = make_engine(pack, workdir, control=control)
    events = await run(engine.run_turn("hello"))
    decided = of(events, RouteDecided)[0]
    assert (decided.route.mode_name, decided.route.decided_by, decided.setting) == (
        "code",
        "caller",
        "code",
    )

    control.mode, control.warning = "auto", "state.json is not valid JSON; using auto"
    events = await run(engine.run_turn("hello"))
    decided = of(events, RouteDecided)[0]
    assert decided.route.mode_name == "chat"
    assert decided.warnings == ("state.json is not valid JSON; using auto",)

    control.mode, control.warning = "vanished", None
    events = await run(engine.run_turn("hello"))
    decided = of(events, RouteDecided)[0]
    assert decided.route.mode_name == "chat" and decided.route.decided_by == "classifier"
    assert "asked for mode 'vanished'" in decided.warnings[0]


async def test_model_override_applies_to_every_mode(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text="a"), Reply(text="b"))
    engine = make_engine(pack, workdir, model_override="fake/plain")
    events = await run(engine.run_turn("ponder this"))
    built = of(events, RequestBuilt)[0]
    assert built.mode == "think" and built.request.model == "fake/plain"
    assert built.notes == ("thinking n/a for fake/plain",)
    events = await run(engine.run_turn("hello"))
    assert of(events, TurnFinished)[0].message.model == "fake/plain"
    assert [seen.model for seen in fake_llm.seen] == ["plain", "plain"]


async def test_tools_are_dropped_with_a_note_for_a_model_without_them(
    pack: Pack, workdir: Path
) -> None:
    no_tools = ModelCapabilities(tools=False, reasoning=False)
    model = ScriptedModel(capable_of={"fake/plain": no_tools}).script(ScriptedReply("no tools"))
    events = await run(make_engine(pack, workdir, model=model).run_turn("python file"))
    built = of(events, RequestBuilt)[0]
    assert built.request.tools == ()
    assert built.notes == ("thinking n/a for fake/plain", "tools n/a for fake/plain")


async def test_the_history_window_keeps_whole_exchanges(
    pack: Pack, workdir: Path, write_pack: Callable[..., Path]
) -> None:
    modes = {"chat": {"description": "Chat.", "history": {"last": 3}, "keywords": ["hi"]}}
    small = load_pack(profiles_dir=write_pack(modes=modes, name="small"))
    model = ScriptedModel()
    engine = make_engine(small, workdir, model=model)
    for text in ("one", "two", "three"):
        await run(engine.run_turn(text))
    sent = model.requests[-1].messages
    # the last 3 entries before "three" are [assistant, user "two", assistant]; the window
    # starts at the user message so the model never sees an answer without its question
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1]["content"] == "two"


# --------------------------------------------------------------------------- cancel


async def test_cancel_mid_stream_keeps_the_partial_answer_marked(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text=["part ", "of ", "it "] + ["more "] * 200, delay=0.01))
    session = Recorder()
    engine = make_engine(pack, workdir, session=session)
    events: list[TurnEvent] = []
    async for event in engine.run_turn("hello"):
        events.append(event)
        if isinstance(event, TextDelta) and len(of(events, TextDelta)) == 3:
            engine.cancel()
    assert isinstance(events[-1], TurnCancelled)
    assert events[-1].partial == "part of it "
    assert len(of(events, TextDelta)) == 3
    assert not engine.running
    for _ in range(200):  # the provider's stream is closed, not left running
        if fake_llm.cancelled:
            break
        await asyncio.sleep(0.01)
    assert fake_llm.cancelled
    last = engine.conversation.messages[-1]
    assert (last.role, last.content, last.cancelled, last.mode) == (
        "assistant",
        "part of it ",
        True,
        "chat",
    )
    assert session.types()[-2:] == ["assistant", "ui_event"]
    assert session.of("ui_event")[-1]["event"] == "cancel"
    assert session.of("assistant")[-1]["message"]["cancelled"] is True

    fake_llm.script(Reply(text="fresh answer"))
    events = await run(engine.run_turn("hello again"))
    assert of(events, TurnFinished)[0].message.content == "fresh answer"
    sent = fake_llm.seen[-1].messages
    assert sent[2] == {"role": "assistant", "content": f"part of it \n\n{CUT_SHORT}"}


async def test_cancel_from_another_task_stops_the_stream_at_once(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.started = asyncio.Event()
    fake_llm.script(Reply(text=["slow "] * 500, delay=0.05))
    engine = make_engine(pack, workdir)

    async def consume() -> list[TurnEvent]:
        return await run(engine.run_turn("hello"))

    task = asyncio.create_task(consume())
    await asyncio.wait_for(fake_llm.started.wait(), 5)
    engine.cancel()
    events = await asyncio.wait_for(task, 5)
    assert isinstance(events[-1], TurnCancelled)
    assert len(of(events, TextDelta)) < 10
    assert engine.conversation.messages[-1].cancelled


async def test_cancel_from_another_thread(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.started = asyncio.Event()
    fake_llm.script(Reply(text=["slow "] * 500, delay=0.05))
    engine = make_engine(pack, workdir)
    task = asyncio.create_task(run(engine.run_turn("hello")))
    await asyncio.wait_for(fake_llm.started.wait(), 5)
    await asyncio.to_thread(engine.cancel)
    events = await asyncio.wait_for(task, 5)
    assert isinstance(events[-1], TurnCancelled)


async def test_cancel_mid_tool_stops_the_tool_and_closes_every_call(
    pack: Pack, workdir: Path
) -> None:
    started = asyncio.Event()
    stopped = asyncio.Event()

    @tool(name="read_file")
    async def slow_read(path: str) -> str:
        """Read slowly."""
        started.set()
        try:
            await asyncio.sleep(30)
        finally:
            stopped.set()
        return "never"

    model = ScriptedModel().script(
        ScriptedReply(
            "Reading both.",
            tool_calls=[("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"})],
        )
    )
    session = Recorder()
    engine = make_engine(
        pack, workdir, model=model, tools=ToolRegistry([slow_read]), session=session
    )
    task = asyncio.create_task(run(engine.run_turn("slow please")))
    await asyncio.wait_for(started.wait(), 5)
    engine.cancel()
    events = await asyncio.wait_for(task, 5)

    assert stopped.is_set()
    assert kinds(events)[-3:] == ["ToolCallRequested", "ToolCallFinished", "TurnCancelled"]
    finished = of(events, ToolCallFinished)[0]
    assert finished.outcome == "cancelled" and "cancelled the turn" in finished.result
    # the text came with the tool calls and is stored with them, so nothing is left over
    assert of(events, TurnCancelled)[0].partial == ""
    roles = [m.role for m in engine.conversation]
    assert roles == ["user", "assistant", "tool", "tool"]
    assert engine.conversation.messages[1].cancelled
    assert [r["outcome"] for r in session.of("tool_result")] == ["cancelled", "cancelled"]

    model.script(ScriptedReply("next"))
    events = await run(engine.run_turn("hello"))
    assert of(events, TurnFinished)
    assert wire_is_consistent(model.requests[-1].messages)


async def test_cancel_while_the_user_is_asked_and_while_a_command_runs(
    pack: Pack, workdir: Path
) -> None:
    class SlowConfirm:
        def __init__(self) -> None:
            self.asking = asyncio.Event()

        async def confirm(self, call: ToolCall, tool: Tool) -> bool:
            self.asking.set()
            await asyncio.sleep(30)
            return True

    confirm = SlowConfirm()
    model = ScriptedModel().script(
        ScriptedReply("", tool_calls=[("run_command", {"command": "touch ran.txt"})])
    )
    engine = make_engine(pack, workdir, model=model, confirm=confirm)
    task = asyncio.create_task(run(engine.run_turn("run a command")))
    await asyncio.wait_for(confirm.asking.wait(), 5)
    engine.cancel()
    events = await asyncio.wait_for(task, 5)
    assert isinstance(events[-1], TurnCancelled)
    assert not (workdir / "ran.txt").exists()

    model.script(
        ScriptedReply("", tool_calls=[("run_command", {"command": "echo $$ > pid; sleep 30"})])
    )
    engine = make_engine(pack, workdir, model=model, confirm=Confirm(True))
    task = asyncio.create_task(run(engine.run_turn("run a command")))
    for _ in range(500):
        if (workdir / "pid").exists() and (workdir / "pid").read_text().strip():
            break
        await asyncio.sleep(0.01)
    pid = int((workdir / "pid").read_text())
    engine.cancel()
    events = await asyncio.wait_for(task, 5)
    assert isinstance(events[-1], TurnCancelled)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_consumer_that_stops_listening_leaves_a_consistent_history(
    pack: Pack, workdir: Path
) -> None:
    model = ScriptedModel().script(
        ScriptedReply("", tool_calls=[("read_file", {"path": "a.txt"}), ("list_files", {})])
    )
    engine = make_engine(pack, workdir, model=model)
    async with contextlib.aclosing(engine.run_turn("python file")) as events:
        async for event in events:
            if isinstance(event, ToolCallRequested):
                break
    assert not engine.running
    roles = [m.role for m in engine.conversation]
    assert roles == ["user", "assistant", "tool", "tool"]
    model.script(ScriptedReply("ok"))
    await run(engine.run_turn("hello"))
    assert wire_is_consistent(model.requests[-1].messages)


async def test_retry_after_cancel_runs_the_turn_again(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text=["a", "b", "c"]))
    session = Recorder()
    engine = make_engine(pack, workdir, session=session)
    async for event in engine.run_turn("hello"):
        if isinstance(event, TextDelta):
            engine.cancel()
    fake_llm.script(Reply(text="complete"))
    events = await run(engine.retry())
    assert of(events, TurnFinished)[0].message.content == "complete"
    assert [m.role for m in engine.conversation] == ["user", "assistant"]
    assert engine.turn == 1
    assert session.of("ui_event")[-1] == {"event": "retry"}
    assert session.types().count("user") == 1


async def test_resend_replaces_the_last_turn_and_the_log_says_so(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    session = Recorder()
    engine = make_engine(pack, workdir, session=session)
    fake_llm.script(Reply(text="one"), Reply(text="two"), Reply(text="edited answer"))
    await run(engine.run_turn("first"))
    await run(engine.run_turn("secnod"))
    events = await run(engine.resend("second"))
    assert of(events, TurnFinished)[0].message.content == "edited answer"
    assert [m.content for m in engine.conversation] == ["first", "one", "second", "edited answer"]
    assert engine.turn == 3
    superseded = [(t, f) for kind, t, f in session.records if kind == "ui_event"]
    assert superseded == [(2, {"event": "supersede", "superseded": 2})]
    assert [(t, f["content"]) for kind, t, f in session.records if kind == "user"] == [
        (1, "first"),
        (2, "secnod"),
        (3, "second"),
    ]


async def test_resend_with_no_turn_yet_is_a_plain_turn(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    session = Recorder()
    engine = make_engine(pack, workdir, session=session)
    fake_llm.script(Reply(text="hi"))
    await run(engine.resend("hello"))
    assert [m.content for m in engine.conversation] == ["hello", "hi"]
    assert session.of("ui_event") == []


async def test_retry_with_nothing_to_retry(pack: Pack, workdir: Path) -> None:
    events = await run(make_engine(pack, workdir, model=ScriptedModel()).retry())
    assert isinstance(events[0], TurnFailed) and events[0].kind == "nothing_to_retry"


# --------------------------------------------------------------------------- failures


def provider_errors() -> list[tuple[str, BaseException]]:
    litellm = import_litellm(offline=True)
    args = {"model": "fake/plain", "llm_provider": "fake"}
    return [
        ("timeout", litellm.Timeout(message="took 30s", **args)),
        ("rate_limit", litellm.RateLimitError(message="slow down", **args)),
        ("auth", litellm.AuthenticationError(message="invalid api key", **args)),
        ("connection", litellm.APIConnectionError(message="connection refused", **args)),
        ("bad_stream", json.JSONDecodeError("Expecting value", "data: {bro", 6)),
        ("context_too_long", litellm.ContextWindowExceededError(message="too many tokens", **args)),
    ]


@pytest.mark.parametrize("index", range(6))
async def test_every_provider_error_fails_the_turn_with_a_hint_and_retry_works(
    pack: Pack, workdir: Path, fake_llm: FakeProvider, index: int
) -> None:
    kind, error = provider_errors()[index]
    fake_llm.script(Reply(text=["partial ", "answer"], error=error, error_after=1))
    session = Recorder()
    engine = make_engine(pack, workdir, session=session)
    events = await run(engine.run_turn("hello"))
    failed = events[-1]
    assert isinstance(failed, TurnFailed)
    assert failed.kind == kind
    assert failed.hint
    assert failed.partial == "partial "
    assert "Traceback" not in failed.error and failed.error.startswith(kind.replace("_", " "))
    assert failed.retryable is (kind not in {"auth", "context_too_long"})
    assert [m.role for m in engine.conversation] == ["user", "assistant"]
    assert engine.conversation.messages[1].content == "partial "
    record = session.of("assistant")[-1]
    assert record["error"] == failed.error and record["kind"] == kind
    assert record["hint"] == failed.hint and record["retryable"] == failed.retryable
    assert record["message"]["content"] == "partial "

    fake_llm.script(Reply(text="it worked"))
    events = await run(engine.retry())
    assert of(events, TurnFinished)[0].message.content == "it worked"
    assert [m.role for m in engine.conversation] == ["user", "assistant"]
    assert fake_llm.seen[-1].messages[-1] == {"role": "user", "content": "hello"}


async def test_a_failure_before_any_text_keeps_only_the_user_message(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    litellm = import_litellm(offline=True)
    fake_llm.script(
        Reply(error=litellm.AuthenticationError(message="no key", model="x", llm_provider="fake"))
    )
    engine = make_engine(pack, workdir)
    events = await run(engine.run_turn("hello"))
    assert isinstance(events[-1], TurnFailed) and events[-1].partial == ""
    assert [m.role for m in engine.conversation] == ["user"]


async def test_an_engine_bug_is_a_failed_turn_not_a_crash(
    pack: Pack, workdir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(ScriptedModel):
        async def stream(self, request: Any) -> AsyncIterator[Any]:
            raise KeyError("oops")
            yield  # pragma: no cover

    with caplog.at_level(logging.ERROR):
        events = await run(make_engine(pack, workdir, model=Broken()).run_turn("hello"))
    assert isinstance(events[-1], TurnFailed) and events[-1].kind == "internal"
    assert "KeyError" in caplog.text


async def test_a_broken_session_writer_warns_on_the_next_turn(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    class Full:
        def record(self, type: str, turn: int, **fields: Any) -> None:
            raise OSError("No space left on device")

    fake_llm.script(Reply(text="a"), Reply(text="b"))
    engine = make_engine(pack, workdir, session=Full())
    assert of(await run(engine.run_turn("hello")), TurnFinished)
    events = await run(engine.run_turn("hello"))
    assert "No space left on device" in of(events, RouteDecided)[0].warnings[0]


async def test_one_turn_at_a_time_and_clear(pack: Pack, workdir: Path) -> None:
    model = ScriptedModel().script(ScriptedReply("slow " * 20, chunk_size=1, delay=0.01))
    session = Recorder()
    engine = make_engine(pack, workdir, model=model, session=session)
    events = engine.run_turn("hello")
    await anext(events)
    with pytest.raises(RuntimeError, match="already running"):
        await anext(engine.run_turn("again"))
    with pytest.raises(RuntimeError, match="while a turn runs"):
        engine.clear()
    engine.cancel()
    rest = [event async for event in events]
    assert isinstance(rest[-1], TurnCancelled)
    engine.clear()
    assert len(engine.conversation) == 0 and engine.turn == 1
    assert session.of("ui_event")[-1] == {"event": "clear"}


# --------------------------------------------------------------------------- the support pack


async def test_the_support_pack_answers_from_the_order_store(
    workdir: Path, fake_llm: FakeProvider
) -> None:
    support = load_pack("support")
    fake_llm.script(
        Reply(text="", tool_calls=[("find_order", {"order_id": "NW-10234"})]),
        Reply(
            text="",
            tool_calls=[
                (
                    "create_return",
                    {"order_id": "NW-10234", "item": "NW-JKT-0142", "reason": "too tight"},
                )
            ],
        ),
        Reply(text="Your return RMA-50001 is ready."),
    )
    engine = Engine(
        config=EngineConfig(default_model="fake/plain", cwd=workdir),
        pack=support,
        router=Router(support, KeywordClassifier()),
        model=LiteLLMChatModel(offline=True),
        tools=default_registry(workdir, pack=support),
    )
    events = await run(engine.run_turn("I want to return my jacket", force="returns"))
    found, created = of(events, ToolCallFinished)
    assert found.outcome == "ok" and "Harbour Rain Jacket" in found.result
    assert json.loads(created.result)["return_id"] == "RMA-50001"
    system = fake_llm.seen[0].messages[0]["content"]
    assert "Northwind Outfitters" in system and "returns, exchanges and refunds" in system
    tools = [t["function"]["name"] for t in fake_llm.seen[0].params.get("tools", [])] or [
        t.name for t in of(events, RequestBuilt)[0].request.tools
    ]
    assert tools == ["find_order", "create_return"]


async def test_a_long_answer_is_checkpointed_while_it_streams(
    pack: Pack, workdir: Path, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text=["one ", "two ", "three"]))
    session = Recorder()
    engine = make_engine(pack, workdir, session=session)
    engine.checkpoint_seconds = 0.0
    await run(engine.run_turn("hello"))
    answers = session.of("assistant")
    assert [a.get("partial", False) for a in answers] == [True, True, True, False]
    # each checkpoint holds what is new since the one before, and says where it continues
    assert [a["message"]["content"] for a in answers] == ["one ", "two ", "three", "one two three"]
    assert [a.get("continues") for a in answers] == [
        None,
        {"content": 4, "reasoning": 0},
        {"content": 8, "reasoning": 0},
        None,
    ]
    assert answers[0]["message"]["mode"] == "chat"


async def test_a_turn_full_of_tool_calls_does_not_push_the_last_exchange_out_of_the_window(
    workdir: Path, write_pack: Callable[..., Path]
) -> None:
    modes = {
        "chat": {"description": "Chat.", "keywords": ["hi"], "history": {"last": 4}},
        "code": {"description": "Code.", "keywords": ["file"], "tools": ["list_files"]},
    }
    small = load_pack(profiles_dir=write_pack(modes=modes, name="tools"))
    calls = [("list_files", {"path": f"dir{i}"}) for i in range(6)]
    model = ScriptedModel().script(
        ScriptedReply("Looking.", tool_calls=calls),
        ScriptedReply(
            "Still looking.", tool_calls=[("list_files", {"path": f"more{i}"}) for i in range(6)]
        ),
        ScriptedReply("The file is in src/."),
        ScriptedReply("Hi again."),
    )
    engine = make_engine(small, workdir, model=model)
    await run(engine.run_turn("where is the config file"))
    assert len(engine.conversation.messages) > 10
    await run(engine.run_turn("hi, thanks"))
    sent = model.requests[-1].messages
    contents = [str(m.get("content")) for m in sent]
    assert "where is the config file" in contents[1]
    assert "The file is in src/." in contents
    assert wire_is_consistent(sent)
