"""The doubt dialog (issue 31 item 3): the router is unsure, so before the turn runs the
app shows its pick and runner-up and takes either with one key (Enter, 2, or a mode key);
a word typed on goes to the prompt. Over the real engine and the corrections store."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from modes_tui.core.engine.engine import Engine
from modes_tui.core.engine.ports import Confirmer
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.routing.router import Router
from modes_tui.core.values.route import Decision
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.store.control import ControlFile
from modes_tui.store.corrections import CorrectionStore
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.confirm import DialogConfirmer
from modes_tui.tui.doubt import DoubtScreen
from modes_tui.tui.services import AppServices
from tests.conftest import PackWriter
from tests.support.engine_support import with_config
from tests.support.tui_support import FakeClock, all_text, editor_in, plain, until
from tests.support.tui_support import type_word as typed

SIZE = (100, 30)
MODES: dict[str, dict[str, Any]] = {
    "chat": {"description": "Chat."},
    "code": {"description": "Code."},
    "shell": {"description": "Terminal."},
}
ASKED = "my build breaks after the upgrade"


@dataclass
class UnsureClassifier:
    """Code at 0.46, shell at 0.41: below ask_below and within ask_margin (or code at
    `confidence`)."""

    confidence: float = 0.46

    def classify(
        self,
        message: str,
        history: Sequence[Any],
        modes: Sequence[Any],
        instructions: str,
        inputs: Mapping[str, Any],
    ) -> Decision:
        probabilities = {"code": self.confidence, "shell": 0.41, "chat": 0.13}
        return Decision("code", self.confidence, "nearest example: fix my build", probabilities)


@dataclass
class Rig:
    services: AppServices
    model: ScriptedModel
    store: CorrectionStore
    clock: FakeClock | None = None
    """Set before the app starts: its dialogs arm on this clock, not the real one."""


NEAR = "near the threshold"
"""`rig`'s parameter: a pack with a threshold of 0.7 (the default pack's) and code at 0.65."""


@pytest.fixture
def rig(tmp_path: Path, write_pack: PackWriter, request: pytest.FixtureRequest) -> Iterator[Rig]:
    near = getattr(request, "param", None) == NEAR
    router = {"fallback": "chat", "below_confidence": 0.7} if near else None
    pack: Pack = load_pack(profiles_dir=write_pack(router=router, modes=MODES))
    classifier = UnsureClassifier(0.65 if near else 0.46)
    dirs = app_dirs()
    store = CorrectionStore.for_pack(dirs.data, pack.name)
    model = ScriptedModel()
    model.responder = lambda request: ScriptedReply("answered")
    control = ControlFile(dirs.control_file, modes=lambda: pack.names)

    def engine(confirm: Confirmer) -> Engine:
        if rig.clock is not None and isinstance(confirm, DialogConfirmer):
            confirm.clock = rig.clock
        return Engine(
            **with_config(
                pack=pack,
                router=Router(pack, classifier),
                model=model,
                default_model="scripted/demo",
                control=control,
                confirm=confirm,
                cwd=tmp_path,
                corrections=store,
            )
        )

    services = AppServices(pack=pack, model="scripted/demo", control=control, build_engine=engine)
    rig = Rig(services, model, store)
    yield rig


async def ask(pilot: Pilot[None]) -> DoubtScreen:
    """Send the unsure message; the doubt dialog, once it takes answers."""
    app = pilot.app
    assert isinstance(app, ModesApp)
    await until(pilot, lambda: app.conversation.engine is not None)
    app.conversation.prompt.value = ASKED
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, DoubtScreen) and app.screen.armed)
    screen = app.screen
    assert isinstance(screen, DoubtScreen)
    return screen


async def answered(pilot: Pilot[None]) -> str:
    """The mode that answered the turn, once it ran."""
    app = pilot.app
    assert isinstance(app, ModesApp)
    await until(
        pilot, lambda: bool(app.conversation.records) and not app.conversation.turns.running
    )
    record = app.conversation.records[-1]
    assert record.answer == "answered"
    return f"answered in {record.mode}"


def screen_text(app: ModesApp) -> str:
    return all_text(app.screen.query("Static"))


async def test_the_dialog_shows_the_message_the_pick_and_the_runner_up(rig: Rig) -> None:
    app = build_app(rig.services, tz=UTC)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        shown = screen_text(app)
        assert "The router is unsure" in shown
        assert ASKED in shown
        assert "code" in shown and "0.46" in shown and "the router's pick" in shown
        assert "shell" in shown and "0.41" in shown and "runner-up" in shown
        assert "Enter: code · 2: shell" in shown
        assert rig.model.requests == []  # nothing runs before the user answers


async def test_enter_runs_the_pick_and_records_nothing(rig: Rig) -> None:
    app = build_app(rig.services, tz=UTC)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("enter")
        assert await answered(pilot) == "answered in code"
        assert rig.store.corrections() == ()
        route = app.conversation.records[-1].route
        assert route is not None and route.decided_by == "classifier"


async def test_2_runs_the_runner_up_and_records_a_correction(rig: Rig) -> None:
    app = build_app(rig.services, tz=UTC)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("2")
        assert await answered(pilot) == "answered in shell"
        (correction,) = rig.store.corrections()
        assert (correction.routed_mode, correction.corrected_mode) == ("code", "shell")
        assert correction.text == ASKED
        turn = all_text(app.conversation.chat.query("Static"))
        assert "correction recorded: code → shell" in turn
        assert "Chosen by you" in turn


async def test_a_mode_key_runs_that_mode_and_records_a_correction(rig: Rig) -> None:
    app = build_app(rig.services, tz=UTC)
    async with app.run_test(size=SIZE) as pilot:
        screen = await ask(pilot)
        assert screen.keys == {"f2": "chat", "f3": "code", "f4": "shell"}
        assert "f2 chat" in screen_text(app)  # the modes that are neither, with their keys
        await pilot.press("f2")
        assert await answered(pilot) == "answered in chat"
        (correction,) = rig.store.corrections()
        assert (correction.routed_mode, correction.corrected_mode) == ("code", "chat")
        # the key answered the dialog: it did not also force chat for every later turn
        assert app.conversation.reading.mode == "auto"


async def type_word(pilot: Pilot[None], word: str) -> None:
    """Type `word` as a typist does (`tui_support.type_word`), until it is in the prompt or
    one of its keys closed the dialog."""
    app = pilot.app
    assert isinstance(app, ModesApp)
    await typed(
        pilot,
        word,
        lambda: (
            app.conversation.prompt.value.endswith(word) or not isinstance(app.screen, DoubtScreen)
        ),
    )


@pytest.mark.parametrize("word", ["ipv2 ", "use 2 or 1 "])
async def test_a_word_typed_on_goes_to_the_prompt_and_answers_nothing(rig: Rig, word: str) -> None:
    app = build_app(rig.services, tz=UTC)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await type_word(pilot, word)
        assert isinstance(app.screen, DoubtScreen), "a digit inside a word answered the dialog"
        assert app.conversation.prompt.value == word
        assert rig.model.requests == []
        assert "waiting for your pick" in plain(app.screen.query_one("#answer-hint"))
        # after a quiet moment, a lone 2 answers
        await until(pilot, lambda: isinstance(app.screen, DoubtScreen) and app.screen.armed)
        await pilot.press("2")
        assert await answered(pilot) == "answered in shell"
        assert app.conversation.prompt.value == word  # the typed words are kept for later


async def test_keys_typed_before_the_dialog_arms_go_to_the_prompt(rig: Rig) -> None:
    rig.clock = clock = FakeClock()  # the dialog arms when the test says, however loaded the box
    app = build_app(rig.services, tz=UTC)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.conversation.engine is not None)
        app.conversation.prompt.value = ASKED
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, DoubtScreen))
        await pilot.press("2", "enter")  # early: typed on, not read
        assert isinstance(app.screen, DoubtScreen)
        assert app.conversation.prompt.value == "2"
        clock.pass_arming()  # a quiet moment
        await until(pilot, lambda: isinstance(app.screen, DoubtScreen) and app.screen.armed)
        await pilot.press("enter")
        assert await answered(pilot) == "answered in code"


def dialog_snapshot(rig: Rig, snap_compare: Any) -> bool:
    """The app at 80x24 with the doubt dialog open over it, against its snapshot."""

    async def run_before(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await editor_in(pilot)
        app.conversation.prompt.cursor_blink = False
        app.conversation.status.animated = False
        await ask(pilot)
        await pilot.pause(0.2)

    return bool(
        snap_compare(build_app(rig.services, tz=UTC), terminal_size=(80, 24), run_before=run_before)
    )


def test_the_doubt_dialog_snapshot(rig: Rig, snap_compare: Any) -> None:
    assert dialog_snapshot(rig, snap_compare)


@pytest.mark.parametrize("rig", [NEAR], indirect=True, ids=["near"])
async def test_a_pick_just_under_the_threshold_offers_the_fallback_and_the_pick(rig: Rig) -> None:
    app = build_app(rig.services, tz=UTC)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        shown = screen_text(app)
        assert "code fell just short of the threshold" in shown
        assert "the fallback" in shown and "0.65" in shown and "the router's pick" in shown
        assert "Enter: chat · 2: code" in shown
        await pilot.press("2")
        assert await answered(pilot) == "answered in code"
        (correction,) = rig.store.corrections()
        assert (correction.routed_mode, correction.corrected_mode) == ("chat", "code")


@pytest.mark.parametrize("rig", [NEAR], indirect=True, ids=["near"])
def test_the_doubt_dialog_near_the_threshold_snapshot(rig: Rig, snap_compare: Any) -> None:
    assert dialog_snapshot(rig, snap_compare)
