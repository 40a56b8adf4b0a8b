"""A hand-off is a move the user did not make (issue 29 item 2): into a mode with
`auto_enter: confirm` it is asked like the router's pick; where nobody can answer (a pipe)
it is declined and the turn goes on in the mode it was in, saying so; once entered, the
target's own policy decides its tool calls from the first."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modes_tui.core.engine.engine import Engine
from modes_tui.core.engine.questions import Question
from modes_tui.core.history.events import (
    RequestBuilt,
    RouteDecided,
    ToolCallFinished,
    TurnEvent,
    TurnFinished,
)
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from tests.conftest import PackWriter
from tests.support.engine_support import engine_config

HAND = ("switch_mode", {"mode": "shell", "reason": "this needs a command run"})
RUN = ("run_command", {"command": "echo ran > ran.txt"})


def gated_pack(write_pack: PackWriter, **shell: Any) -> Pack:
    modes = {
        "chat": {"description": "Everyday chat.", "keywords": ["hello"], "tools": ["switch_mode"]},
        "shell": {
            "description": "Shell.",
            "keywords": ["terminal"],
            "auto_enter": "confirm",
            "tools": ["run_command"],
            "permissions": {"run_command": "allow"},
            **shell,
        },
    }
    return load_pack(
        profiles_dir=write_pack(router={"classifier": "keyword", "fallback": "chat"}, modes=modes)
    )


@dataclass
class Answering:
    """Answers questions with `answer`, tool calls with `confirms`; remembers both."""

    answer: bool
    confirms: bool = False
    questions: list[Question] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)

    async def confirm(self, call: Any, tool: Any, preview: Any = None) -> bool:
        self.confirmed.append(call.name)
        return self.confirms

    async def ask(self, question: Question) -> bool:
        self.questions.append(question)
        return self.answer


@dataclass
class NobodyToAsk:
    """A pipe's confirmer: no `ask`, every tool call refused."""

    async def confirm(self, call: Any, tool: Any, preview: Any = None) -> bool:
        return False


def an_engine(pack: Pack, root: Path, model: Any, confirm: Any) -> Engine:
    return Engine(
        pack=pack,
        router=Router(pack, KeywordClassifier()),
        model=model,
        config=engine_config(default_model="scripted/plain", cwd=root),
        confirm=confirm,
    )


async def play(engine: Engine, text: str) -> list[TurnEvent]:
    return [event async for event in engine.run_turn(text)]


def handed(events: list[TurnEvent]) -> list[tuple[str, str]]:
    return [(e.route.mode_name, e.route.decided_by) for e in events if isinstance(e, RouteDecided)]


async def test_nobody_to_ask_declines_the_hand_off_and_the_turn_stays(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    model = ScriptedModel().script(
        ScriptedReply("", tool_calls=[HAND]),
        ScriptedReply("", tool_calls=[RUN]),  # would run under shell's allow
        ScriptedReply("Staying in chat."),
    )
    engine = an_engine(gated_pack(write_pack), tmp_path, model, NobodyToAsk())
    events = await play(engine, "hello, list my files")

    assert handed(events) == [("chat", "classifier")]
    first = next(e for e in events if isinstance(e, ToolCallFinished))
    assert first.outcome == "cancelled"
    assert "shell is entered only with the user's yes (auto_enter: confirm)" in first.result
    assert "nobody can answer here, so the turn stays in chat" in first.result
    requests = [e for e in events if isinstance(e, RequestBuilt)]
    assert {r.mode for r in requests} == {"chat"}
    assert not (tmp_path / "ran.txt").exists()  # chat has no run_command: nothing ran
    assert isinstance(events[-1], TurnFinished) and events[-1].message.mode == "chat"
    assert engine.mode == "chat"


async def test_a_no_keeps_the_turn_in_its_mode_and_the_question_names_mode_and_why(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    model = ScriptedModel().script(
        ScriptedReply("", tool_calls=[HAND]), ScriptedReply("Fine, chat it is.")
    )
    asker = Answering(answer=False)
    engine = an_engine(gated_pack(write_pack), tmp_path, model, asker)
    events = await play(engine, "hello, list my files")

    [question] = asker.questions
    assert question.title == "Hand this turn to shell?"
    assert "chat wants to hand the rest of this turn to shell: this needs a command run" in (
        question.text
    )
    assert question.rule == "shell's auto_enter: confirm"
    assert handed(events) == [("chat", "classifier")]
    finished = next(e for e in events if isinstance(e, ToolCallFinished))
    assert finished.outcome == "cancelled"
    assert "the user declined to hand this turn to shell" in finished.result
    assert isinstance(events[-1], TurnFinished) and events[-1].message.mode == "chat"


async def test_a_yes_enters_and_the_targets_policy_decides_its_first_call(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    model = ScriptedModel().script(
        ScriptedReply("", tool_calls=[HAND]),
        ScriptedReply("", tool_calls=[RUN]),
        ScriptedReply("Ran it."),
    )
    asker = Answering(answer=True, confirms=False)
    engine = an_engine(gated_pack(write_pack), tmp_path, model, asker)
    events = await play(engine, "hello, list my files")

    assert len(asker.questions) == 1
    assert handed(events) == [("chat", "classifier"), ("shell", "model")]
    ran = [e for e in events if isinstance(e, ToolCallFinished) and e.call.name == "run_command"]
    assert ran[0].outcome == "ok"  # shell's run_command: allow: nobody was asked
    assert asker.confirmed == []
    assert (tmp_path / "ran.txt").read_text() == "ran\n"


async def test_the_targets_ask_rule_asks_from_its_first_call(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    model = ScriptedModel().script(
        ScriptedReply("", tool_calls=[HAND]),
        ScriptedReply("", tool_calls=[RUN]),
        ScriptedReply("Not run."),
    )
    asker = Answering(answer=True, confirms=False)
    pack = gated_pack(write_pack, permissions={"run_command": "ask"})
    engine = an_engine(pack, tmp_path, model, asker)
    events = await play(engine, "hello, list my files")

    assert asker.confirmed == ["run_command"]
    ran = [e for e in events if isinstance(e, ToolCallFinished) and e.call.name == "run_command"]
    assert ran[0].outcome == "cancelled"
    assert not (tmp_path / "ran.txt").exists()


async def test_a_mode_that_does_not_ask_first_is_handed_to_without_a_question(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    model = ScriptedModel().script(ScriptedReply("", tool_calls=[HAND]), ScriptedReply("Here."))
    asker = Answering(answer=False)
    engine = an_engine(gated_pack(write_pack, auto_enter="allow"), tmp_path, model, asker)
    events = await play(engine, "hello, list my files")
    assert asker.questions == []
    assert handed(events) == [("chat", "classifier"), ("shell", "model")]


async def test_a_piped_repl_says_the_hand_off_was_declined_and_answers_in_the_old_mode(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    import io

    from modes_tui.repl.context import ReplContext
    from modes_tui.repl.pipe import PipeConfirmer, run_lines
    from modes_tui.repl.printer import Printer

    model = ScriptedModel().script(
        ScriptedReply("", tool_calls=[HAND]), ScriptedReply("Answered in chat.")
    )
    engine = an_engine(gated_pack(write_pack), tmp_path, model, PipeConfirmer())
    out = io.StringIO()
    context = ReplContext(
        engine=engine,
        mode_names=lambda: ("chat", "shell"),
        describe_modes=lambda: "chat, shell",
        set_mode=lambda value: value,
    )
    assert await run_lines(["hello, list my files\n"], context, Printer(out)) == 0
    shown = out.getvalue()
    assert "switch_mode: cancelled" in shown
    assert "nobody can answer here, so the turn stays in chat" in shown
    assert "Answered in chat." in shown
    assert engine.mode == "chat"


async def test_nobody_is_asked_about_a_hand_off_the_policy_denies(
    tmp_path: Path, write_pack: PackWriter
) -> None:
    modes = {
        "chat": {
            "description": "Everyday chat.",
            "keywords": ["hello"],
            "tools": ["switch_mode"],
            "permissions": {"switch_mode": "deny"},
        },
        "shell": {"description": "Shell.", "keywords": ["terminal"], "auto_enter": "confirm"},
    }
    pack = load_pack(
        profiles_dir=write_pack(router={"classifier": "keyword", "fallback": "chat"}, modes=modes)
    )
    model = ScriptedModel().script(ScriptedReply("", tool_calls=[HAND]), ScriptedReply("Here."))
    asker = Answering(answer=True)
    events = await play(an_engine(pack, tmp_path, model, asker), "hello, list my files")
    assert asker.questions == []
    finished = next(e for e in events if isinstance(e, ToolCallFinished))
    assert finished.outcome == "blocked" and "permissions.switch_mode: deny" in finished.result
    assert handed(events) == [("chat", "classifier")]
