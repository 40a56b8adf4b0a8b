"""auto_enter: allow | confirm | never, and forcing a mode never calls the classifier."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.engine.questions import Question
from modes_tui.core.errors import DeclarationError
from modes_tui.core.history.events import RouteDecided, TurnEvent, TurnFinished
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.router import Router
from modes_tui.core.values.route import Decision
from modes_tui.llm.fake import ScriptedModel
from tests.core.engine.test_engine import Control, Recorder
from tests.support.repl_support import answer_when_asked, within

MODES: dict[str, dict[str, Any]] = {
    "chat": {"description": "Chat."},
    "shell": {"description": "Terminal.", "auto_enter": "confirm"},
    "admin": {"description": "Dangerous admin work.", "auto_enter": "never"},
    "code": {"description": "Code.", "auto_enter": "allow"},
}


@dataclass
class CountingClassifier:
    """Picks `pick`; counts its calls and remembers the candidates it was shown."""

    pick: str = "shell"
    calls: int = 0
    candidates: list[list[str]] = field(default_factory=list)

    def classify(
        self,
        message: str,
        history: Sequence[Any],
        modes: Sequence[Any],
        instructions: str,
        inputs: Mapping[str, Any],
    ) -> Decision:
        self.calls += 1
        self.candidates.append([mode.name for mode in modes])
        return Decision(self.pick, 0.9, "picked by the test")


@dataclass
class Asker:
    """Answers every question with `answer`; remembers them."""

    answer: bool = True
    questions: list[Question] = field(default_factory=list)

    async def confirm(self, call: Any, tool: Any) -> bool:
        return True

    async def ask(self, question: Question) -> bool:
        self.questions.append(question)
        return self.answer


@pytest.fixture
def pack(write_pack: Any) -> Pack:
    return load_pack(
        profiles_dir=write_pack(router={"classifier": "keyword", "fallback": "chat"}, modes=MODES)
    )


def engine_for(pack: Pack, classifier: CountingClassifier, **kwargs: Any) -> Any:
    from modes_tui.core.engine.engine import Engine
    from tests.support.engine_support import with_config

    kwargs.setdefault("session", Recorder())
    return Engine(
        **with_config(
            pack=pack,
            router=Router(pack, classifier),
            model=ScriptedModel(),
            default_model="scripted/echo",
            cwd=Path.cwd(),
            **kwargs,
        )
    )


async def route_of(engine: Any, text: str = "hi", **kwargs: Any) -> RouteDecided:
    events: list[TurnEvent] = [e async for e in engine.run_turn(text, **kwargs)]
    assert isinstance(events[-1], TurnFinished), events[-1]
    return next(e for e in events if isinstance(e, RouteDecided))


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("modes", "router", "problem"),
    [
        (
            {"chat": {"description": "C."}, "x": {"description": "X.", "auto_enter": "ask"}},
            {"fallback": "chat"},
            "x.yaml: auto_enter: 'ask' is not one of allow, confirm, never",
        ),
        (
            {"chat": {"description": "C.", "auto_enter": "confirm"}},
            {"fallback": "chat"},
            "router.yaml: fallback: 'chat' has auto_enter other than allow",
        ),
        (
            {"chat": {"description": "C.", "auto_enter": "never"}},
            {"fallback": "chat"},
            "router.yaml: fallback: 'chat' has auto_enter other than allow",
        ),
        (
            {"chat": {"description": "C.", "auto_enter": True}},
            {"fallback": "chat"},
            "chat.yaml: auto_enter: True is not one of allow, confirm, never",
        ),
    ],
)
def test_a_bad_auto_enter_is_a_declaration_problem(
    write_pack: Any, modes: dict[str, Any], router: dict[str, Any], problem: str
) -> None:
    with pytest.raises(DeclarationError) as caught:
        load_pack(profiles_dir=write_pack(router={"classifier": "keyword", **router}, modes=modes))
    assert problem in str(caught.value)


def test_the_shipped_shell_mode_asks_first() -> None:
    pack = load_pack("default")
    shell = pack.get("shell")
    assert shell is not None and shell.auto_enter == "confirm"
    assert {p.name: p.auto_enter for p in pack.profiles if p.name != "shell"} == {
        p.name: "allow" for p in pack.profiles if p.name != "shell"
    }


# --------------------------------------------------------------------------- never


async def test_a_never_mode_is_not_among_the_classifiers_candidates(pack: Pack) -> None:
    classifier = CountingClassifier(pick="code")
    router = Router(pack, classifier)
    from modes_tui.core.history.conversation import Message

    route = await router.route([Message("user", "hi")])
    assert route.mode_name == "code"
    assert classifier.candidates == [["chat", "code", "shell"]]


async def test_a_classifier_that_names_a_never_mode_gets_the_fallback(pack: Pack) -> None:
    from modes_tui.core.history.conversation import Message

    route = await Router(pack, CountingClassifier(pick="admin")).route([Message("user", "x")])
    assert (route.mode_name, route.decided_by, route.reason) == (
        "chat",
        "fallback",
        "Unknown mode admin",
    )


async def test_a_never_mode_can_be_forced(pack: Pack) -> None:
    classifier = CountingClassifier()
    engine = engine_for(pack, classifier)
    decided = await route_of(engine, force="admin")
    assert decided.route.mode_name == "admin" and decided.route.forced


# --------------------------------------------------------------------------- forcing is free


async def test_a_forced_turn_makes_no_classifier_call(pack: Pack) -> None:
    classifier = CountingClassifier()
    control = Control("code")
    engine = engine_for(pack, classifier, control=control)
    await route_of(engine)  # forced by the control file
    await route_of(engine, force="shell")  # forced by a key or /mode
    assert classifier.calls == 0
    control.mode = "auto"
    await route_of(engine, force="auto")
    assert classifier.calls == 1


# --------------------------------------------------------------------------- confirm


async def test_confirm_asks_before_the_router_enters_the_mode(pack: Pack) -> None:
    asker = Asker(answer=True)
    engine = engine_for(pack, CountingClassifier(pick="shell"), confirm=asker)
    decided = await route_of(engine, "undo my commit")
    assert decided.route.mode_name == "shell" and decided.route.decided_by == "classifier"
    assert [q.kind for q in asker.questions] == ["enter_mode"]
    assert asker.questions[0].title == "Enter shell?"
    assert "picked by the test" in asker.questions[0].text
    # staying in shell does not ask again
    await route_of(engine, "and the one before")
    assert len(asker.questions) == 1


async def test_a_one_shot_into_the_mode_is_no_consent_for_the_next_routed_turn(
    pack: Pack,
) -> None:
    # `/shell what does ls -la do`, then a message the router puts in shell: it used to
    # enter shell unasked, because the one-shot turn had left the conversation "in" shell
    asker = Asker(answer=True)
    engine = engine_for(pack, CountingClassifier(pick="shell"), confirm=asker)
    one_shot = await route_of(engine, "what does ls -la do", force="shell")
    assert one_shot.route.one_shot and asker.questions == []
    decided = await route_of(engine, "how do I undo my last git commit?")
    assert decided.route.mode_name == "shell"
    assert [q.title for q in asker.questions] == ["Enter shell?"]


async def test_a_no_sends_the_turn_to_the_fallback_and_says_why(pack: Pack) -> None:
    asker = Asker(answer=False)
    session = Recorder()
    engine = engine_for(pack, CountingClassifier(pick="shell"), confirm=asker, session=session)
    decided = await route_of(engine, "undo my commit")
    route = decided.route
    assert (route.mode_name, route.decided_by, route.runner_up) == ("chat", "fallback", "shell")
    assert route.reason == "Entering shell declined (auto_enter: confirm)"
    assert route.decision is not None and route.decision.mode_name == "shell"  # kept for /why
    assert session.of("route")[0]["route"]["reason"] == route.reason
    assert engine.conversation.messages[-1].mode == "chat"


async def test_without_anyone_to_ask_the_router_never_enters_a_confirm_mode(pack: Pack) -> None:
    engine = engine_for(pack, CountingClassifier(pick="shell"))  # no confirmer: a pipe
    decided = await route_of(engine)
    assert decided.route.mode_name == "chat"
    assert decided.route.reason == "Entering shell needs a yes, and nobody can answer here"


async def test_forcing_a_confirm_mode_does_not_ask(pack: Pack) -> None:
    asker = Asker(answer=False)
    engine = engine_for(pack, CountingClassifier(), confirm=asker)
    decided = await route_of(engine, force="shell")
    assert decided.route.mode_name == "shell" and asker.questions == []


async def test_a_broken_dialog_counts_as_no(pack: Pack) -> None:
    class Broken(Asker):
        async def ask(self, question: Question) -> bool:
            raise RuntimeError("the dialog fell over")

    engine = engine_for(pack, CountingClassifier(pick="shell"), confirm=Broken())
    decided = await route_of(engine)
    assert decided.route.mode_name == "chat"


@pytest.mark.parametrize(
    ("typed", "expected"),
    [("y\r", True), ("n\r", False), ("\r", False), ("\x03", False), ("\x04", False)],
)
async def test_the_repl_asks_on_the_prompt(typed: str, expected: bool) -> None:
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from modes_tui.repl.questions import PromptConfirmer

    with create_pipe_input() as pipe:
        asker = PromptConfirmer(input=pipe, output=DummyOutput(), arming=0)
        question = Question("enter_mode", "Enter shell?", "Answer in shell?")
        asked = asyncio.create_task(asker.ask(question))
        await answer_when_asked(asker, pipe, typed)
        assert await within(asked) is expected


async def test_the_repl_asks_before_entering_shell_and_routes_by_the_answer(pack: Pack) -> None:
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from modes_tui.repl.questions import PromptConfirmer

    with create_pipe_input() as pipe:
        asker = PromptConfirmer(input=pipe, output=DummyOutput(), arming=0)
        engine = engine_for(pack, CountingClassifier(pick="shell"), confirm=asker)
        routed = asyncio.create_task(route_of(engine))
        await answer_when_asked(asker, pipe, "n\r")
        assert (await within(routed)).route.mode_name == "chat"
        routed = asyncio.create_task(route_of(engine))
        await answer_when_asked(asker, pipe, "y\r", prompt=2)
        assert (await within(routed)).route.mode_name == "shell"
