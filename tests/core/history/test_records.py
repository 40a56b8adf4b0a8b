"""Typed session records: the same bytes as the untyped writer, clear errors, old logs replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.errors import RecordError, SessionError
from modes_tui.core.history.conversation import Message
from modes_tui.core.history.records import (
    AssistantRecord,
    MetaRecord,
    RequestRecord,
    RouteRecord,
    ToolResultRecord,
    UiEventRecord,
    UserRecord,
    parse_record,
    write_record,
)
from modes_tui.core.model.wire import ToolCall
from modes_tui.core.values.route import Route
from modes_tui.store.replay import replay
from modes_tui.store.session_reader import load_session
from tests.data.write_session_v1 import main as write_session

VARYING = frozenset({"at", "duration_ms", "cwd"})
DATA = Path(__file__).parents[2] / "data"
WRITTEN_BY_MAIN = DATA / "session_v1.jsonl"
"""Written by main's engine before records were typed (tests/data/write_session_v1.py);
every checkpoint in it holds the whole answer so far."""
WRITTEN_WITH_DELTAS = DATA / "session_v1_delta.jsonl"
"""The same session written since checkpoints hold only what is new (`continues`)."""


def lines(path: Path = WRITTEN_BY_MAIN) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("path", [WRITTEN_BY_MAIN, WRITTEN_WITH_DELTAS], ids=["full", "delta"])
def test_every_record_main_wrote_reads_and_writes_back_the_same_bytes(path: Path) -> None:
    kinds = set()
    for line in lines(path):
        raw = json.loads(line)
        record = parse_record(raw)
        assert record is not None, line
        kinds.add(record.kind)
        again = json.dumps(record.to_dict(), ensure_ascii=False, separators=(",", ":"))
        assert again == line
    assert kinds == {"meta", "user", "route", "request", "assistant", "tool_result", "ui_event"}


async def test_todays_engine_writes_what_mains_engine_wrote(tmp_path: Path) -> None:
    await write_session(tmp_path)

    def timeless(value: Any) -> Any:
        """Without what differs between two runs: times, durations, folders, the date."""
        if isinstance(value, dict):
            if value.get("role") == "system":  # the system prompt holds today's date
                return {**value, "content": "(system)"}
            return {k: timeless(v) for k, v in value.items() if k not in VARYING}
        if isinstance(value, list):
            return [timeless(item) for item in value]
        return value

    def comparable(text: str) -> list[Any]:
        return [timeless(json.loads(line)) for line in text.splitlines()]

    today = (tmp_path / "session_v1.jsonl").read_text(encoding="utf-8")
    assert comparable(today) == comparable(WRITTEN_WITH_DELTAS.read_text(encoding="utf-8"))
    # Besides checkpoints that hold what is new (the next test shows both logs replay the
    # same), one change since main wrote session_v1.jsonl: a mode passed to
    # `run_turn(force=...)` is for that turn only (`/MODE text`), and its route now says so;
    # the correction's forced route does not.
    routes = [
        r["route"]
        for r in comparable(today)
        if r["type"] == "route" and r["route"]["decided_by"] == "caller"
    ]
    assert [(r["reason"], r.get("one_shot")) for r in routes] == [
        ("Mode requested by caller", True),
        ("Corrected by you (was code)", None),
    ]
    # Issue 21: a classifier's route after a turn answered in a mode records the message's
    # follow-up score (the conversation step, `core.routing.follow_up`).
    from modes_tui.core.routing.follow_up import follow_up_score

    text, previous_mode, scored = "", None, 0
    for record in comparable(today):
        if record["type"] == "user":
            text = record["content"]
        elif record["type"] == "assistant" and record["message"].get("mode"):
            previous_mode = record["message"]["mode"]
        elif record["type"] == "route" and previous_mode is not None:
            decision = record["route"].get("decision") or {}
            if decision.get("mode_name") and decision.get("confidence") is not None:
                assert record["route"]["follow_up"] == follow_up_score(text).score
                scored += 1
    assert scored > 0


def test_a_log_with_whole_checkpoints_and_one_with_deltas_replay_the_same() -> None:
    old, new = replay(load_session(WRITTEN_BY_MAIN)), replay(load_session(WRITTEN_WITH_DELTAS))
    assert old.problems == new.problems == ()

    def shown(turn: Any) -> list[tuple[str, str]]:
        texts = ("content", "text", "partial")
        return [
            (type(e).__name__, "".join(str(getattr(e, k, "")) for k in texts))
            for e in turn.events
            if type(e).__name__ not in ("RouteDecided", "RequestBuilt")  # they hold times
        ]

    assert [shown(t) for t in old.turns] == [shown(t) for t in new.turns]
    assert old.conversation.messages == new.conversation.messages
    whole = [json.loads(line) for line in lines(WRITTEN_BY_MAIN)]
    joined = load_session(WRITTEN_WITH_DELTAS).records
    checkpoints = [r["message"] for r in whole if r["type"] == "assistant" and r.get("partial")]
    rejoined = [r for r in joined if r["type"] == "assistant" and r.get("partial")]
    assert len(rejoined) == 7  # one per run of checkpoints, each the whole answer so far
    assert all(r["message"] in checkpoints and "continues" not in r for r in rejoined)


def test_the_session_main_wrote_replays_turn_by_turn(tmp_path: Path) -> None:
    session = load_session(WRITTEN_BY_MAIN)
    replayed = replay(session)
    assert replayed.problems == ()
    assert [turn.user for turn in replayed.turns] == [
        "a python question",
        "hello",
        "hello, a long one",
        "python again",
        "hello, edited",
    ]
    endings = [type(turn.events[-1]).__name__ for turn in replayed.turns]
    assert endings == [
        "TurnFinished",
        "TurnFinished",
        "TurnCancelled",
        "TurnFinished",
        "TurnFinished",
    ]
    first = [type(event).__name__ for event in replayed.turns[0].events]
    assert "ToolCallFinished" in first and "RequestBuilt" in first
    retried = [type(event).__name__ for event in replayed.turns[1].events]
    assert "TurnFailed" in retried  # the rate limit, then the retry's answer
    corrected = [type(event).__name__ for event in replayed.turns[3].events]
    assert "TurnCorrected" in corrected
    assert replayed.turns[4].events[-1].message.content == "Edited answer."  # type: ignore[attr-defined]
    assert len(replayed.conversation) == 0  # the session ends with /clear


@pytest.mark.parametrize(
    ("raw", "field", "reason"),
    [
        ({"type": "assistant", "turn": 1}, "message", "is missing"),
        ({"type": "assistant", "turn": 1, "message": "hi"}, "message", "must be an object"),
        ({"type": "assistant", "turn": 1, "message": {"content": "x"}}, "message", "lacks 'role'"),
        ({"type": "user", "turn": "2", "content": "x"}, "turn", "must be a whole number"),
        ({"type": "tool_result", "turn": 1, "call": {"name": "x"}}, "call", "lacks 'id'"),
        (
            {"type": "tool_result", "turn": 1, "call": {"id": "c", "name": "x"}, "outcome": "meh"},
            "outcome",
            "must be one of ok, error",
        ),
        ({"type": "request", "turn": 1, "mode": "chat"}, "request", "is missing"),
        ({"type": "request", "turn": 1, "request": {}, "notes": "x"}, "notes", "a list of strings"),
        ({"type": "route", "turn": 1, "route": {"decided_by": "x"}}, "route", "lacks 'mode_name'"),
    ],
)
def test_a_broken_record_names_its_type_and_field(
    raw: dict[str, Any], field: str, reason: str
) -> None:
    with pytest.raises(RecordError) as caught:
        parse_record(raw)
    error = caught.value
    assert isinstance(error, SessionError) and isinstance(error, ValueError)
    assert (error.kind, error.field) == (raw["type"], field)
    assert reason in error.reason
    assert str(error).startswith(f"{raw['type']} record: field {field!r}")


def test_an_unknown_type_is_skipped_and_unknown_fields_are_ignored() -> None:
    assert parse_record({"v": 2, "type": "hologram", "turn": 1}) is None
    record = parse_record({"v": 1, "type": "user", "turn": 3, "content": "hi", "mood": "calm"})
    assert record == UserRecord(3, "hi")


def test_each_record_type_round_trips() -> None:
    message = Message("assistant", "done", model="m", mode="chat")
    records = [
        MetaRecord({"id": "x", "title": "Trip"}),
        UserRecord(1, "hello"),
        RouteRecord(1, Route("chat", "classifier", "greeting"), "auto", ("a warning",)),
        RequestRecord(1, {"model": "m", "messages": []}, "chat", 2, ("tools n/a",), {"from": "a"}),
        AssistantRecord(1, message, {"prompt_tokens": 3}, partial=True),
        AssistantRecord(
            1, message, closes_turn=True, error="boom", failure_kind="auth", retryable=False
        ),
        ToolResultRecord(1, ToolCall("c1", "read_file", {"path": "a"}), "blocked", "no", 1.5),
        UiEventRecord(1, "cancel", {"partial": "par", "reason": "abandoned"}),
    ]
    for record in records:
        assert parse_record(record.to_dict()) == record


def test_write_record_hands_the_writer_the_fields_the_old_calls_did() -> None:
    calls: list[tuple[str, int, dict[str, Any]]] = []

    class Writer:
        def record(self, type: Any, turn: int, **fields: Any) -> None:
            calls.append((type, turn, fields))

    message = Message("assistant", "partial text")
    write_record(Writer(), AssistantRecord(2, message, partial=True))
    write_record(Writer(), UiEventRecord(2, "supersede", {"superseded": 2}))
    assert calls == [
        ("assistant", 2, {"message": message.to_dict(), "usage": None, "partial": True}),
        ("ui_event", 2, {"event": "supersede", "superseded": 2}),
    ]
