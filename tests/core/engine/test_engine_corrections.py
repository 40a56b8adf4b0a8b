"""Correcting a turn in the engine: the re-run, the shared history, the correction recorded,
force-and-resend, undo, and the session log that replay reads back."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.engine.config import EngineConfig
from modes_tui.core.engine.engine import Engine
from modes_tui.core.errors import CorrectionRefused
from modes_tui.core.history.events import (
    ModeChanged,
    RequestBuilt,
    RouteDecided,
    TurnCorrected,
    TurnEvent,
    TurnFinished,
)
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.corrections import MemoryCorrections
from modes_tui.core.routing.router import Router
from modes_tui.core.values.correction import Correction
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.store.export import session_markdown
from modes_tui.store.replay import replay
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import load_session
from tests.core.engine.test_engine import MODES, PROMPTS, Control, Recorder


@pytest.fixture
def pack(write_pack: Callable[..., Path]) -> Pack:
    folder = write_pack(
        router={"classifier": "keyword", "fallback": "chat", "history": {"last": 4}},
        modes=MODES,
        prompts=PROMPTS,
    )
    return load_pack(profiles_dir=folder)


class Spy:
    """A session id source, as the store's log gives one."""

    id = "sess-1"

    def __init__(self) -> None:
        self.recorder = Recorder()

    def record(self, type: str, turn: int, **fields: Any) -> None:
        self.recorder.record(type, turn, **fields)


def engine_for(
    pack: Pack,
    tmp_path: Path,
    *,
    store: Any = None,
    control: Control | None = None,
    session: Any = None,
    model: ScriptedModel | None = None,
) -> Engine:
    return Engine(
        config=EngineConfig(default_model="scripted/demo", cwd=tmp_path),
        pack=pack,
        router=Router(pack, KeywordClassifier()),
        model=model
        or ScriptedModel(responder=lambda r: ScriptedReply(f"answer {len(r.messages)}")),
        control=control,
        session=session if session is not None else Spy(),
        corrections=store,
    )


async def run(events: AsyncIterator[TurnEvent]) -> list[TurnEvent]:
    return [event async for event in events]


async def test_correcting_the_last_turn_re_runs_it_and_records_a_correction(
    pack: Pack, tmp_path: Path
) -> None:
    store = MemoryCorrections()
    control = Control()
    session = Spy()
    model = ScriptedModel().script(
        ScriptedReply("hello back"), ScriptedReply("a git answer"), ScriptedReply("a shell answer")
    )
    engine = engine_for(pack, tmp_path, store=store, control=control, session=session, model=model)
    await run(engine.run_turn("hello there"))
    first = await run(engine.run_turn("hello, how do I undo a commit"))
    assert first[0].route.mode_name == "chat"  # type: ignore[union-attr]

    events = await run(engine.correct("shell"))

    corrected = events[0]
    assert isinstance(corrected, TurnCorrected)
    assert (corrected.turn, corrected.answered_mode, corrected.corrected_mode) == (
        2,
        "chat",
        "shell",
    )
    assert corrected.rerun and corrected.note == ""
    route = next(e for e in events if isinstance(e, RouteDecided)).route
    assert (route.mode_name, route.decided_by, route.reason) == (
        "shell",
        "caller",
        "Corrected by you (was chat)",
    )
    assert ModeChanged("chat", "shell") in events
    finished = next(e for e in events if isinstance(e, TurnFinished))
    assert (finished.message.content, finished.message.mode) == ("a shell answer", "shell")

    # the shared history keeps only the re-run, and the re-run saw no trace of the first answer
    history = [(m.role, m.content) for m in engine.conversation.messages]
    assert history == [
        ("user", "hello there"),
        ("assistant", "hello back"),
        ("user", "hello, how do I undo a commit"),
        ("assistant", "a shell answer"),
    ]
    request = next(e for e in events if isinstance(e, RequestBuilt)).request
    assert "a git answer" not in json.dumps(request.messages)

    (recorded,) = store.corrections()
    assert recorded == corrected.correction
    assert recorded.text == "hello, how do I undo a commit"
    assert [h.to_dict() for h in recorded.history] == [
        {"role": "user", "content": "hello there"},
        {"role": "assistant", "content": "hello back"},
    ]
    assert (recorded.routed_mode, recorded.corrected_mode, recorded.pack) == (
        "chat",
        "shell",
        pack.name,
    )
    assert (recorded.classifier, recorded.encoder) == ("keyword", None)
    assert (recorded.session_id, recorded.turn, recorded.source) == ("sess-1", 2, "user")

    # the control file is not changed: the next turn routes automatically again
    assert control.mode == "auto"
    after = await run(engine.run_turn("hello again"))
    assert next(e for e in after if isinstance(e, RouteDecided)).route.decided_by == "classifier"

    # the log holds the superseded answer, then the correction, then the re-run
    records = session.recorder.records
    kinds = [(kind, fields.get("event")) for kind, turn, fields in records if turn == 2]
    assert kinds == [
        ("user", None),
        ("route", None),
        ("request", None),
        ("assistant", None),
        ("ui_event", "correction"),
        ("route", None),
        ("request", None),
        ("assistant", None),
    ]


async def test_what_cannot_be_corrected_is_refused_with_a_reason(
    pack: Pack, tmp_path: Path
) -> None:
    engine = engine_for(pack, tmp_path, store=MemoryCorrections())
    with pytest.raises(CorrectionRefused, match="no turn to correct yet"):
        engine.correct("shell")
    await run(engine.run_turn("hello there"))
    with pytest.raises(CorrectionRefused, match="already answered in chat"):
        engine.correct("chat")
    with pytest.raises(CorrectionRefused, match="unknown mode 'nope'"):
        engine.correct("nope")
    with pytest.raises(CorrectionRefused, match="no turn 7"):
        engine.correct("shell", turn=7)
    assert engine.corrections.made == []


async def test_an_earlier_turn_is_recorded_but_not_re_run(pack: Pack, tmp_path: Path) -> None:
    store = MemoryCorrections()
    engine = engine_for(pack, tmp_path, store=store)
    await run(engine.run_turn("hello there"))
    await run(engine.run_turn("run the git command"))
    before = list(engine.conversation.messages)

    events = await run(engine.correct("code", turn=1))

    assert [type(e) for e in events] == [TurnCorrected]
    assert not events[0].rerun  # type: ignore[union-attr]
    assert engine.conversation.messages == before
    (recorded,) = store.corrections()
    assert (recorded.turn, recorded.routed_mode, recorded.corrected_mode) == (1, "chat", "code")


async def test_correcting_twice_replaces_and_back_to_the_router_removes(
    pack: Pack, tmp_path: Path
) -> None:
    store = MemoryCorrections()
    engine = engine_for(pack, tmp_path, store=store)
    await run(engine.run_turn("hello, git is weird"))
    await run(engine.correct("shell"))
    await run(engine.correct("code"))
    assert [(c.routed_mode, c.corrected_mode) for c in store.corrections()] == [("chat", "code")]

    events = await run(engine.correct("chat"))
    assert store.corrections() == ()
    corrected = events[0]
    assert isinstance(corrected, TurnCorrected) and corrected.correction is None
    assert "router's own choice (chat) stands" in corrected.note
    assert engine.conversation.messages[-1].mode == "chat"


async def test_force_and_resend_counts_as_a_correction_and_undo_removes_it(
    pack: Pack, tmp_path: Path
) -> None:
    store = MemoryCorrections()
    control = Control()
    session = Spy()
    engine = engine_for(pack, tmp_path, store=store, control=control, session=session)
    await run(engine.run_turn("hello, tidy my branches"))
    control.mode = "shell"  # a mode key writes the control file
    events = await run(engine.run_turn("hello, tidy my branches "))

    corrected = next(e for e in events if isinstance(e, TurnCorrected))
    assert (corrected.turn, corrected.answered_mode, corrected.corrected_mode) == (
        1,
        "chat",
        "shell",
    )
    assert not corrected.rerun
    assert [c.corrected_mode for c in store.corrections()] == ["shell"]
    # both answers stay in the history: the user asked twice
    assert [m.role for m in engine.conversation.messages] == ["user", "assistant"] * 2

    undone = engine.undo_correction()
    assert undone == corrected.correction
    assert store.corrections() == ()
    assert ("ui_event", 2) in [
        (k, t) for k, t, f in session.recorder.records if f.get("event") == "correction_undone"
    ]
    with pytest.raises(CorrectionRefused, match="no correction to undo"):
        engine.undo_correction()

    # a forced turn followed by another forced one, or another text, is no correction
    await run(engine.run_turn("hello, tidy my branches"))
    control.mode = "auto"
    await run(engine.run_turn("something else, hello"))
    assert store.corrections() == ()


class BrokenStore(MemoryCorrections):
    def add(self, correction: Correction) -> Correction:
        raise OSError("disk full")


async def test_a_store_that_fails_does_not_stop_the_re_run(pack: Pack, tmp_path: Path) -> None:
    engine = engine_for(pack, tmp_path, store=BrokenStore())
    await run(engine.run_turn("hello"))
    events = await run(engine.correct("shell"))
    corrected = events[0]
    assert isinstance(corrected, TurnCorrected) and corrected.correction is None
    assert "could not be saved: disk full" in corrected.note
    assert isinstance(events[-1], TurnFinished)


async def test_without_a_store_the_turn_is_still_re_run(pack: Pack, tmp_path: Path) -> None:
    engine = engine_for(pack, tmp_path)
    await run(engine.run_turn("hello"))
    events = await run(engine.correct("shell"))
    assert "not kept" in events[0].note  # type: ignore[union-attr]
    assert engine.conversation.messages[-1].mode == "shell"


async def test_replay_shows_the_superseded_answer_and_the_re_run(
    pack: Pack, tmp_path: Path
) -> None:
    from modes_tui.core.paths import app_dirs

    dirs = app_dirs()
    log = SessionLog.create(dirs, pack=pack.name, model="scripted/demo")
    model = ScriptedModel().script(ScriptedReply("first answer"), ScriptedReply("second answer"))
    engine = engine_for(pack, tmp_path, store=MemoryCorrections(), session=log, model=model)
    await run(engine.run_turn("hello"))
    await run(engine.correct("shell"))
    log.close()

    replayed = replay(load_session(log.path))
    (turn,) = replayed.turns
    kinds = [type(e).__name__ for e in turn.events]
    assert kinds.count("TurnFinished") == 2
    corrected_at = kinds.index("TurnCorrected")
    assert kinds[corrected_at - 1] == "TurnFinished" and kinds[corrected_at + 1] == "RouteDecided"
    assert ModeChanged("chat", "shell") in turn.events
    assert turn.mode == "shell" and not turn.interrupted
    markdown = session_markdown(replayed)
    first, mark, second = (
        markdown.index("first answer"),
        markdown.index("*(answered in chat, corrected to shell)*"),
        markdown.index("second answer"),
    )
    assert first < mark < second and "**Assistant** (shell" in markdown[mark:]
    # resuming the session gives the history the models saw: the re-run only
    assert [(m.role, m.content) for m in replayed.conversation.messages] == [
        ("user", "hello"),
        ("assistant", "second answer"),
    ]


async def test_retrying_a_corrected_turn_keeps_the_corrected_mode(
    pack: Pack, tmp_path: Path
) -> None:
    from modes_tui.core.errors import ProviderError

    failure = ProviderError("timeout", "the model took too long", hint="try again")
    model = ScriptedModel().script(
        ScriptedReply("first"), ScriptedReply(error=failure), ScriptedReply("third")
    )
    store = MemoryCorrections()
    engine = engine_for(pack, tmp_path, store=store, model=model)
    await run(engine.run_turn("hello"))
    failed = await run(engine.correct("shell"))
    assert type(failed[-1]).__name__ == "TurnFailed"

    events = await run(engine.retry())
    route = next(e for e in events if isinstance(e, RouteDecided)).route
    assert (route.mode_name, route.reason) == ("shell", "Corrected by you (was chat)")
    assert engine.conversation.messages[-1].content == "third"
    assert len(store.corrections()) == 1  # a retry records nothing new
    # the router's own route is what a later correction still reports as routed
    await run(engine.correct("code"))
    assert [(c.routed_mode, c.corrected_mode) for c in store.corrections()] == [("chat", "code")]
