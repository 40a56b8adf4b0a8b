"""The cost ledger: per-turn cost, session total, "saved vs always X", the budget, sessions --cost."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from modes_tui.cli import main
from modes_tui.core.config.models import ModelCatalog, ModelPrice, parse_models
from modes_tui.core.engine.engine import Engine
from modes_tui.core.engine.questions import Question
from modes_tui.core.history.events import TurnEvent, TurnFailed, TurnFinished
from modes_tui.core.history.ledger import CostLedger, baseline, money
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.llm.litellm_model import LiteLLMChatModel
from modes_tui.store.session_log import SessionLog
from tests.support.engine_support import with_config
from tests.support.fake_provider import FakeProvider, Reply

CHEAP = ModelPrice(1e-6, 2e-6)
PRICEY = ModelPrice(1e-4, 2e-4)


# --------------------------------------------------------------------------- the ledger


def test_the_ledger_totals_turns_and_what_the_baseline_would_have_cost() -> None:
    ledger = CostLedger(baseline_model="pricey", baseline_price=PRICEY)
    ledger.add(1, [("cheap", 1000, 100, 0.0012)])
    ledger.add(2, [("cheap", 500, 50, 0.0006), ("pricey", 10, 10, 0.003)])
    assert ledger.total == pytest.approx(0.0048)
    assert ledger.baseline_total == pytest.approx(0.12 + 0.06 + 0.003)
    assert ledger.saved == pytest.approx(0.183 - 0.0048)
    assert ledger.turns[1].models == ("cheap", "pricey")
    assert ledger.header() == "$0.0048 · saved $0.1782 vs always pricey"


def test_an_unknown_price_is_unknown_never_free() -> None:
    ledger = CostLedger(baseline_model="pricey", baseline_price=PRICEY)
    ledger.add(1, [("cheap", 1000, 100, 0.0012), ("mystery", 10, 10, None)])
    assert ledger.turns[0].cost is None and not ledger.complete
    assert ledger.saved is None
    assert ledger.header() == "$0 + unknown"


def test_no_calls_no_entry_and_no_baseline_no_saving() -> None:
    ledger = CostLedger(budget=1.0)
    assert ledger.add(1, []) is None
    ledger.add(2, [("cheap", 10, 10, 0.5)])
    assert ledger.saved is None
    assert ledger.header() == "$0.50 · budget $1.00"


def test_the_baseline_is_the_most_expensive_priced_model() -> None:
    prices = {"cheap": CHEAP, "pricey": PRICEY, "free": ModelPrice(0, 0)}
    assert baseline(["cheap", "free", "pricey", "unknown"], prices.get) == ("pricey", PRICEY)
    assert baseline(["unknown"], prices.get) == (None, None)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "$0"),
        (2.5, "$2.50"),
        (1234.5, "$1,234.50"),
        (0.0123, "$0.0123"),
        (0.000042, "$0.000042"),
    ],
)
def test_money(value: float, text: str) -> None:
    assert money(value) == text


def test_the_budget_estimate_uses_the_answer_cap_or_the_mean_answer() -> None:
    ledger = CostLedger(budget=0.01)
    check = ledger.check(PRICEY, prompt_chars=4000, answer_cap=None)
    assert check is not None
    assert check.estimate == pytest.approx(1000 * 1e-4 + 256 * 2e-4)
    assert check.would_pass
    ledger.add(1, [("x", 10, 20, 0.0)])
    assert ledger.check(PRICEY, 0, None).estimate == pytest.approx(20 * 2e-4)  # type: ignore[union-attr]
    assert ledger.check(PRICEY, 0, 5).estimate == pytest.approx(5 * 2e-4)  # type: ignore[union-attr]
    assert CostLedger().check(PRICEY, 0, 5) is None


# --------------------------------------------------------------------------- in the engine


@pytest.fixture
def pack(write_pack: Any) -> Pack:
    return load_pack(
        profiles_dir=write_pack(
            router={"classifier": "keyword", "fallback": "chat"},
            modes={
                "chat": {"description": "Chat.", "keywords": ["hello"], "model": "cheap"},
                "reason": {"description": "Hard.", "keywords": ["prove"], "model": "pricey"},
            },
        )
    )


CATALOG = ModelCatalog(
    parse_models(
        {
            "cheap": {"model": "fake/plain"},  # litellm's map: 1e-6 / 2e-6 (tests/fake_provider)
            "pricey": {
                "model": "fake/plain",
                "input_cost_per_token": 1e-4,
                "output_cost_per_token": 2e-4,
            },
        },
        where="config.yaml",
    )
)


class Answers:
    """A confirmer that also answers questions (as the TUI's dialog does)."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.questions: list[Question] = []

    async def confirm(self, call: Any, tool: Any) -> bool:
        return True

    async def ask(self, question: Question) -> bool:
        self.questions.append(question)
        return self.answer


def engine_for(pack: Pack, **kwargs: Any) -> Engine:
    return Engine(
        **with_config(
            pack=pack,
            router=Router(pack, KeywordClassifier()),
            model=LiteLLMChatModel(offline=True, models=CATALOG),
            default_model="cheap",
            cwd=Path.cwd(),
            **kwargs,
        )
    )


async def run(engine: Engine, text: str) -> list[TurnEvent]:
    return [event async for event in engine.run_turn(text)]


async def test_each_turn_is_priced_and_compared_with_always_the_priciest_mode(
    pack: Pack, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text="hi", usage=(1000, 100)), Reply(text="qed", usage=(1000, 100)))
    log = SessionLog.create(app_dirs(), pack=pack.name, model="cheap")
    engine = engine_for(pack, session=log)
    await run(engine, "hello")
    ledger = engine.costs.ledger
    assert ledger.baseline_model == "pricey"
    assert ledger.turns[0].cost == pytest.approx(0.0012)
    assert ledger.saved == pytest.approx(0.12 - 0.0012)
    # answered by the priciest model: nothing saved on this turn (a self-contained request:
    # "prove it" would now be a follow-up of the chat turn and stay there)
    await run(engine, "prove that the square root of two is irrational")
    assert ledger.turns[1].cost == pytest.approx(0.12)
    assert ledger.saved == pytest.approx(0.12 - 0.0012)
    assert ledger.header() == "$0.1212 · saved $0.1188 vs always pricey"
    log.close()

    records = [json.loads(line) for line in log.path.read_text().splitlines()]
    costs = [r["cost"] for r in records if r["type"] == "assistant" and r.get("cost")]
    assert [c["models"] for c in costs] == [["cheap"], ["pricey"]]
    assert costs[0]["baseline_model"] == "pricey"
    assert costs[0]["baseline_cost"] == pytest.approx(0.12)


async def test_sessions_cost_lists_what_each_session_cost_and_saved(
    pack: Pack, fake_llm: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_llm.script(Reply(text="hi", usage=(1000, 100)))
    log = SessionLog.create(app_dirs(), pack=pack.name, model="cheap")
    await run(engine_for(pack, session=log), "hello")
    log.close()

    assert main(["sessions", "--cost", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["id"] == log.id
    assert row["cost"] == pytest.approx(0.0012)
    assert row["baseline_model"] == "pricey"
    assert row["saved"] == pytest.approx(0.1188)
    assert main(["sessions", "--cost"]) == 0
    out = capsys.readouterr().out
    assert log.id in out and "$0.0012" in out and "$0.1188 vs always pricey" in out
    assert out.strip().endswith("total $0.0012, saved $0.1188")


async def test_a_turn_that_would_pass_the_budget_asks_first(
    pack: Pack, fake_llm: FakeProvider
) -> None:
    fake_llm.script(Reply(text="one", usage=(1000, 100)), Reply(text="two", usage=(10, 10)))
    answers = Answers(True)
    engine = engine_for(pack, budget=0.001, confirm=answers)
    await run(engine, "hello")  # the estimate is under $0.001: nobody is asked
    assert answers.questions == []
    events = await run(engine, "hello again")  # $0.0012 already spent
    assert isinstance(events[-1], TurnFinished)
    (question,) = answers.questions
    assert question.kind == "budget"
    assert "past its budget of $0.001: $0.0012 spent so far" in question.text


async def test_a_no_keeps_the_money_and_the_message(pack: Pack, fake_llm: FakeProvider) -> None:
    fake_llm.script(Reply(text="one", usage=(1000, 100)))
    engine = engine_for(pack, budget=0.001, confirm=Answers(False))
    await run(engine, "hello")
    events = await run(engine, "hello again")
    failed = events[-1]
    assert isinstance(failed, TurnFailed) and failed.kind == "budget" and not failed.retryable
    assert failed.error.startswith("not sent: this turn (cheap, about $")
    assert "you said no" in failed.error and "budget:" in failed.hint
    assert len(fake_llm.seen) == 1  # the second turn never reached the provider
    assert engine.conversation.messages[-1].content == "hello again"


async def test_a_pipe_refuses_a_turn_past_the_budget_with_a_message_and_exit_code(
    pack: Pack, fake_llm: FakeProvider
) -> None:
    from modes_tui.repl import PipeConfirmer, Printer, ReplContext, run_lines

    fake_llm.script(Reply(text="one", usage=(1000, 100)), Reply(text="never"))
    engine = engine_for(pack, budget=0.001, confirm=PipeConfirmer())
    out, err = io.StringIO(), io.StringIO()
    context = ReplContext(
        engine=engine,
        mode_names=lambda: pack.names,
        describe_modes=lambda: "",
        set_mode=lambda value: value,
        history_file=None,
    )
    code = await run_lines(["hello\n", "hello again\n"], context, Printer(out, err=err))
    assert code == 1
    assert "error: not sent: this turn (cheap, about $" in err.getvalue()
    assert "nobody can confirm here (no terminal)" in err.getvalue()
    assert "(cost $0.0012 · session $0.0012 · saved $0.1188 vs always pricey" in out.getvalue()
    assert len(fake_llm.seen) == 1


def test_the_header_shows_the_session_cost() -> None:
    from modes_tui.tui.status import ModeHeader

    header = ModeHeader(model="cheap", pack="default")
    assert "cost" not in header.render_text().plain
    header.cost = "$0.1212 · saved $0.1188 vs always pricey"
    assert "│ cost $0.1212 · saved $0.1188 vs always pricey" in header.render_text().plain
