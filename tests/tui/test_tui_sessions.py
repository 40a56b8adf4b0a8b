"""`/resume`, `--resume`, `/fork` and `/rename` in the app, over the real engine and store."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

import pytest
from textual.pilot import Pilot

from modes_tui.core.engine.ports import Confirmer
from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.runtime import build_engine, current_session
from modes_tui.store.control import ControlFile
from modes_tui.store.resume import CurrentSession, Resumption, prepare_resume
from modes_tui.store.session_reader import load_session
from modes_tui.store.sessions import list_sessions
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.chat import LiteTurn
from modes_tui.tui.services import AppServices
from modes_tui.tui.sessions import StoreSessions
from modes_tui.tui.turn_view import SystemNote, TurnView
from tests.support.engine_support import engine_config
from tests.support.tui_support import all_text, plain, started, until

SIZE = (120, 40)


@dataclass
class Rig:
    """One app's parts: build as many apps as a test needs over the same home."""

    dirs: Dirs
    model: ScriptedModel
    current: CurrentSession

    def services(
        self, pack_name: str = "default", resumed: Resumption | None = None
    ) -> AppServices:
        pack = load_pack(pack_name)
        control = ControlFile(self.dirs.control_file, modes=lambda: pack.names)

        def engine(confirm: Confirmer):  # type: ignore[no-untyped-def]
            built = build_engine(
                engine_config(default_model="scripted/demo"),
                pack=pack,
                classifier="keyword",
                session=self.current,
                control=control,
                confirm=confirm,
                dirs=self.dirs,
                offline=True,
                model=self.model,
            )
            if resumed is not None:
                resumed.restore_into(built)
            return built

        return AppServices(
            pack=pack,
            model="scripted/demo",
            control=control,
            build_engine=engine,
            sessions=StoreSessions(self.dirs, lambda: Router(pack, KeywordClassifier())),
            session_id=lambda: self.current.id,
            current=self.current,
            resumed=resumed,
        )


@pytest.fixture
def make_rig() -> Iterator[Callable[[], Rig]]:
    made: list[Rig] = []

    def make() -> Rig:
        dirs = app_dirs()
        current = current_session(
            dirs, pack="default", model="scripted/demo", fsync=False, version="t"
        )
        rig = Rig(dirs, ScriptedModel(), current)
        made.append(rig)
        return rig

    yield make
    for rig in made:
        rig.current.close()


async def say(pilot: Pilot[None], text: str) -> None:
    app = pilot.app
    assert isinstance(app, ModesApp)
    count = len(app.conversation.records)
    app.conversation.prompt.value = text
    await pilot.press("enter")
    await until(
        pilot, lambda: len(app.conversation.records) > count and not app.conversation.turn_running
    )


async def command(pilot: Pilot[None], text: str) -> None:
    app = pilot.app
    assert isinstance(app, ModesApp)
    app.conversation.prompt.value = text
    await pilot.press("enter")
    await pilot.pause(0.05)
    await until(pilot, lambda: all(w.is_finished for w in app.workers if w.group == "session"))


def chat_text(app: ModesApp) -> str:
    return all_text(app.conversation.chat.query("Static, AnswerSegment, SystemNote"))


async def two_turns(make_rig: Callable[[], Rig]) -> str:
    """A first app session: a code question and a chat message. Returns its id."""
    rig = make_rig()
    rig.model.script(ScriptedReply("Use gdb and type bt."), ScriptedReply("Hello to you."))
    async with build_app(rig.services(), tz=UTC).run_test(size=SIZE) as pilot:
        await started(pilot)
        await say(pilot, "my python script segfaults")
        await say(pilot, "hello there")
    rig.current.close()
    assert rig.current.id is not None
    return rig.current.id


async def test_resume_shows_the_turns_and_carries_on_in_the_same_log(
    make_rig: Callable[[], Rig],
) -> None:
    first = await two_turns(make_rig)
    rig = make_rig()
    rig.model.script(ScriptedReply("Pushing is next."))
    async with build_app(rig.services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        await command(pilot, "/resume latest")
        await until(pilot, lambda: len(app.conversation.records) == 2)
        text = chat_text(app)
        assert "my python script segfaults" in text and "Hello to you." in text
        assert f"**Resumed session `{first}`** · my python script segfaults · 2 turns" in all_text(
            app.conversation.chat.query(SystemNote)
        )
        assert [e.route.mode_name for e in app.conversation.panel.entries if e.route] == [
            "code",
            "chat",
        ]
        assert f"In session {first}" in plain(app.conversation.status)

        await say(pilot, "hello, and then?")
        assert app.conversation.records[-1].number == 3
        sent = rig.model.requests[-1].messages
        assert [m["content"] for m in sent if m["role"] == "assistant"] == [
            "Use gdb and type bt.",
            "Hello to you.",
        ]
        assert "my python script segfaults" in sent[1]["content"]

    assert rig.current.id == first
    assert [s.id for s in list_sessions(rig.dirs)] == [first]  # no new session file
    records = load_session(first, rig.dirs).records
    assert [r.get("event") for r in records if r["type"] == "ui_event"] == ["resumed"]
    assert [r["content"] for r in records if r["type"] == "user"][-1] == "hello, and then?"
    assert [r["turn"] for r in records if r["type"] == "user"] == [1, 2, 3]


async def test_resume_errors_stay_visible_and_change_nothing(make_rig: Callable[[], Rig]) -> None:
    rig = make_rig()
    rig.model.script(ScriptedReply("Hi."))
    async with build_app(rig.services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        await command(pilot, "/resume nope")
        status = plain(app.conversation.status)
        assert "Cannot resume: no session 'nope'" in status
        assert app.conversation.prompt.value == "/resume nope"  # back, to be fixed
        await say(pilot, "hello")
        own = rig.current.id
        await command(pilot, f"/resume {own}")
        assert "is the one you are in already" in plain(app.conversation.status)
        await command(pilot, "/fork 7")
        assert "no turn 7 to fork at: this session has turns 1 to 1" in (
            plain(app.conversation.status)
        )
        assert app.conversation.prompt.value == "/fork 7"
        await command(pilot, "/fork x")
        assert "/fork takes a turn number from 1" in plain(app.conversation.status)
        assert app.conversation.prompt.value == "/fork x"  # kept to fix
        assert len(app.conversation.records) == 1 and rig.current.id == own


async def test_starting_with_resume_shows_the_session_before_the_first_message(
    make_rig: Callable[[], Rig],
) -> None:
    first = await two_turns(make_rig)
    rig = make_rig()
    resumed = prepare_resume(first, rig.dirs)
    rig.current.attach(resumed)
    rig.model.script(ScriptedReply("Carrying on."))
    async with build_app(rig.services(resumed=resumed), tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        await until(pilot, lambda: len(app.conversation.records) == 2)
        assert (
            len(app.conversation.chat.query(TurnView)) + len(app.conversation.chat.query(LiteTurn))
            == 2
        )
        assert "mode chat" in app.conversation.header.render_text().plain
        await say(pilot, "hello again")
        assert len(rig.model.requests[-1].messages) == 6  # system, 2 turns, the new message


async def test_fork_starts_a_new_session_from_turn_n(make_rig: Callable[[], Rig]) -> None:
    rig = make_rig()
    rig.model.script(
        ScriptedReply("Use gdb."), ScriptedReply("Hello to you."), ScriptedReply("Forked on.")
    )
    async with build_app(rig.services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        await say(pilot, "my python script segfaults")
        await say(pilot, "hello there")
        parent = rig.current.id
        await command(pilot, "/fork 1")
        await until(pilot, lambda: len(app.conversation.records) == 1)
        child = rig.current.id
        assert child != parent
        note = all_text(app.conversation.chat.query(SystemNote))
        assert f"**Forked session `{parent}` at turn 1 into `{child}`**" in note
        assert "Hello to you." not in chat_text(app)
        assert len(app.conversation.panel.entries) == 1

        await say(pilot, "hello from the fork")
        assert app.conversation.records[-1].number == 2
        contents = [m["content"] for m in rig.model.requests[-1].messages]
        assert "Use gdb." in contents and "Hello to you." not in contents

    meta = json.loads(load_session(child, rig.dirs).path.read_text().splitlines()[0])
    assert meta["parent"] == {"id": parent, "turn": 1}
    forked = load_session(child, rig.dirs)
    assert [r["content"] for r in forked.records if r["type"] == "user"] == [
        "my python script segfaults",
        "hello from the fork",
    ]
    assert len(load_session(parent, rig.dirs).records) > 0


async def test_rename_titles_the_session_being_recorded(make_rig: Callable[[], Rig]) -> None:
    rig = make_rig()
    rig.model.script(ScriptedReply("Hi."))
    async with build_app(rig.services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        await command(pilot, "/rename")
        assert "/rename needs a title" in plain(app.conversation.status)
        await say(pilot, "hello")
        await command(pilot, "/rename Greetings, tested")
        assert "is now titled “Greetings, tested”" in plain(app.conversation.status)
    assert list_sessions(rig.dirs)[0].title == "Greetings, tested"


def test_commands_are_listed_and_complete(tmp_path: Path) -> None:
    from modes_tui.frontend.commands import COMMAND_NAMES, complete

    assert {"/resume", "/fork", "/rename"} <= set(COMMAND_NAMES)
    assert complete("/resume 2026", [], ["20260101-000000-aaaa"]) == "/resume 20260101-000000-aaaa"
    assert complete("/res", []) == "/resume"


async def test_the_command_line_resume_wires_the_app(
    make_rig: Callable[[], Rig], capsys: pytest.CaptureFixture[str]
) -> None:
    from modes_tui.cli.parser import build_parser
    from modes_tui.runtime import RunOptions
    from modes_tui.runtime.tui_start import TuiStart

    first = await two_turns(make_rig)
    args = build_parser().parse_args(
        ["--model", "scripted/echo", "chat", "--classifier", "keyword", "--resume", first[:10]]
    )
    start = TuiStart(RunOptions.from_args(args))
    services = start.services()
    assert services.resumed is not None and services.resumed.id == first
    assert services.session_id() == first
    try:
        async with build_app(services, tz=UTC).run_test(size=SIZE) as pilot:
            app = await started(pilot)
            await until(pilot, lambda: len(app.conversation.records) == 2)
            await say(pilot, "hello, still there?")
            assert app.conversation.records[-1].number == 3
    finally:
        start.close_sessions()
    users = [r["content"] for r in load_session(first).records if r["type"] == "user"]
    assert users == ["my python script segfaults", "hello there", "hello, still there?"]


async def test_r_in_the_session_picker_resumes(make_rig: Callable[[], Rig]) -> None:
    first = await two_turns(make_rig)
    rig = make_rig()
    async with build_app(rig.services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        await command(pilot, "/sessions")
        await until(pilot, lambda: app.screen.__class__.__name__ == "SessionsScreen")
        await pilot.press("r")
        await until(pilot, lambda: len(app.conversation.records) == 2)
        assert rig.current.id == first
        assert app.screen.__class__.__name__ != "SessionsScreen"


async def test_a_turn_cut_off_by_a_crash_can_be_retried_after_resuming(
    make_rig: Callable[[], Rig],
) -> None:
    from modes_tui.core.history.conversation import Message
    from modes_tui.store.session_log import SessionLog

    dirs = app_dirs()
    crashed = SessionLog.create(dirs, pack="default", model="scripted/demo")
    crashed.record("user", 1, content="hello there")
    partial = Message("assistant", "Hello! I was about to", mode="chat").to_dict()
    crashed.record("assistant", 1, message=partial, usage=None, partial=True)
    crashed.close()  # the app died here: no final answer

    rig = make_rig()
    rig.model.script(ScriptedReply("Hello! I was about to say hi."))
    async with build_app(rig.services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        await command(pilot, "/resume latest")
        await until(pilot, lambda: len(app.conversation.records) == 1)
        assert app.conversation.records[0].status == "failed"
        assert "had not finished when the log ended" in all_text(
            app.conversation.chat.query(SystemNote)
        )
        await pilot.press("ctrl+r")
        await until(pilot, lambda: app.conversation.records[0].status == "finished")
        sent = rig.model.requests[-1].messages
        assert [m["role"] for m in sent] == ["system", "user"]  # the cut answer is dropped
    records = load_session(crashed.id, dirs).records
    assert [r.get("event") for r in records if r["type"] == "ui_event"] == ["resumed", "retry"]
    final = [r for r in records if r["type"] == "assistant" and not r.get("partial")]
    assert final[-1]["message"]["content"] == "Hello! I was about to say hi."
    assert final[-1]["turn"] == 1
