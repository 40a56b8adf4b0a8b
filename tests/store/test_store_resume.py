"""Resuming, forking, renaming and deleting saved sessions (the store's side)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.engine.engine import Engine
from modes_tui.core.errors import ProviderError, SessionError
from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import (
    RouteDecided,
    TextDelta,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from modes_tui.core.model.wire import TextChunk, ToolCall
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.store.manage import delete_session, rename_session
from modes_tui.store.replay import conversation_of, replay
from modes_tui.store.resume import CurrentSession, prepare_resume
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import load_session
from modes_tui.store.sessions import list_sessions
from tests.support.engine_support import with_config

MODES = {
    "chat": {"description": "Chat.", "keywords": ["hello"]},
    "code": {"description": "Code.", "keywords": ["python"], "tools": ["read_file"]},
    "shell": {"description": "Shell.", "keywords": ["git"], "tools": ["run_command"]},
}


@pytest.fixture
def pack(write_pack: Callable[..., Path]) -> Pack:
    return load_pack(profiles_dir=write_pack(modes=MODES))


@pytest.fixture
def dirs() -> Dirs:
    return app_dirs()


class CancelOnConfirm:
    """Answers a confirmation question by cancelling the turn (Esc at the dialog)."""

    engine: Engine | None = None

    async def confirm(self, call: ToolCall, tool: Any) -> bool:
        assert self.engine is not None
        self.engine.cancel()
        await asyncio.sleep(1)  # the question waits; the cancel lands here
        return False


class MidAnswerFailures(ScriptedModel):
    """A scripted model whose failing replies stream their text first, then fail."""

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        reply = self._next(request)
        if reply.error is None:
            self.replies.appendleft(reply)
            self.requests.pop()
            async for event in super().stream(request):
                yield event
            return
        yield TextChunk(reply.text)
        raise reply.error


def engine_for(pack: Pack, model: ScriptedModel, session: Any, cwd: Path, **kw: Any) -> Engine:
    return Engine(
        **with_config(
            pack=pack,
            router=Router(pack, KeywordClassifier()),
            model=model,
            default_model="scripted/demo",
            session=session,
            cwd=cwd,
            **kw,
        )
    )


def current(dirs: Dirs, pack: Pack) -> CurrentSession:
    return CurrentSession(
        lambda **extra: SessionLog.create(dirs, pack=pack.name, model="scripted/demo", **extra)
    )


async def four_turns(engine: Engine, model: ScriptedModel) -> None:
    """Tool use; a cancel mid-answer; a failure, then a retry; a cancel at a tool question."""
    model.script(
        ScriptedReply("Looking.", tool_calls=[("read_file", {"path": "a.txt"})]),
        ScriptedReply("It says alpha."),
        ScriptedReply("cut short here, never finished", chunk_size=4),
        ScriptedReply("half an answ", error=ProviderError("rate_limit", "slow down", hint="x")),
        ScriptedReply("Hello again to you."),
        ScriptedReply("Undoing.", tool_calls=[("run_command", {"command": "git reset HEAD~1"})]),
    )
    ends = [(await _last(engine.run_turn("a python question")))]
    async for event in engine.run_turn("hello"):
        if isinstance(event, TextDelta):
            engine.cancel()
        last = event
    ends.append(last)
    ends.append(await _last(engine.run_turn("hello again")))
    ends.append(await _last(engine.retry()))
    ends.append(await _last(engine.run_turn("git: undo my last commit")))
    kinds = [type(e) for e in ends]
    assert kinds == [TurnFinished, TurnCancelled, TurnFailed, TurnFinished, TurnCancelled]


async def _last(events: Any) -> Any:
    last = None
    async for event in events:
        last = event
    return last


# --------------------------------------------------------------------------- resume


async def test_a_resumed_session_continues_with_exactly_the_history_the_models_saw(
    pack: Pack, dirs: Dirs, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    live_model = MidAnswerFailures()
    asker = CancelOnConfirm()
    log = SessionLog.create(dirs, pack=pack.name, model="scripted/demo")
    live = engine_for(pack, live_model, log, tmp_path, confirm=asker)
    asker.engine = live
    await four_turns(live, live_model)
    log.close()

    resumed = prepare_resume(log.id, dirs)
    assert resumed.conversation.messages == live.conversation.messages  # cancels, retry and all
    assert resumed.turn == 4 and resumed.mode == "shell"
    assert [r.mode_name for r in resumed.routes] == ["code", "chat", "chat", "chat", "shell"]
    assert resumed.notes == ()

    # The same next turn, from the live engine and from the resumed one, sends the same request.
    live.session = None
    live_model.script(ScriptedReply("Here you go."))
    await _last(live.run_turn("hello, what next?"))
    session = current(dirs, pack)
    session.attach(resumed)
    again_model = ScriptedModel().script(ScriptedReply("Here you go."))
    again = engine_for(pack, again_model, session, tmp_path)
    resumed.restore_into(again)
    assert again.routes == list(resumed.routes)
    await _last(again.run_turn("hello, what next?"))
    session.close()
    assert again_model.requests[-1].messages == live_model.requests[-1].messages

    # New records went to the same file, after a `resumed` record, numbered on from turn 4.
    assert session.id == log.id and session.path == log.path
    assert len(list(dirs.sessions.glob("*.jsonl"))) == 1
    records = load_session(log.path).records
    resumed_at = next(i for i, r in enumerate(records) if r.get("event") == "resumed")
    assert records[resumed_at]["turn"] == 4
    assert {r["turn"] for r in records[resumed_at + 1 :]} == {5}
    assert [r["type"] for r in records[resumed_at + 1 :]][:2] == ["user", "route"]
    assert conversation_of(load_session(log.path)).messages == again.conversation.messages
    assert list_sessions(dirs)[0].turns == 5


def test_a_torn_last_line_is_skipped_with_a_clear_note_and_new_records_stay_whole(
    dirs: Dirs,
) -> None:
    log = SessionLog.create(dirs, pack="default", model="scripted/demo")
    log.record("user", 1, content="first question")
    log.record("assistant", 1, message=Message("assistant", "first answer").to_dict())
    log.close()
    with open(log.path, "ab") as handle:
        handle.write(b'{"v":1,"type":"user","turn":2,"content":"lost in the cra')

    resumed = prepare_resume("latest", dirs)
    assert [m.content for m in resumed.conversation] == ["first question", "first answer"]
    (note,) = resumed.notes
    assert note.startswith(f"{log.path}:4: the last line was cut off mid-record")
    assert "new records start on a line of their own" in note

    session = CurrentSession(lambda **extra: SessionLog.create(dirs, **extra))
    session.attach(resumed)
    session.record("user", 2, content="second question")
    session.close()
    again = load_session(log.path)
    assert [r.get("content") for r in again.records if r["type"] == "user"] == [
        "first question",
        "second question",
    ]
    assert [p.line for p in again.problems] == [4]  # the torn line, still skipped


def test_a_session_from_a_newer_modes_tui_is_not_resumed(dirs: Dirs) -> None:
    log = SessionLog.create(dirs, pack="default")
    log.close()
    with open(log.path, "ab") as handle:
        handle.write(b'{"v":7,"type":"user","turn":1,"at":"","content":"from the future"}\n')
    with pytest.raises(SessionError) as caught:
        prepare_resume(log.id, dirs)
    message = str(caught.value)
    assert "written by a newer modes-tui (schema version 7; this one writes version 1)" in message
    assert f"modes-tui replay {log.id}" in message
    assert log.path.read_bytes().count(b"\n") == 2  # nothing appended


def test_resuming_an_unknown_or_empty_session_says_what_to_do(dirs: Dirs) -> None:
    with pytest.raises(SessionError, match="there are no sessions yet"):
        prepare_resume("latest", dirs)
    dirs.sessions.mkdir(parents=True, exist_ok=True)
    (dirs.sessions / "20260101-000000-0000.jsonl").write_text("")
    with pytest.raises(SessionError, match=r"has no meta record.*nothing to resume"):
        prepare_resume("latest", dirs)
    with pytest.raises(SessionError, match="no session 'nope'"):
        prepare_resume("nope", dirs)


def test_a_session_from_another_pack_says_so() -> None:
    loaded = _loaded_with_pack("support")
    assert loaded.pack_note("default") == (
        f"session {loaded.id} was recorded with pack 'support'; it continues with pack "
        f"'default' (modes-tui --pack support --resume {loaded.id} uses its own pack)"
    )
    assert loaded.pack_note("support") is None


def _loaded_with_pack(name: str) -> Any:
    log = SessionLog.create(app_dirs(), pack=name)
    log.record("user", 1, content="where is my order")
    log.close()
    return prepare_resume(log.id)


# --------------------------------------------------------------------------- fork


async def test_fork_starts_a_new_session_from_turn_n(
    pack: Pack, dirs: Dirs, tmp_path: Path
) -> None:
    model = ScriptedModel().script(
        ScriptedReply("A python answer."), ScriptedReply("Hi."), ScriptedReply("Hello again.")
    )
    session = current(dirs, pack)
    engine = engine_for(pack, model, session, tmp_path)
    await _last(engine.run_turn("a python question about loops"))
    await _last(engine.run_turn("hello"))
    after_two = list(engine.conversation)
    await _last(engine.run_turn("hello again"))
    parent = session.id

    with pytest.raises(SessionError, match="no turn 4 to fork at: this session has turns 1 to 3"):
        session.fork(4)
    forked = session.fork(2)
    assert session.id == forked.id != parent
    assert forked.conversation.messages == after_two
    assert forked.turn == 2 and forked.mode == "chat"
    assert forked.session.meta["parent"] == {"id": parent, "turn": 2}
    assert forked.session.title == "a python question about loops (fork at turn 2)"
    forked.restore_into(engine)
    model.script(ScriptedReply("Forked answer."))
    await _last(engine.run_turn("hello from the fork"))
    session.close()

    child = replay(load_session(forked.id, dirs))
    assert [t.user for t in child.turns] == [
        "a python question about loops",
        "hello",
        "hello from the fork",
    ]
    assert [t.turn for t in child.turns] == [1, 2, 3]
    assert any(r.get("event") == "forked" and r["parent"] == parent for r in child.session.records)
    assert replay(load_session(parent, dirs)).turns[-1].user == "hello again"  # parent untouched


def test_fork_before_anything_was_recorded_is_refused(dirs: Dirs, pack: Pack) -> None:
    with pytest.raises(SessionError, match="nothing recorded yet in this session"):
        current(dirs, pack).fork(1)


# --------------------------------------------------------------------------- rename


def test_rename_appends_a_title_the_list_shows_even_after_the_app_writes_again(
    dirs: Dirs,
) -> None:
    running = SessionLog.create(dirs, pack="default")
    running.record("user", 1, content="hi! can you please fix this segfault in my parser?")
    assert list_sessions(dirs)[0].title == "fix this segfault in my parser"

    assert rename_session(running.id, "  Parser   crash  ", dirs) == (running.id, "Parser crash")
    assert list_sessions(dirs)[0].title == "Parser crash"
    running.record("user", 2, content="and another thing")  # the app rewrites its summary
    running.close()
    assert list_sessions(dirs)[0].title == "Parser crash"
    loaded = load_session(running.id, dirs)
    assert loaded.title == "Parser crash"
    last = json.loads(running.path.read_bytes().splitlines()[2])
    assert (last["type"], last["title"], last["title_source"]) == ("meta", "Parser crash", "user")


def test_rename_of_the_current_session_and_bad_titles(dirs: Dirs, pack: Pack) -> None:
    session = current(dirs, pack)
    assert session.rename("Naming it first") == "Naming it first"  # creates the log
    session.close()
    assert list_sessions(dirs)[0].title == "Naming it first"
    with pytest.raises(SessionError, match="a title cannot be empty"):
        session.rename("   ")
    with pytest.raises(SessionError, match="at most 200 characters"):
        rename_session("latest", "x" * 201, dirs)
    with pytest.raises(SessionError, match="no session 'nope'"):
        rename_session("nope", "title", dirs)


# --------------------------------------------------------------------------- delete


def test_delete_removes_the_log_summary_and_title(dirs: Dirs) -> None:
    keep = SessionLog.create(dirs, pack="default", session_id="20260101-000000-aaaa")
    keep.record("user", 1, content="keep me")
    keep.close()
    gone = SessionLog.create(dirs, pack="default", session_id="20260102-000000-bbbb")
    gone.record("user", 1, content="delete me")
    gone.close()
    rename_session(gone.id, "doomed", dirs)
    summaries = dirs.sessions / ".summaries"
    assert {p.name for p in summaries.iterdir()} == {
        "20260101-000000-aaaa.json",
        "20260102-000000-bbbb.json",
        "20260102-000000-bbbb.title.json",
    }

    deleted = delete_session("20260102", dirs)
    assert deleted.id == gone.id and not gone.path.exists()
    assert {p.name for p in summaries.iterdir()} == {"20260101-000000-aaaa.json"}
    assert [s.id for s in list_sessions(dirs)] == [keep.id]
    with pytest.raises(SessionError, match="no session '20260102-000000-bbbb'"):
        delete_session(gone.id, dirs)


def test_delete_never_touches_a_file_outside_the_sessions_folder(
    dirs: Dirs, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text('{"v":1,"type":"meta","turn":0,"at":""}\n')
    with pytest.raises(SessionError, match="is not a session in the sessions folder"):
        delete_session(str(outside), dirs)
    assert outside.exists()
    dirs.sessions.mkdir(parents=True, exist_ok=True)
    link = dirs.sessions / "20260103-000000-cccc.jsonl"
    os.symlink(outside, link)
    with pytest.raises(SessionError, match="is not a session in the sessions folder"):
        delete_session("20260103-000000-cccc", dirs)
    assert outside.exists() and link.is_symlink()


def test_a_session_deleted_while_in_use_says_so_instead_of_writing_into_the_void(
    dirs: Dirs,
) -> None:
    log = SessionLog.create(dirs, pack="default")
    log.record("user", 1, content="hello")
    delete_session(log.id, dirs)
    with pytest.raises(SessionError, match=r"was deleted while in use .*no longer recorded"):
        log.record("user", 2, content="still there?")  # the next turn finds out
    log.close()
    assert list_sessions(dirs) == []


async def test_the_engine_warns_when_its_session_was_deleted(
    pack: Pack, dirs: Dirs, tmp_path: Path
) -> None:
    model = ScriptedModel().script(ScriptedReply("Hi."), ScriptedReply("Hi again."))
    log = SessionLog.create(dirs, pack=pack.name)
    engine = engine_for(pack, model, log, tmp_path)
    await _last(engine.run_turn("hello"))
    delete_session(log.id, dirs)
    events = [event async for event in engine.run_turn("hello again")]
    log.close()
    (route,) = [e for e in events if isinstance(e, RouteDecided)]
    assert any("was deleted while in use" in warning for warning in route.warnings)
    assert isinstance(events[-1], TurnFinished)  # the conversation goes on


async def test_a_resumed_turn_can_be_corrected_as_if_it_had_run_here(
    pack: Pack, dirs: Dirs, tmp_path: Path
) -> None:
    model = ScriptedModel().script(
        ScriptedReply("A python answer."),
        ScriptedReply("Hi."),
        ScriptedReply("Cleared and fresh."),
        ScriptedReply("Hello in code mode."),
    )
    log = SessionLog.create(dirs, pack=pack.name)
    live = engine_for(pack, model, log, tmp_path)
    await _last(live.run_turn("a python question"))
    await _last(live.run_turn("hello"))
    live.clear()
    await _last(live.run_turn("hello after the clear"))
    log.close()

    resumed = prepare_resume(log.id, dirs)
    assert [(t.turn, t.route.mode_name, t.answered, t.epoch) for t in resumed.routed] == [
        (1, "code", "code", -1),  # taken out of the history by /clear
        (2, "chat", "chat", -1),
        (3, "chat", "chat", 0),
    ]
    assert resumed.routed[2].user_index == 0
    session = current(dirs, pack)
    session.attach(resumed)
    again = engine_for(pack, model, session, tmp_path)
    resumed.restore_into(again)

    earlier = [e async for e in again.correct("code", turn=2)]  # recorded, not re-run
    assert [type(e).__name__ for e in earlier] == ["TurnCorrected"]
    assert not earlier[0].rerun
    latest = [e async for e in again.correct("code")]  # the last turn is answered again
    assert latest[0].rerun and isinstance(latest[-1], TurnFinished)
    assert latest[-1].message.content == "Hello in code mode."
    session.close()
    assert [m.content for m in again.conversation] == [
        "hello after the clear",
        "Hello in code mode.",
    ]
