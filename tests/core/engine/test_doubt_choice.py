"""Doubt asked before the turn (issue 31 item 3, the engine's part): when the router is
unsure and someone can choose (the app's doubt dialog), the user's mode takes the turn and
is recorded as a correction of the router's pick; nobody to ask runs the pick."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.engine.engine import Engine
from modes_tui.core.engine.ports import Chooser
from modes_tui.core.engine.questions import ModeChoice, Question
from modes_tui.core.history.events import (
    RequestBuilt,
    RouteDecided,
    TurnCorrected,
    TurnEvent,
    TurnFinished,
)
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.corrections import MemoryCorrections
from modes_tui.core.routing.router import Router
from modes_tui.core.values.route import Decision
from modes_tui.llm.fake import ScriptedModel
from tests.core.engine.test_engine import Recorder
from tests.support.engine_support import with_config

MODES: dict[str, dict[str, Any]] = {
    "chat": {"description": "Chat."},
    "code": {"description": "Code."},
    "shell": {"description": "Terminal.", "auto_enter": "confirm"},
}


@dataclass
class Unsure:
    """Code at 0.46, shell close behind: unsure by ask_below (0.5) and by ask_margin."""

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
class Dialog:
    """Chooses `answer` when asked which mode; says yes to every other question."""

    answer: str | None = "shell"
    fails: bool = False
    choices: list[ModeChoice] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    async def confirm(self, call: Any, tool: Any) -> bool:
        return True

    async def ask(self, question: Question) -> bool:
        self.questions.append(question)
        return True

    async def choose(self, choice: ModeChoice) -> str | None:
        self.choices.append(choice)
        if self.fails:
            raise RuntimeError("the dialog broke")
        return self.answer


@dataclass
class YesOnly:
    """An asker that cannot choose a mode (the REPL's y/n prompt, a pipe)."""

    questions: list[Question] = field(default_factory=list)

    async def confirm(self, call: Any, tool: Any) -> bool:
        return True

    async def ask(self, question: Question) -> bool:
        self.questions.append(question)
        return True


@pytest.fixture
def pack(write_pack: Any) -> Pack:
    return load_pack(
        profiles_dir=write_pack(router={"classifier": "keyword", "fallback": "chat"}, modes=MODES)
    )


def engine_for(pack: Pack, dialog: Any, corrections: MemoryCorrections, **kw: Any) -> Engine:
    return Engine(
        **with_config(
            pack=pack,
            router=Router(pack, kw.pop("classifier", Unsure())),
            model=ScriptedModel(),
            default_model="scripted/echo",
            cwd=Path.cwd(),
            session=Recorder(),
            confirm=dialog,
            corrections=corrections,
        )
    )


async def play(engine: Engine, text: str = "my build breaks") -> list[TurnEvent]:
    events = [e async for e in engine.run_turn(text)]
    assert isinstance(events[-1], TurnFinished), events[-1]
    return events


def the_route(events: list[TurnEvent]) -> RouteDecided:
    return next(e for e in events if isinstance(e, RouteDecided))


def test_the_app_dialog_is_a_chooser_and_the_repl_asker_is_not() -> None:
    assert isinstance(Dialog(), Chooser)
    assert not isinstance(YesOnly(), Chooser)


async def test_the_runner_up_taken_runs_the_turn_and_is_recorded_as_a_correction(
    pack: Pack,
) -> None:
    dialog, store = Dialog("shell"), MemoryCorrections()
    events = await play(engine_for(pack, dialog, store))
    (choice,) = dialog.choices
    assert (choice.unsure.pick, choice.unsure.runner_up) == ("code", "shell")
    assert choice.message == "my build breaks"
    assert choice.modes == ("chat", "code", "shell")
    route = the_route(events).route
    assert (route.mode_name, route.decided_by) == ("shell", "caller")
    assert route.reason == "Chosen by you: the router was unsure (unsure: code 0.46 or shell 0.41)"
    assert route.unsure is not None  # the panel and the log still say it was unsure
    request = next(e for e in events if isinstance(e, RequestBuilt))
    assert request.mode == "shell"
    corrected = next(e for e in events if isinstance(e, TurnCorrected))
    assert (corrected.answered_mode, corrected.corrected_mode, corrected.rerun) == (
        "code",
        "shell",
        False,
    )
    (recorded,) = store.corrections()
    assert (recorded.routed_mode, recorded.corrected_mode, recorded.text) == (
        "code",
        "shell",
        "my build breaks",
    )
    # the user chose shell: its `auto_enter: confirm` question is not asked on top
    assert dialog.questions == []


async def test_taking_the_pick_runs_it_and_records_nothing(pack: Pack) -> None:
    dialog, store = Dialog("code"), MemoryCorrections()
    events = await play(engine_for(pack, dialog, store))
    route = the_route(events).route
    assert (route.mode_name, route.decided_by) == ("code", "classifier")
    assert not any(isinstance(e, TurnCorrected) for e in events)
    assert store.corrections() == ()


@pytest.mark.parametrize(
    "dialog", [YesOnly(), Dialog(None), Dialog(fails=True), Dialog("nonsense")], ids=str
)
async def test_nobody_choosing_runs_the_pick_and_keeps_the_doubt(pack: Pack, dialog: Any) -> None:
    store = MemoryCorrections()
    events = await play(engine_for(pack, dialog, store))
    route = the_route(events).route
    assert (route.mode_name, route.decided_by) == ("code", "classifier")
    assert route.unsure is not None and route.unsure.line() == "unsure: code 0.46 or shell 0.41"
    assert store.corrections() == ()


async def test_a_sure_route_and_a_forced_one_are_never_asked_about(pack: Pack) -> None:
    dialog = Dialog("shell")
    sure = engine_for(pack, dialog, MemoryCorrections(), classifier=Unsure(0.9))
    assert the_route(await play(sure)).route.mode_name == "code"
    forced = engine_for(pack, dialog, MemoryCorrections())
    events = [e async for e in forced.run_turn("my build breaks", force="chat")]
    assert the_route(events).route.mode_name == "chat"
    assert dialog.choices == []


async def test_a_retry_keeps_the_mode_the_user_chose(pack: Pack) -> None:
    dialog = Dialog("shell")
    engine = engine_for(pack, dialog, MemoryCorrections())
    await play(engine)
    retried = [e async for e in engine.retry()]
    route = the_route(retried).route
    assert route.mode_name == "shell"
    assert len(dialog.choices) == 1  # not asked again


@pytest.fixture
def guarded(write_pack: Any) -> Pack:
    """The modes behind a fallback threshold of 0.7, as the default pack has."""
    router = {"classifier": "keyword", "fallback": "chat", "below_confidence": 0.7}
    return load_pack(profiles_dir=write_pack(router=router, modes=MODES))


async def test_a_pick_just_under_the_threshold_asks_and_taking_it_teaches_the_router(
    guarded: Pack,
) -> None:
    # code at 0.65 under a threshold of 0.7: the turn would fall back to chat in silence
    dialog, store = Dialog("code"), MemoryCorrections()
    events = await play(engine_for(guarded, dialog, store, classifier=Unsure(0.65)))
    (choice,) = dialog.choices
    assert (choice.unsure.pick, choice.unsure.runner_up, choice.unsure.why) == (
        "chat",
        "code",
        "threshold",
    )
    assert choice.unsure.line() == "unsure: chat or code 0.65"
    route = the_route(events).route
    assert (route.mode_name, route.decided_by) == ("code", "caller")
    (recorded,) = store.corrections()
    assert (recorded.routed_mode, recorded.corrected_mode) == ("chat", "code")


async def test_enter_on_a_pick_under_the_threshold_keeps_the_fallback(guarded: Pack) -> None:
    dialog, store = Dialog("chat"), MemoryCorrections()
    events = await play(engine_for(guarded, dialog, store, classifier=Unsure(0.65)))
    route = the_route(events).route
    assert (route.mode_name, route.decided_by) == ("chat", "fallback")
    assert store.corrections() == ()
    far = Dialog("code")
    events = await play(engine_for(guarded, far, MemoryCorrections(), classifier=Unsure(0.5)))
    assert the_route(events).route.mode_name == "chat" and far.choices == []
