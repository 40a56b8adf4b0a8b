"""A session written by hand, record by record, following `modes_tui.core.history.records`."""

from __future__ import annotations

from dataclasses import dataclass

from modes_tui.core.history.conversation import Message
from modes_tui.core.model.wire import ModelRequest, ToolCall, ToolSpec
from modes_tui.core.paths import Dirs
from modes_tui.core.values.route import ClassifierInfo, Decision, Route
from modes_tui.store.session_log import SessionLog

READ_FILE = ToolSpec(
    "read_file",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
SYSTEM = {"role": "system", "content": "You are helpful."}


@dataclass
class Demo:
    """What the demo session holds, for assertions."""

    log: SessionLog
    messages: list[Message]
    users: list[str]
    modes: list[str | None]


def route(mode: str, by: str, confidence: float | None, reason: str) -> Route:
    decision = (
        None
        if by == "caller"
        else Decision(mode, confidence, reason, {mode: confidence or 0.0, "other": 0.1})
    )
    return Route(
        mode,
        by,  # type: ignore[arg-type]
        reason,
        decision,
        duration_ms=None if by == "caller" else 1.5,
        classifier=None if by == "caller" else ClassifierInfo("keyword"),
    )


def request(mode: str, history: list[Message], *, tools: bool = False) -> ModelRequest:
    return ModelRequest(
        model="openai/gpt-4.1-mini",
        messages=(SYSTEM, *({"role": m.role, "content": m.content} for m in history)),
        tools=(READ_FILE,) if tools else (),
        temperature=0.2,
        extra={"api_key": "sk-secret-123", "extra_headers": {"Authorization": "Bearer abc"}},
    )


def write_demo_session(
    dirs: Dirs, *, session_id: str = "20261202-141503-3f9a", pack: str = "testpack"
) -> Demo:
    """Four turns: tool use, a plain answer, a forced and cancelled turn, a failed turn."""
    log = SessionLog.create(dirs, pack=pack, model="openai/gpt-4.1-mini", session_id=session_id)
    history: list[Message] = []
    usage = {"prompt_tokens": 120, "completion_tokens": 30, "cost": 0.0004}

    # Turn 1: code, one tool round.
    u1 = Message("user", "my python script segfaults, see main.py")
    history.append(u1)
    log.record("user", 1, content=u1.content)
    log.record(
        "route",
        1,
        route=route("code", "classifier", 0.9, "keywords: python").to_dict(),
        setting="auto",
        warnings=[],
    )
    log.record(
        "request",
        1,
        request=request("code", history, tools=True).to_dict(),
        mode="code",
        round=1,
        notes=[],
    )
    call = ToolCall("call_1", "read_file", {"path": "main.py"})
    a1 = Message(
        "assistant",
        "Let me look.",
        tool_calls=(call,),
        mode="code",
        model="openai/gpt-4.1-mini",
        thinking="high",
    )
    history.append(a1)
    log.record("assistant", 1, message=a1.to_dict(), usage=usage)
    tool = Message("tool", '{"text": "int main() {}"}', tool_call_id="call_1", name="read_file")
    history.append(tool)
    log.record(
        "tool_result", 1, call=call.to_dict(), outcome="ok", result=tool.content, duration_ms=2.0
    )
    log.record(
        "request",
        1,
        request=request("code", history, tools=True).to_dict(),
        mode="code",
        round=2,
        notes=[],
    )
    a1b = Message(
        "assistant",
        "Line 3 dereferences NULL.",
        mode="code",
        model="openai/gpt-4.1-mini",
        thinking="high",
    )
    history.append(a1b)
    log.record("assistant", 1, message=a1b.to_dict(), usage=usage)

    # Turn 2: chat, with reasoning.
    u2 = Message("user", "hello, thanks!")
    history.append(u2)
    log.record("user", 2, content=u2.content)
    log.record(
        "route",
        2,
        route=route("chat", "classifier", 0.8, "keywords: hello").to_dict(),
        setting="auto",
        warnings=[],
    )
    log.record(
        "request", 2, request=request("chat", history).to_dict(), mode="chat", round=1, notes=[]
    )
    a2 = Message(
        "assistant",
        "You're welcome.",
        mode="chat",
        model="openai/gpt-4.1-mini",
        thinking="off",
        reasoning="Be brief.",
    )
    history.append(a2)
    log.record("assistant", 2, message=a2.to_dict(), usage=usage)

    # Turn 3: forced code, cancelled mid-answer.
    log.record("ui_event", 3, event="forced_mode", mode="code")
    u3 = Message("user", "explain pointers")
    history.append(u3)
    log.record("user", 3, content=u3.content)
    log.record(
        "route",
        3,
        route=route("code", "caller", None, "Mode requested by caller").to_dict(),
        setting="code",
        warnings=[],
    )
    log.record(
        "request", 3, request=request("code", history).to_dict(), mode="code", round=1, notes=[]
    )
    log.record("ui_event", 3, event="cancel")
    a3 = Message(
        "assistant",
        "A pointer is",
        mode="code",
        model="openai/gpt-4.1-mini",
        thinking="high",
        cancelled=True,
    )
    history.append(a3)
    log.record("assistant", 3, message=a3.to_dict(), usage=usage)

    # Turn 4: back to auto, fallback chat, the call fails before any text.
    u4 = Message("user", "what now")
    history.append(u4)
    log.record("user", 4, content=u4.content)
    log.record(
        "route",
        4,
        route=route("chat", "fallback", 0.2, "Below confidence threshold").to_dict(),
        setting="auto",
        warnings=["control file x: something"],
    )
    log.record(
        "request",
        4,
        request=request("chat", history).to_dict(),
        mode="chat",
        round=1,
        notes=["thinking n/a"],
    )
    log.record(
        "assistant",
        4,
        message=Message("assistant", "", mode="chat", model="openai/gpt-4.1-mini").to_dict(),
        usage=None,
        error="timeout (openai/gpt-4.1-mini): Request timed out",
        kind="timeout",
    )
    log.close()
    return Demo(
        log,
        history,
        [u1.content, u2.content, u3.content, u4.content],
        ["code", "chat", "code", "chat"],
    )
