"""Correcting a turn in the app, over the real engine, the embedding router (a hashing
encoder stands in for the model), the corrections store, the control file and the session
log: what the user sees, what is recorded, and what the router learns."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Collapsible, OptionList

from modes_tui.core.engine.config import EngineConfig
from modes_tui.core.engine.engine import Engine
from modes_tui.core.engine.ports import Confirmer
from modes_tui.core.model.wire import ModelRequest
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.routing.classifiers.embedding import EmbeddingClassifier
from modes_tui.core.routing.router import Router
from modes_tui.core.values import two_places
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.store.control import ControlFile
from modes_tui.store.corrections import CorrectionStore
from modes_tui.store.session_log import SessionLog
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.correct import CorrectScreen
from modes_tui.tui.replay import ReplayScreen
from modes_tui.tui.services import AppServices
from modes_tui.tui.sessions import StoreSessions
from modes_tui.tui.turn_view import AnswerSegment, TurnView
from tests.conftest import PackWriter
from tests.support.fake_encoder import HashingEncoder
from tests.support.tui_support import all_text, plain, until

SIZE = (120, 40)
MODES: dict[str, dict[str, Any]] = {
    "chat": {
        "description": "Small talk and quick questions about films, food and travel.",
        "examples": ["recommend a film for tonight", "what should I cook for dinner"],
    },
    "code": {
        "description": "Programs, bugs, stack traces and failing tests.",
        "examples": ["my python function raises a keyerror", "why does this loop never end"],
    },
    "shell": {
        "description": "Terminal commands, git and docker.",
        "examples": ["undo my last git commit", "list running docker containers"],
    },
}
ASKED = "recommend a good tool to compare two folders"
"""Nearest to a chat example; the user meant the shell."""
ASKED_AGAIN = "recommend a good tool to compare two directories"


@dataclass
class Rig:
    """The app's parts, kept for assertions."""

    services: AppServices
    pack: Pack
    model: ScriptedModel
    control: ControlFile
    store: CorrectionStore
    log: SessionLog
    encoder: HashingEncoder


def numbered(model: ScriptedModel) -> Callable[[ModelRequest], ScriptedReply]:
    return lambda request: ScriptedReply(f"reply {len(model.requests)}")


def correcting(pack: Pack, cwd: Path, *, fallback_is_negative: bool = False) -> Rig:
    """The app's parts over the real engine and the embedding router with the corrections
    store; `fallback_is_negative`: corrections to the pack's fallback teach the router what no
    mode should take. Close `log` when done."""
    dirs = app_dirs()
    control = ControlFile(dirs.control_file, modes=lambda: pack.names)
    store = CorrectionStore.for_pack(dirs.data, pack.name)
    encoder = HashingEncoder()
    model = ScriptedModel()
    model.responder = numbered(model)
    log = SessionLog.create(dirs, pack=pack.name, model="scripted/demo")

    def router() -> Router:
        classifier = EmbeddingClassifier(
            lambda: encoder,
            encoder_name=encoder.name,
            modes=pack.profiles,
            corrections=store,
            fallback=pack.router.fallback if fallback_is_negative else None,
        )
        return Router(pack, classifier)

    def engine(confirm: Confirmer) -> Engine:
        return Engine(
            config=EngineConfig(default_model="scripted/demo", cwd=cwd),
            pack=pack,
            router=router(),
            model=model,
            control=control,
            session=log,
            confirm=confirm,
            corrections=store,
        )

    services = AppServices(
        pack=pack,
        model="scripted/demo",
        control=control,
        build_engine=engine,
        sessions=StoreSessions(dirs, router, export_dir=cwd),
        session_id=lambda: log.id,
    )
    return Rig(services, pack, model, control, store, log, encoder)


@pytest.fixture
def rig(tmp_path: Path, write_pack: PackWriter) -> Iterator[Rig]:
    pack = load_pack(
        profiles_dir=write_pack(router={"classifier": "embedding", "fallback": "chat"}, modes=MODES)
    )
    rig = correcting(pack, tmp_path)
    yield rig
    rig.log.close()


def idle(app: ModesApp) -> Callable[[], bool]:
    return lambda: app.conversation.engine is not None and not app.conversation.turns.running


async def say(pilot: Pilot[None], text: str) -> None:
    app = pilot.app
    assert isinstance(app, ModesApp)
    await until(pilot, idle(app))
    app.conversation.prompt.value = text
    await pilot.press("enter")
    await pilot.pause(0.05)
    await until(pilot, idle(app))


def folds(app: ModesApp) -> list[Collapsible]:
    return list(app.conversation.chat.query("Collapsible.superseded").results(Collapsible))


def cards(app: ModesApp) -> list[str]:
    """Each card's words, a line that wraps under its label read as one line."""
    options = app.conversation.panel.options
    return [
        re.sub(r"\n {4,}", " ", str(options.get_option_at_index(i).prompt))
        for i in range(options.option_count)
    ]


async def test_ctrl_e_re_runs_the_turn_folds_the_first_answer_and_the_router_learns(
    rig: Rig,
) -> None:
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await say(pilot, ASKED)
        record = app.conversation.records[0]
        assert record.mode == "chat" and record.answer == "reply 1"

        await pilot.press("ctrl+e")
        await until(pilot, lambda: isinstance(app.screen, CorrectScreen))
        picker = app.screen
        assert isinstance(picker, CorrectScreen)
        shown = all_text(picker.query("Static"))
        assert "Turn 1 answered in chat" in shown and ASKED in shown
        modes = picker.query_one("#correct-modes", OptionList)
        lines = [str(o.prompt) for o in modes.options]
        # every mode, most probable first, with the router's probability beside it
        assert [line.split()[1] for line in lines] == [name for name, _ in picker.choices]
        probabilities = record.route.decision.probabilities  # type: ignore[union-attr]
        for line, (name, _) in zip(lines, picker.choices, strict=True):
            assert two_places(probabilities[name]) in line
        assert "(router's pick, answered)" in lines[0] and lines[0].split()[1] == "chat"
        await pilot.press(str(1 + [n for n, _ in picker.choices].index("shell")))
        await pilot.pause(0.05)
        await until(pilot, idle(app))

        # the re-run answers, the first answer stays on screen, folded and marked
        assert record.answer == "reply 2" and record.mode == "shell"
        (fold,) = folds(app)
        assert fold.collapsed and fold.title == "answered in chat, corrected to shell"
        assert "reply 1" in all_text(fold.query(AnswerSegment))
        view = app.conversation.chat.query_one(TurnView)
        assert "Corrected by you (was chat)" in plain(view.query_one(".route"))
        newest, older = cards(app)
        assert "this turn corrected: chat → shell" in newest and "/wrong undo" in newest
        assert "✗ answered in chat, corrected to shell" in older

        # the shared history keeps only the re-run; the re-run never saw the first answer
        engine = app.conversation.engine
        assert isinstance(engine, Engine)
        assert [m.content for m in engine.conversation.messages] == [ASKED, "reply 2"]
        assert "reply 1" not in str(rig.model.requests[-1].messages)

        # the correction is in the store, with what the router saw
        (correction,) = rig.store.corrections()
        assert (correction.text, correction.routed_mode, correction.corrected_mode) == (
            ASKED,
            "chat",
            "shell",
        )
        assert (correction.classifier, correction.encoder) == ("embedding", "fake/hashing")
        assert (correction.session_id, correction.turn, correction.pack) == (
            rig.log.id,
            1,
            rig.pack.name,
        )

        # the control file was never written: the next turn is routed, and it learned
        assert rig.control.read().mode == "auto"
        assert not rig.control.path.exists()
        await say(pilot, ASKED_AGAIN)
        learned = app.conversation.records[1].route
        assert learned is not None
        assert (learned.mode_name, learned.decided_by) == ("shell", "classifier")
        assert "like your correction" in (learned.reason or "")
        assert "like your correction" in cards(app)[0]


async def test_wrong_mode_skips_the_picker_and_wrong_undo_forgets_the_correction(
    rig: Rig,
) -> None:
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await say(pilot, ASKED)
        await say(pilot, "/wrong shell")
        assert not isinstance(app.screen, CorrectScreen)
        assert app.conversation.records[0].answer == "reply 2" and len(folds(app)) == 1
        assert [c.corrected_mode for c in rig.store.corrections()] == ["shell"]

        await say(pilot, "/wrong undo")
        assert rig.store.corrections() == ()
        assert "Forgot the correction of turn 1 (chat → shell); the answers stay." in (
            app.conversation.status.activity or plain(app.conversation.status)
        )
        assert "· undone" in cards(app)[0]
        # the answers stay as they were; the router forgot
        assert app.conversation.records[0].answer == "reply 2" and len(folds(app)) == 1
        await say(pilot, ASKED_AGAIN)
        assert app.conversation.records[1].route.mode_name == "chat"  # type: ignore[union-attr]

        await say(pilot, "/wrong undo")
        assert "no correction to undo" in plain(app.conversation.status)


async def test_forcing_a_mode_and_resending_counts_as_a_correction(rig: Rig) -> None:
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await say(pilot, ASKED)
        shell_key = next(mk.key for mk in app.mode_keys if mk.mode == "shell")
        assert shell_key is not None
        await pilot.press(shell_key)
        await say(pilot, ASKED)

        assert rig.control.read().mode == "shell"  # the user's own forcing stays
        (correction,) = rig.store.corrections()
        assert (correction.turn, correction.routed_mode, correction.corrected_mode) == (
            1,
            "chat",
            "shell",
        )
        assert "counts as a correction of turn 1: chat → shell" in cards(app)[0]
        view = app.conversation.chat.query(TurnView).last()
        assert "counts as a correction of turn 1" in plain(view.query_one(".route"))
        assert folds(app) == []  # both answers stay: the user asked twice

        await say(pilot, "/wrong undo")
        assert rig.store.corrections() == ()
        assert "· undone" in cards(app)[0]


async def test_what_cannot_be_corrected_is_said_and_nothing_is_lost(rig: Rig) -> None:
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await until(pilot, idle(app))
        await pilot.press("ctrl+e")
        assert "No turn to correct yet" in plain(app.conversation.status)
        assert not isinstance(app.screen, CorrectScreen)

        await say(pilot, ASKED)
        app.conversation.prompt.value = "/wrong nope"
        await pilot.press("enter")
        assert app.conversation.prompt.value == "/wrong nope"  # kept to fix
        assert "/wrong takes a mode or undo, not 'nope'" in plain(app.conversation.status)

        app.conversation.prompt.value = ""
        await say(pilot, "/wrong chat")
        assert "turn 1 was already answered in chat" in plain(app.conversation.status)

        # Esc closes the picker without correcting
        await pilot.press("ctrl+e")
        await until(pilot, lambda: isinstance(app.screen, CorrectScreen))
        await pilot.press("escape")
        await pilot.pause(0.05)
        assert not isinstance(app.screen, CorrectScreen)
        assert rig.store.corrections() == () and app.conversation.records[0].answer == "reply 1"


async def test_a_decision_selected_in_the_panel_corrects_that_earlier_turn(rig: Rig) -> None:
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await say(pilot, ASKED)
        await say(pilot, "why does this loop never end")
        app.conversation.panel.options.focus()
        app.conversation.panel.options.highlighted = 1  # newest first: the second card is turn 1
        await pilot.pause(0.05)
        await pilot.press("ctrl+e")
        await until(pilot, lambda: isinstance(app.screen, CorrectScreen))
        picker = app.screen
        assert isinstance(picker, CorrectScreen) and picker.record is app.conversation.records[0]
        await pilot.press(str(1 + [n for n, _ in picker.choices].index("shell")))
        await pilot.pause(0.05)
        await until(pilot, idle(app))

        # recorded for the router; the earlier answer is not re-run (later turns followed it)
        (correction,) = rig.store.corrections()
        assert (correction.turn, correction.corrected_mode) == (1, "shell")
        assert [r.answer for r in app.conversation.records] == ["reply 1", "reply 2"]
        assert folds(app) == []
        assert "correction recorded: chat → shell" in cards(app)[1]


async def test_the_replayed_session_shows_the_folded_answer_and_the_re_run(rig: Rig) -> None:
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await say(pilot, ASKED)
        await say(pilot, "/wrong code")
        requests = len(rig.model.requests)
        await say(pilot, f"/replay {rig.log.id}")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        screen = app.screen
        await until(pilot, lambda: bool(screen.query("Collapsible.superseded")))
        (fold,) = screen.query("Collapsible.superseded").results(Collapsible)
        assert fold.title == "answered in chat, corrected to code"
        assert "reply 2" in all_text(screen.query(AnswerSegment))
        assert len(rig.model.requests) == requests  # no model was called


async def test_the_correct_key_can_be_rebound(rig: Rig) -> None:
    rig.services.keymap = {"turn.correct": "f12"}
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await say(pilot, ASKED)
        await pilot.press("ctrl+e")
        await pilot.pause(0.05)
        assert not isinstance(app.screen, CorrectScreen)
        await pilot.press("f12")
        await until(pilot, lambda: isinstance(app.screen, CorrectScreen))


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("/wrong", ""),
        ("/wrong shell", "shell"),
        ("/wrong undo", "undo"),
        ("/WRONG  code ", "code"),
    ],
)
def test_wrong_parses_a_mode_or_undo(typed: str, expected: str) -> None:
    from modes_tui.frontend.commands import mode_settings
    from modes_tui.frontend.lines import read_line as parse_command

    assert parse_command(typed, mode_settings(["chat", "code", "shell"])).argument == expected


@pytest.mark.parametrize("typed", ["/wrong auto", "/wrong off", "/wrong nope"])
def test_wrong_refuses_what_is_not_a_mode(typed: str) -> None:
    from modes_tui.frontend.commands import CommandError, mode_settings
    from modes_tui.frontend.lines import read_line as parse_command

    with pytest.raises(CommandError, match="choose one of: chat, code, undo"):
        parse_command(typed, mode_settings(["chat", "code"]))


def test_wrong_completes_modes_and_undo() -> None:
    from modes_tui.frontend.commands import complete, mode_settings

    settings = mode_settings(["chat", "code", "shell"])
    assert complete("/wr", settings) == "/wrong"
    assert complete("/wrong ", settings) == "/wrong chat"
    assert complete("/wrong s", settings) == "/wrong shell"
    assert complete("/wrong u", settings) == "/wrong undo"


async def open_picker(pilot: Pilot[None]) -> CorrectScreen:
    app = pilot.app
    await say(pilot, ASKED)
    await pilot.press("ctrl+e")
    await until(pilot, lambda: isinstance(app.screen, CorrectScreen))
    assert isinstance(app.screen, CorrectScreen)
    return app.screen


async def test_letters_in_the_picker_find_a_mode_by_name(rig: Rig) -> None:
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        picker = await open_picker(pilot)
        await pilot.press("s", "h")
        modes = picker.query_one("#correct-modes", OptionList)
        assert modes.highlighted is not None
        assert picker.choices[modes.highlighted][0] == "shell"
        assert "“sh”: shell" in all_text(picker.query("#correct-hint"))
        await pilot.press("enter")
        await until(pilot, idle(app))
        assert app.conversation.records[0].mode == "shell"
        assert [c.corrected_mode for c in rig.store.corrections()] == ["shell"]


async def test_a_word_typed_into_the_picker_never_picks_a_mode_by_its_digit(rig: Rig) -> None:
    """Typed into a picker opened by mistake, "ipv2" then Enter corrects nothing: after a
    letter the 2 is part of the name, and Enter on a name that matches no mode does nothing."""
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        picker = await open_picker(pilot)
        await pilot.press("i", "p", "v", "2", "enter")
        await pilot.pause(0.05)
        assert app.screen is picker
        assert "no mode to pick starts with “ipv2”" in all_text(picker.query("#correct-hint"))
        for _ in range(4):
            await pilot.press("backspace")
        await pilot.press("2")  # alone, a digit picks as before
        await until(pilot, idle(app))
        assert not isinstance(app.screen, CorrectScreen)
        assert [c.corrected_mode for c in rig.store.corrections()] == [picker.choices[1][0]]


def test_a_finished_turn_has_its_answer_encoded_for_the_next_follow_up(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    """The engine hands each answer to the router when its turn ends; the router encodes its
    start in the background, so the next message's follow-up check finds it cached."""
    pack = load_pack(
        profiles_dir=write_pack(router={"classifier": "embedding", "fallback": "chat"}, modes=MODES)
    )
    rig = correcting(pack, tmp_path)
    try:
        engine = rig.services.build_engine(lambda *_: True)  # type: ignore[arg-type]
        classifier = engine.router.classifier
        assert isinstance(classifier, EmbeddingClassifier)
        classifier.wait(10)

        async def one_turn() -> None:
            async for _ in engine.run_turn(ASKED):
                pass

        asyncio.run(one_turn())
        deadline = time.monotonic() + 10
        while "reply 1" not in rig.encoder.texts and time.monotonic() < deadline:
            time.sleep(0.01)
        assert rig.encoder.texts[-1] == "reply 1"  # after the question, once it was answered
    finally:
        rig.log.close()


async def test_the_picker_keeps_space_arrows_and_the_users_keymap_keys(rig: Rig) -> None:
    """A leading space is no name (Enter still picks), an arrow ends a name that matched
    nothing (Enter picks the row it chose), and a letter the keymap gave the picker (here
    `q` for close) keeps its action."""
    services = replace(rig.services, keymap={"correct.close": "q"})
    async with build_app(services, tz=UTC).run_test(size=SIZE) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        picker = await open_picker(pilot)
        await pilot.press("q")
        await until(pilot, lambda: not isinstance(app.screen, CorrectScreen))
        assert not rig.store.corrections()

        picker = await open_picker(pilot)
        await pilot.press("x")
        assert "no mode to pick starts with “x”" in all_text(picker.query("#correct-hint"))
        await pilot.press("down")
        assert "letters: find a mode" in all_text(picker.query("#correct-hint"))
        chosen = picker.choices[2][0]  # the first pickable row is 1; down moved to 2
        await pilot.press("enter")
        await until(pilot, idle(app))
        assert [c.corrected_mode for c in rig.store.corrections()][-1] == chosen

        picker = await open_picker(pilot)
        highlighted = picker.query_one("#correct-modes", OptionList).highlighted
        assert highlighted is not None
        await pilot.press("space", "enter")
        await until(pilot, idle(app))
        assert not isinstance(app.screen, CorrectScreen)
        assert [c.corrected_mode for c in rig.store.corrections()][-1] == (
            picker.choices[highlighted][0]
        )
