"""Replay gives the live engine's event stream and conversation; reroute compares routers."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import (
    ModeChanged,
    RequestBuilt,
    RouteDecided,
    TextDelta,
    ToolCallFinished,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from modes_tui.core.packs.profiles import Profile, load_pack
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.core.routing.classifiers import build_classifier
from modes_tui.core.routing.router import Router
from modes_tui.core.values.entry import HistoryEntry
from modes_tui.core.values.route import Decision
from modes_tui.store.replay import conversation_of, replay, request_from_dict
from modes_tui.store.reroute import reroute
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import load_session
from tests.conftest import PackWriter
from tests.support.store_records import READ_FILE, request, write_demo_session


@pytest.fixture
def dirs() -> Dirs:
    return app_dirs()


def kinds(events: Sequence[Any]) -> list[str]:
    return [event.type for event in events]


def test_each_turn_replays_as_the_live_event_stream(dirs: Dirs) -> None:
    demo = write_demo_session(dirs)
    replayed = replay(load_session(demo.log.id))
    assert replayed.problems == ()
    assert [t.turn for t in replayed.turns] == [1, 2, 3, 4]
    assert [t.user for t in replayed.turns] == demo.users
    assert [t.mode for t in replayed.turns] == demo.modes
    t1, t2, t3, t4 = replayed.turns
    assert kinds(t1.events) == [
        "route_decided",
        "mode_changed",
        "request_built",
        "text_delta",
        "tool_call_requested",
        "usage",
        "tool_call_finished",
        "request_built",
        "text_delta",
        "usage",
        "turn_finished",
    ]
    assert kinds(t2.events) == [
        "route_decided",
        "mode_changed",
        "request_built",
        "reasoning_delta",
        "text_delta",
        "usage",
        "turn_finished",
    ]
    assert kinds(t3.events) == [
        "route_decided",
        "mode_changed",
        "request_built",
        "text_delta",
        "usage",
        "turn_cancelled",
    ]
    assert kinds(t4.events) == ["route_decided", "mode_changed", "request_built", "turn_failed"]
    assert [e["event"] for e in t3.ui_events] == ["forced_mode", "cancel"]
    assert not any(t.interrupted for t in replayed.turns)
    assert [e.type for e in replayed.events()] == [e.type for t in replayed.turns for e in t.events]


def test_events_carry_the_recorded_values(dirs: Dirs) -> None:
    demo = write_demo_session(dirs)
    t1, t2, t3, t4 = replay(load_session(demo.log.id)).turns
    route = t1.events[0]
    assert isinstance(route, RouteDecided)
    assert (route.route.mode_name, route.route.decided_by, route.route.confidence) == (
        "code",
        "classifier",
        0.9,
    )
    assert t1.events[1] == ModeChanged(None, "code")
    built = t1.events[2]
    assert isinstance(built, RequestBuilt) and built.mode == "code" and built.round == 1
    assert built.request.tools == (READ_FILE,)
    assert built.request.extra["api_key"] == "[redacted]"
    finished = t1.events[6]
    assert isinstance(finished, ToolCallFinished)
    assert (finished.call.name, finished.outcome, finished.duration_ms) == ("read_file", "ok", 2.0)
    assert t1.events[-1] == TurnFinished(demo.messages[3])
    assert t2.events[1] == ModeChanged("code", "chat")
    assert t3.events[0].setting == "code" and t3.events[0].route.forced  # type: ignore[attr-defined]
    assert t3.events[-1] == TurnCancelled("A pointer is")
    assert t4.events[0].warnings == ("control file x: something",)  # type: ignore[attr-defined]
    failed = t4.events[-1]
    assert isinstance(failed, TurnFailed)
    assert failed.kind == "timeout" and failed.error.startswith("timeout (openai/gpt-4.1-mini)")


def test_mode_changed_only_when_the_mode_differs(dirs: Dirs) -> None:
    with SessionLog.create(dirs, session_id="20260101-000000-same") as log:
        for turn in (1, 2):
            log.record("user", turn, content="q")
            log.record(
                "route",
                turn,
                route={"mode_name": "chat", "decided_by": "classifier", "reason": "r"},
                setting="auto",
            )
            log.record(
                "assistant", turn, message={"role": "assistant", "content": "a", "mode": "chat"}
            )
        # An `off` turn has no mode: a change to None.
        log.record("user", 3, content="q")
        log.record("request", 3, request={"model": "m", "messages": []}, mode=None, round=1)
        log.record("assistant", 3, message={"role": "assistant", "content": "a"})
    turns = replay(load_session("latest")).turns
    assert [kinds(t.events) for t in turns] == [
        ["route_decided", "mode_changed", "text_delta", "turn_finished"],
        ["route_decided", "text_delta", "turn_finished"],
        ["mode_changed", "request_built", "text_delta", "turn_finished"],
    ]
    assert turns[2].events[0] == ModeChanged("chat", None) and turns[2].mode is None


def test_the_rebuilt_conversation_equals_the_recorded_messages(dirs: Dirs) -> None:
    demo = write_demo_session(dirs)
    session = load_session(demo.log.id)
    assert replay(session).conversation.messages == demo.messages
    assert conversation_of(session).messages == demo.messages
    assert demo.messages[-1] == Message("user", "what now")  # the failed, empty answer is left out


def test_a_checkpointed_answer_is_replaced_by_the_final_one(dirs: Dirs) -> None:
    with SessionLog.create(dirs) as log:
        log.record("user", 1, content="story")
        for text in ("Once", "Once upon"):
            log.record("assistant", 1, message={"role": "assistant", "content": text}, partial=True)
        log.record("assistant", 1, message={"role": "assistant", "content": "Once upon a time."})
    replayed = replay(load_session("latest"))
    assert kinds(replayed.turns[0].events) == ["text_delta", "turn_finished"]
    assert replayed.turns[0].events[0] == TextDelta("Once upon a time.")
    assert [m.content for m in replayed.conversation] == ["story", "Once upon a time."]


def test_a_turn_cancelled_before_any_answer(dirs: Dirs) -> None:
    with SessionLog.create(dirs) as log:
        log.record("user", 1, content="slow one")
        log.record("ui_event", 1, event="cancel")
    [turn] = replay(load_session("latest")).turns
    assert turn.events == (TurnCancelled(""),) and not turn.interrupted


def test_clear_empties_the_rebuilt_conversation(dirs: Dirs) -> None:
    with SessionLog.create(dirs) as log:
        log.record("ui_event", 0, event="forced_mode", mode="chat")
        log.record("user", 1, content="before")
        log.record("assistant", 1, message={"role": "assistant", "content": "a"})
        log.record("ui_event", 2, event="clear")
        log.record("user", 3, content="after")
        log.record("assistant", 3, message={"role": "assistant", "content": "b"})
    replayed = replay(load_session("latest"))
    assert [m.content for m in replayed.conversation] == ["after", "b"]
    assert [t.user for t in replayed.turns] == ["before", "after"]  # the transcript keeps both
    assert not any(t.interrupted for t in replayed.turns)
    assert [e["event"] for e in replayed.ui_events] == ["forced_mode", "clear"]


def test_a_superseded_turn_leaves_the_conversation_but_stays_in_the_transcript(
    dirs: Dirs,
) -> None:
    with SessionLog.create(dirs) as log:
        log.record("user", 1, content="first")
        log.record("assistant", 1, message={"role": "assistant", "content": "a"})
        log.record("user", 2, content="typo")
        log.record("assistant", 2, message={"role": "assistant", "content": "b"})
        log.record("ui_event", 2, event="supersede", superseded=2)
        log.record("user", 3, content="fixed")
        log.record("assistant", 3, message={"role": "assistant", "content": "c"})
    replayed = replay(load_session("latest"))
    assert [m.content for m in replayed.conversation] == ["first", "a", "fixed", "c"]
    assert [t.user for t in replayed.turns] == ["first", "typo", "fixed"]
    assert [e["event"] for e in replayed.turns[1].ui_events] == ["supersede"]


def test_an_unreadable_record_is_reported_and_skipped(dirs: Dirs) -> None:
    with SessionLog.create(dirs) as log:
        log.record("user", 1, content="q")
        log.record("route", 1, route={"decided_by": "classifier"}, setting="auto")  # no mode_name
        log.record("tool_result", 1, call={"name": "x"}, outcome="ok", result="r")  # no call id
        log.record("assistant", 1, message={"role": "assistant", "content": "a", "mode": "chat"})
    replayed = replay(load_session("latest"))
    assert kinds(replayed.turns[0].events) == ["mode_changed", "text_delta", "turn_finished"]
    assert [p.line for p in replayed.problems] == [3, 4, 4]
    assert "route record could not be replayed (field 'route' lacks 'mode_name'); skipped" in str(
        replayed.problems[0]
    )
    assert "tool_result record could not be replayed (field 'call' lacks 'id')" in str(
        replayed.problems[1]
    )
    assert "left out of the conversation" in replayed.problems[2].message


def test_an_empty_session_replays_as_nothing(dirs: Dirs) -> None:
    dirs.sessions.mkdir(parents=True)
    (dirs.sessions / "20260101-000000-0000.jsonl").write_bytes(b"")
    replayed = replay(load_session("latest"))
    assert replayed.turns == () and len(replayed.conversation) == 0
    assert [p.message.split(":")[0] for p in replayed.problems] == ["empty"]


def test_request_from_dict_is_the_inverse_of_to_dict() -> None:
    original = request("code", [Message("user", "hi")], tools=True)
    again = request_from_dict(json.loads(json.dumps(original.to_dict())))
    assert again.params() == original.to_dict()
    assert again.tools == original.tools and again.temperature == 0.2


# --------------------------------------------------------------------------- reroute


class Recorder:
    """A classifier that answers from a table and remembers what it saw."""

    def __init__(self, answers: Mapping[str, tuple[str, float]]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, list[HistoryEntry]]] = []

    def classify(
        self,
        message: str,
        history: Sequence[HistoryEntry],
        modes: Sequence[Profile],
        instructions: str,
        inputs: Mapping[str, Any],
    ) -> Decision:
        self.calls.append((message, list(history)))
        mode, confidence = self.answers.get(message, ("chat", 0.5))
        return Decision(mode, confidence, "table")


def pack_without_code(write_pack: PackWriter) -> Path:
    return write_pack(
        router={"classifier": "keyword", "fallback": "chat", "history": {"last": 10}},
        modes={
            "chat": {"description": "Everyday chat.", "keywords": ["hello"]},
            "write": {"description": "Prose.", "keywords": ["pointers"]},
        },
        name="nocode",
    )


async def test_reroute_compares_with_today_and_marks_missing_modes(
    dirs: Dirs, write_pack: PackWriter
) -> None:
    demo = write_demo_session(dirs)
    pack = load_pack(profiles_dir=pack_without_code(write_pack))
    recorder = Recorder({"explain pointers": ("write", 0.7), "hello, thanks!": ("chat", 0.95)})
    report = await reroute(load_session(demo.log.id), Router(pack, recorder))
    rows = [
        (t.turn, t.recorded_mode, t.recorded_missing, t.new_mode, t.new_by, t.changed)
        for t in report.turns
    ]
    assert rows == [
        (1, "code", True, "chat", "classifier", True),
        (2, "chat", False, "chat", "classifier", False),
        (3, "code", True, "write", "classifier", True),
        (4, "chat", False, "chat", "classifier", False),
    ]
    assert report.turns[0].recorded_confidence == 0.9 and report.turns[0].new_confidence == 0.5
    assert report.turns[2].recorded_by == "caller"
    summary = report.summary
    assert (summary.turns, summary.agreed, summary.agreement) == (4, 2, 0.5)
    assert summary.gained == {"chat": 1, "write": 1}
    assert summary.lost == {"code": 2}
    assert summary.missing_modes == ("code",)
    assert summary.latency_p50_ms is not None and summary.latency_p95_ms is not None
    assert summary.latency_p50_ms <= summary.latency_p95_ms
    data = report.to_dict()
    assert data["summary"]["agreement"] == 0.5 and data["turns"][0]["recorded"]["missing"]
    json.dumps(data)  # plain data throughout


async def test_reroute_gives_each_turn_the_history_it_had(
    dirs: Dirs, write_pack: PackWriter
) -> None:
    demo = write_demo_session(dirs)
    pack = load_pack(profiles_dir=pack_without_code(write_pack))
    recorder = Recorder({})
    await reroute(load_session(demo.log.id), Router(pack, recorder))
    messages = [message for message, _ in recorder.calls]
    assert messages == demo.users
    histories = [[(h.role, h.content) for h in history] for _, history in recorder.calls]
    assert histories[0] == []
    assert histories[1] == [
        ("user", "my python script segfaults, see main.py"),
        ("assistant", "Let me look."),
        ("assistant", "Line 3 dereferences NULL."),
    ]
    assert histories[3][-2:] == [("user", "explain pointers"), ("assistant", "A pointer is")]


async def test_reroute_with_the_pack_classifier(dirs: Dirs, write_pack: PackWriter) -> None:
    demo = write_demo_session(dirs)
    pack = load_pack(profiles_dir=write_pack())  # chat and code, keyword rules
    report = await reroute(replay(load_session(demo.log.id)), Router(pack, build_classifier(pack)))
    assert [t.new_mode for t in report.turns] == ["code", "chat", "chat", "chat"]
    assert not any(t.recorded_missing for t in report.turns)
    assert report.summary.gained == {"chat": 1} and report.summary.lost == {"code": 1}


async def test_reroute_of_an_empty_session(dirs: Dirs, write_pack: PackWriter) -> None:
    SessionLog.create(dirs).close()
    pack = load_pack(profiles_dir=write_pack())
    report = await reroute(load_session("latest"), Router(pack, build_classifier(pack)))
    assert report.turns == () and report.summary.agreement is None
    assert report.summary.latency_p50_ms is None


def test_a_broken_checkpoint_at_the_end_is_reported_not_raised(dirs: Dirs) -> None:
    with SessionLog.create(dirs) as log:
        log.record("user", 1, content="q")
        log.record("assistant", 1, message=["not", "a", "message"], partial=True)
    replayed = replay(load_session("latest"))
    [turn] = replayed.turns
    assert turn.user == "q" and turn.interrupted and kinds(turn.events) == ["turn_failed"]
    assert [m.content for m in replayed.conversation] == ["q"]
    assert [p.line for p in replayed.problems] == [3, 3]  # the turn, and the conversation
