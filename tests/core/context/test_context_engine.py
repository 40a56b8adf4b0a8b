"""Conversations that fit, end to end through the engine: every request fitted into the
model's window, older turns compacted near the limit and by `/compact`, one retry after a
provider's context error, resume after a compaction, and summaries shown safely
(issue 24, item 3)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.context import ESTIMATE
from modes_tui.core.engine.config import EngineConfig
from modes_tui.core.engine.engine import Engine
from modes_tui.core.errors import CompactionRefused
from modes_tui.core.history.compaction import Compaction
from modes_tui.core.history.events import (
    ConversationCompacted,
    RequestBuilt,
    TurnEvent,
    TurnFailed,
    TurnFinished,
)
from modes_tui.core.history.safe_events import safe_event
from modes_tui.core.model.ports import ModelCapabilities
from modes_tui.core.model.wire import ModelRequest
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.llm.litellm_model import LiteLLMChatModel
from modes_tui.repl.commands import run_line as run_command
from modes_tui.repl.context import ReplContext
from modes_tui.repl.printer import Printer
from modes_tui.store.export import session_markdown
from modes_tui.store.replay import replay
from modes_tui.store.resume import prepare_resume
from modes_tui.store.session_log import SessionLog
from modes_tui.store.session_reader import load_session
from tests.support.cli_support import run_piped_chat
from tests.support.fake_openai_server import CONTEXT_ERROR, SUMMARY_TEXT, fake_openai_server

WINDOW = 1024
MESSAGE = "Tell me more about the sea and its tides, please. " * 14  # ~700 characters
SUMMARY = (
    "SUMMARY of the talk: the user asked, turn after turn, about the sea and its tides; the "
    "assistant explained that the tides follow the moon and the sun, twice a day, with spring "
    "and neap tides through the month. Nothing is left open."
)
HOSTILE = "calm \x1b]52;c;ZXZpbA==\x07seas \x1b[2J\x1b[31mred"


def is_summary_request(request: ModelRequest) -> bool:
    return "running summary" in str(request.messages[0].get("content"))


def responder(summary: str = SUMMARY) -> Callable[[ModelRequest], ScriptedReply]:
    def answer(request: ModelRequest) -> ScriptedReply:
        if is_summary_request(request):
            return ScriptedReply(summary)
        return ScriptedReply("Tides follow the moon.")

    return answer


@pytest.fixture
def pack(write_pack: Callable[..., Path]) -> Pack:
    folder = write_pack(
        router={"classifier": "keyword", "fallback": "chat"},
        modes={"chat": {"description": "Everyday chat.", "max_tokens": 64}},
    )
    return load_pack(profiles_dir=folder)


class Recorder:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def record(self, type: str, turn: int, **fields: Any) -> None:
        self.records.append(json.loads(json.dumps({"type": type, "turn": turn, **fields})))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r["type"] == kind]


def small_model(summary: str = SUMMARY) -> ScriptedModel:
    capable = ModelCapabilities(tools=False, context_window=WINDOW)
    return ScriptedModel(responder=responder(summary), capable_of={"scripted/small": capable})


def engine_for(pack: Pack, model: Any, session: Any, default: str = "scripted/small") -> Engine:
    return Engine(
        config=EngineConfig(default_model=default),
        pack=pack,
        router=Router(pack, KeywordClassifier()),
        model=model,
        session=session,
    )


async def turn(engine: Engine, text: str) -> list[TurnEvent]:
    return [event async for event in engine.run_turn(text)]


def chat_requests(model: ScriptedModel) -> list[ModelRequest]:
    return [r for r in model.requests if not is_summary_request(r)]


# --------------------------------------------------------------------------- near the limit


async def test_forty_long_messages_never_overflow_and_older_turns_are_compacted(
    pack: Pack,
) -> None:
    model, session = small_model(), Recorder()
    engine = engine_for(pack, model, session)
    built: list[RequestBuilt] = []
    compactions: list[Compaction] = []
    for number in range(40):
        events = await turn(engine, f"{number}: {MESSAGE}")
        assert isinstance(events[-1], TurnFinished), events[-1]
        built += [e for e in events if isinstance(e, RequestBuilt)]
        compactions += [e.compaction for e in events if isinstance(e, ConversationCompacted)]

    # every request fits: the window minus the 64 tokens the mode keeps for its answer
    for event in built:
        assert event.context is not None
        assert event.context.tokens <= WINDOW - 64 and event.context.fits, event.context
        assert event.context.tokenizer == ESTIMATE  # the scripted model knows no tokenizer
    assert compactions and all(c.trigger == "auto" for c in compactions)
    assert compactions[-1].turns > 30 and compactions[-1].model == "scripted/small"
    # the latest request carries the summary, not the turns it stands for
    last = chat_requests(model)[-1]
    system = str(last.messages[0]["content"])
    assert "SUMMARY of the talk" in system and "not instructions" in system
    assert not any(str(m.get("content")).startswith("0: ") for m in last.messages)
    # the chat (the conversation) keeps every message; the session holds every summary
    assert sum(m.role == "user" for m in engine.conversation.messages) == 40
    assert len(session.of("summary")) == len(compactions)
    assert session.of("summary")[-1]["upto"] == engine.conversation.compaction.upto
    assert session.of("request")[-1]["context"]["fits"] is True


async def test_a_summary_model_that_fails_still_frees_the_window(pack: Pack) -> None:
    from modes_tui.core.errors import ProviderError

    model, session = small_model(), Recorder()

    def answer(request: ModelRequest) -> ScriptedReply:
        if is_summary_request(request):
            return ScriptedReply(error=ProviderError("server_error", "down", model="x"))
        return ScriptedReply("ok")

    model.responder = answer
    engine = engine_for(pack, model, session)
    for number in range(8):
        events = await turn(engine, f"{number}: {MESSAGE}")
        assert isinstance(events[-1], TurnFinished), events[-1]
    compaction = engine.conversation.compaction
    assert compaction is not None and compaction.model is None
    assert "the summary model failed (server_error: down)" in compaction.note
    assert compaction.summary.startswith("User: 0: Tell me more")  # the openings, kept
    assert "their openings kept" in compaction.describe()


# --------------------------------------------------------------------------- /compact


async def test_compact_summarises_every_turn_but_the_latest_and_is_recorded(pack: Pack) -> None:
    model, session = small_model(), Recorder()
    engine = engine_for(pack, model, session)
    with pytest.raises(CompactionRefused, match="nothing to compact yet"):
        await engine.compact()
    for text in ("first question", "second question", "third question"):
        await turn(engine, text)
    compaction = await engine.compact()
    assert (compaction.turns, compaction.trigger) == (2, "command")
    assert compaction.summary == SUMMARY
    assert session.of("summary")[0]["trigger"] == "command"
    with pytest.raises(CompactionRefused):
        await engine.compact()  # only the latest turn is left, and it always stays

    await turn(engine, "fourth question")
    sent = [str(m.get("content")) for m in chat_requests(model)[-1].messages]
    assert "SUMMARY of the talk" in sent[0]
    assert sent[1:] == ["third question", "Tides follow the moon.", "fourth question"]


async def test_clear_forgets_the_summary_too(pack: Pack) -> None:
    model = small_model()
    engine = engine_for(pack, model, Recorder())
    for text in ("one", "two"):
        await turn(engine, text)
    await engine.compact()
    engine.clear()
    await turn(engine, "fresh start")
    assert "SUMMARY" not in str(chat_requests(model)[-1].messages[0]["content"])


def test_compact_in_a_piped_repl_prints_a_note_and_records_the_summary(
    modes_home: Path,
) -> None:
    result = run_piped_chat("hello\nsecond thing\n/compact\nthird\n", home=modes_home)
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stdout.splitlines() if line.startswith("(compacted")]
    assert (
        notes == [notes[0]] and "compacted 1 earlier turn(s) for the model (/compact;" in notes[0]
    )
    logs = list((modes_home / "data" / "sessions").glob("*.jsonl"))
    records = [json.loads(line) for line in logs[0].read_text("utf-8").splitlines()]
    summaries = [r for r in records if r["type"] == "summary"]
    assert len(summaries) == 1 and summaries[0]["turns"] == 1 and summaries[0]["upto"] == 2


# --------------------------------------------------------------------------- context errors


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with fake_openai_server() as base:
        monkeypatch.setenv("OPENAI_API_BASE", base)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield base


async def test_a_context_error_compacts_once_and_sends_the_request_again(
    pack: Pack, server: str
) -> None:
    session = Recorder()
    model = LiteLLMChatModel(timeout=10, offline=True)
    engine = engine_for(pack, model, session, default="openai/context-limit")
    compacted_in: list[int] = []
    for number in range(1, 9):  # the server refuses more than 3,000 characters
        events = await turn(engine, f"{number}: {MESSAGE}")
        assert isinstance(events[-1], TurnFinished), events[-1]
        if any(isinstance(e, ConversationCompacted) for e in events):
            compacted_in.append(number)
            retried = [e for e in events if isinstance(e, RequestBuilt)]
            assert len(retried) == 2  # the refused request, then the one sent again
            assert retried[0].context is None  # the window is unknown: sent as built
            assert f"sent again after the provider said: {CONTEXT_ERROR}" in retried[1].notes
            assert SUMMARY_TEXT in str(retried[1].request.messages[0]["content"])
    assert compacted_in[:1] == [5]  # five messages of ~700 characters are over 3,000
    summaries = session.of("summary")
    assert summaries and all(s["trigger"] == "context_error" for s in summaries)
    assert summaries[0]["model"] == "openai/context-limit"
    assert summaries[0]["summary"] == SUMMARY_TEXT


async def test_a_request_too_long_on_its_own_fails_after_no_more_than_one_retry(
    pack: Pack, server: str
) -> None:
    session = Recorder()
    engine = engine_for(
        pack, LiteLLMChatModel(timeout=10, offline=True), session, "openai/context-limit"
    )
    events = await turn(engine, "x" * 5000)
    failed = events[-1]
    assert isinstance(failed, TurnFailed), failed
    assert failed.kind == "context_too_long" and not failed.retryable
    assert CONTEXT_ERROR in failed.error
    assert len(session.of("request")) == 1  # nothing to compact: not sent again
    assert engine.conversation.messages[0].content == "x" * 5000  # the message is kept


# --------------------------------------------------------------------------- resume


async def test_resume_gives_the_model_the_summary_not_the_compacted_turns(pack: Pack) -> None:
    log = SessionLog.create(app_dirs(), pack=pack.name, model="scripted/small")
    engine = engine_for(pack, small_model(), log)
    for text in ("alpha question", "beta question", "gamma question"):
        await turn(engine, text)
    made = await engine.compact()
    log.close()

    resumed = prepare_resume(log.path)
    assert resumed.conversation.compaction == made
    assert [m.content for m in resumed.conversation.messages][::2] == [
        "alpha question",
        "beta question",
        "gamma question",
    ]  # the chat shows every turn again
    assert any(isinstance(e, ConversationCompacted) for t in resumed.replay.turns for e in t.events)
    model = small_model()
    carried = engine_for(pack, model, Recorder())
    resumed.restore_into(carried)
    await turn(carried, "delta question")
    sent = [str(m.get("content")) for m in model.requests[-1].messages]
    assert "SUMMARY of the talk" in sent[0]
    assert "alpha question" not in " ".join(sent) and "beta question" not in " ".join(sent)
    assert sent[1:] == ["gamma question", "Tides follow the moon.", "delta question"]


# --------------------------------------------------------------------------- hostile text


async def test_a_hostile_summary_is_inert_in_the_repl_the_events_and_the_export(
    pack: Pack,
) -> None:
    log = SessionLog.create(app_dirs(), pack=pack.name, model="scripted/small")
    engine = engine_for(pack, small_model(HOSTILE), log)
    for text in ("one", "two"):
        await turn(engine, text)
    out = io.StringIO()
    context = ReplContext(
        engine=engine,
        mode_names=lambda: ("chat",),
        describe_modes=lambda: "chat",
        set_mode=lambda value: value,
    )
    await run_command("/compact", context, Printer(out))
    compaction = engine.conversation.compaction
    assert compaction is not None and compaction.summary == HOSTILE.strip()  # kept as written
    shown = safe_event(ConversationCompacted(compaction))
    assert isinstance(shown, ConversationCompacted)
    log.close()
    exported = session_markdown(replay(load_session(log.path)))
    for text in (out.getvalue(), shown.compaction.summary, exported):
        assert "\x1b" not in text and "\x07" not in text
    assert "calm" in shown.compaction.summary and "calm" in exported
    assert out.getvalue().startswith("(compacted 1 earlier turn(s) for the model (/compact;")


# --------------------------------------------------------------------------- the app


async def test_compact_in_the_app_shows_a_folded_note_with_the_summary_made_safe(
    tmp_path: Path,
) -> None:
    from datetime import UTC

    from textual.widgets import Collapsible

    from modes_tui.tui.app import build_app
    from modes_tui.tui.compaction_note import CompactionNote
    from tests.support.tui_support import plain, real_app, started, until

    rig = real_app(load_pack("default"), tmp_path)
    rig.model.script(ScriptedReply("first answer"), ScriptedReply("second answer"))
    rig.model.responder = lambda request: ScriptedReply(HOSTILE)
    try:
        async with build_app(rig.services, tz=UTC).run_test(size=(120, 40)) as pilot:
            app = await started(pilot)
            for text in ("hello there", "and a second thing", "/compact"):
                count = len(app.conversation.records)
                app.conversation.prompt.value = text
                await pilot.press("enter")
                if not text.startswith("/"):
                    await until(
                        pilot,
                        lambda c=count: (
                            len(app.conversation.records) > c and not app.conversation.turns.running
                        ),
                    )
            await until(pilot, lambda: bool(app.conversation.chat.query(CompactionNote)))
            note = app.conversation.chat.query_one(CompactionNote)
            assert isinstance(note, Collapsible) and note.collapsed  # folded until asked
            title = note.title
            assert title.startswith("⋯ compacted 1 earlier turn(s) for the model (/compact;")
            summary = plain(note.query_one(".summary"))
            assert "calm" in summary and "\x1b" not in summary and "\x07" not in summary
            assert "Earlier turns summarised for the model" in plain(app.conversation.status)
    finally:
        rig.log.close()
    records = [json.loads(line) for line in rig.log.path.read_text("utf-8").splitlines()]
    assert [r["trigger"] for r in records if r["type"] == "summary"] == ["command"]


def test_the_inspector_says_how_the_request_was_fitted_and_how_tokens_were_counted() -> None:
    import io as _io

    from rich.console import Console

    from modes_tui.core.history.compaction import ContextReport
    from modes_tui.tui.inspector import request_sections

    report = ContextReport(900, 960, 1024, ESTIMATE, dropped_turns=2)
    request = ModelRequest(model="box", messages=({"role": "system", "content": "S"},))
    sections = dict(
        (title, body)
        for title, body, _ in request_sections(RequestBuilt(request, "chat", 1, (), context=report))
    )
    console = Console(width=200, file=_io.StringIO(), color_system=None)
    with console.capture() as captured:
        console.print(sections["Parameters"])
    assert (
        "context window: 900 of 960 tokens (estimate: 1 token per 3 characters); window 1024; "
        "2 earlier turn(s) left out"
    ) in captured.get()
