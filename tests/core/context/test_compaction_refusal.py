"""A useless summary never replaces history (issue 30, item 6): a summary model that answers
"I don't know.", nothing, its own instruction back, or a line for hundreds of tokens is
refused with a message naming the model and why; `/compact` keeps the turns, and a request
that must shrink gets the turns' openings instead (an extractive summary), saying so."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from modes_tui.core.context.compaction import SUMMARY_INSTRUCTIONS, summary_problem
from modes_tui.core.engine.engine import Engine
from modes_tui.core.errors import CompactionRefused
from modes_tui.core.history.events import (
    ConversationCompacted,
    RequestBuilt,
    TurnEvent,
    TurnFinished,
)
from modes_tui.core.model.ports import ModelCapabilities
from modes_tui.core.model.wire import Completion, ModelRequest, UsageReport
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.repl.commands import run_line as run_command
from modes_tui.repl.context import ReplContext
from modes_tui.repl.printer import Printer
from tests.support.engine_support import engine_config

WINDOW = 1024
MESSAGE = "Tell me more about the sea and its tides, please. " * 14  # ~700 characters
GOOD = (
    "The user asked, turn after turn, about the sea and its tides; the assistant explained "
    "that the tides follow the moon and the sun, twice a day, with spring and neap tides "
    "through the month. The user wants more detail; nothing is decided yet."
)


def is_summary_request(request: ModelRequest) -> bool:
    return "running summary" in str(request.messages[0].get("content"))


def model_summarising(summary: str) -> ScriptedModel:
    def answer(request: ModelRequest) -> ScriptedReply:
        return ScriptedReply(summary if is_summary_request(request) else "Tides follow the moon.")

    capable = ModelCapabilities(tools=False, context_window=WINDOW)
    return ScriptedModel(responder=answer, capable_of={"scripted/small": capable})


@pytest.fixture
def pack(write_pack: Callable[..., Path]) -> Pack:
    folder = write_pack(
        router={"classifier": "keyword", "fallback": "chat"},
        modes={"chat": {"description": "Everyday chat.", "max_tokens": 64}},
    )
    return load_pack(profiles_dir=folder)


def engine_for(pack: Pack, model: ScriptedModel) -> Engine:
    return Engine(
        pack=pack,
        router=Router(pack, KeywordClassifier()),
        model=model,
        config=engine_config(default_model="scripted/small"),
    )


async def talk(engine: Engine, *texts: str) -> list[list[TurnEvent]]:
    turns: list[list[TurnEvent]] = []
    for text in texts:
        events = [event async for event in engine.run_turn(text)]
        assert isinstance(events[-1], TurnFinished), events[-1]
        turns.append(events)
    return turns


def sent(model: ScriptedModel) -> list[str]:
    chat = [r for r in model.requests if not is_summary_request(r)]
    return [str(m.get("content")) for m in chat[-1].messages]


# --------------------------------------------------------------------------- the rule


def test_a_summary_that_copies_the_conversation_is_refused() -> None:
    said = f"0: {MESSAGE}\nTides follow the moon.\n1: {MESSAGE}\nTides follow the moon."
    copied = f"User: 1: {MESSAGE[:300]}"  # a base model continuing the transcript
    assert summary_problem(copied, 80, 480, said) == (
        "it copies the conversation's words instead of summarising them"
    )
    assert summary_problem(GOOD, 60, 480, said) is None


@pytest.mark.parametrize(
    ("summary", "tokens", "replaced", "why"),
    [
        ("I don't know.", 5, 419, 'a non-answer ("I don\'t know.")'),
        ("  ", 0, 419, "it was empty"),
        ("As an AI, I cannot summarise private talks.", 12, 419, "a non-answer"),
        ("I cannot do that", 5, 419, "a non-answer"),
        ("Sorry, no.", 4, 419, "a non-answer"),
        ("None.", 2, 30, "a non-answer"),
        ("I’m sorry", 3, 30, "a non-answer"),
        (SUMMARY_INSTRUCTIONS.format(words=60), 80, 419, "it repeats the instruction"),
        ("The user asked about tides.", 7, 419, "too short (7 tokens for 419)"),
        ("The user asked about tides. " * 12, 60, 2000, "too short (60 tokens for 2000)"),
    ],
)
def test_a_useless_summary_is_named_for_what_it_is(
    summary: str, tokens: int, replaced: int, why: str
) -> None:
    problem = summary_problem(summary, tokens, replaced)
    assert problem is not None and problem.startswith(why), problem


@pytest.mark.parametrize(
    ("summary", "tokens", "replaced"),
    [
        (GOOD, 60, 419),
        ("Sorrowful sailors were discussed at length by the user and the assistant.", 41, 419),
        ("User said hi; assistant said hi.", 9, 30),  # short, for a short exchange
        ("Nothing was decided: the user asked about tides, the assistant " * 3, 45, 419),
        ("Unknown to the user, the tides follow the moon; the assistant said so " * 3, 45, 419),
    ],
)
def test_a_real_summary_passes(summary: str, tokens: int, replaced: int) -> None:
    assert summary_problem(summary, tokens, replaced) is None


# --------------------------------------------------------------------------- /compact


async def test_compact_refuses_i_dont_know_and_the_next_request_keeps_the_turns(
    pack: Pack,
) -> None:
    model = model_summarising("I don't know.")
    engine = engine_for(pack, model)
    await talk(engine, "first question about tides", "second question", "third question")
    with pytest.raises(CompactionRefused) as refused:
        await engine.compact()
    message = str(refused.value)
    assert message.startswith("the summary from scripted/small was refused: a non-answer")
    assert message.endswith("; kept the turns")
    assert engine.conversation.compaction is None

    await talk(engine, "fourth question")
    carried = sent(model)
    assert "first question about tides" in carried and "second question" in carried
    assert "Summary of the earlier conversation" not in carried[0]


async def test_compact_refuses_a_summary_too_short_for_what_it_replaces(pack: Pack) -> None:
    model = model_summarising("Tides.")
    engine = engine_for(pack, model)
    await talk(engine, MESSAGE, MESSAGE, "and now?")
    with pytest.raises(CompactionRefused, match=r"refused: too short \(\d+ tokens for \d+\)"):
        await engine.compact()
    assert engine.conversation.compaction is None


async def test_the_repl_prints_the_refusal_and_a_good_summary_still_compacts(pack: Pack) -> None:
    model = model_summarising("I don't know.")
    engine = engine_for(pack, model)
    await talk(engine, MESSAGE, MESSAGE, "and now?")
    out = io.StringIO()
    context = ReplContext(
        engine=engine,
        mode_names=lambda: ("chat",),
        describe_modes=lambda: "chat",
        set_mode=lambda value: value,
    )
    await run_command("/compact", context, Printer(out))
    assert out.getvalue().startswith(
        'error: the summary from scripted/small was refused: a non-answer ("I don\'t know.")'
    )

    model.responder = model_summarising(GOOD).responder
    out = io.StringIO()
    await run_command("/compact", context, Printer(out))
    assert out.getvalue().startswith("(compacted 2 earlier turn(s) for the model (/compact;")
    compaction = engine.conversation.compaction
    assert compaction is not None and compaction.summary == GOOD
    assert compaction.model == "scripted/small"


# --------------------------------------------------------------------------- near the limit


async def test_near_the_limit_a_refused_summary_keeps_the_turns_then_falls_back_to_openings(
    pack: Pack,
) -> None:
    model = model_summarising("I don't know.")
    engine = engine_for(pack, model)
    kept_notes: list[str] = []
    compactions = []
    for number in range(12):
        (events,) = await talk(engine, f"{number}: {MESSAGE}")
        built = [e for e in events if isinstance(e, RequestBuilt)]
        kept_notes += [n for e in built for n in e.notes if "was refused" in n]
        compactions += [e.compaction for e in events if isinstance(e, ConversationCompacted)]
        for event in built:  # never over the window, whatever the summary model says
            assert event.context is not None and event.context.fits

    # first: near the limit but still fitting, so the turns stay and the request says why
    assert kept_notes, "a refused summary near the limit must be said on the request"
    assert kept_notes[0].startswith("the summary from scripted/small was refused: a non-answer")
    assert kept_notes[0].endswith("kept the turns")
    # then: the request would not fit, so the older turns' openings stand in, saying so
    assert compactions, "a request that must shrink falls back to the turns' openings"
    fallback = compactions[0]
    assert fallback.model is None and fallback.trigger == "auto"
    assert "the summary from scripted/small was refused" in fallback.note
    assert "kept the newest turns whole and the older ones' openings" in fallback.note
    assert fallback.summary.startswith("User: 0: Tell me more")
    assert "I don't know" not in fallback.summary
    assert "their openings kept: the summary from scripted/small was refused" in (
        fallback.describe()
    )
    # the newest turn is whole in the request; the summary carries the older ones' openings
    carried = sent(model)
    assert carried[-1] == f"11: {MESSAGE}"
    assert "User: 0: Tell me more" in carried[0]


async def test_near_the_limit_a_good_summary_is_used(pack: Pack) -> None:
    model = model_summarising(GOOD)
    engine = engine_for(pack, model)
    compactions = []
    for number in range(8):
        (events,) = await talk(engine, f"{number}: {MESSAGE}")
        compactions += [e.compaction for e in events if isinstance(e, ConversationCompacted)]
    assert compactions and compactions[0].model == "scripted/small" and not compactions[0].note
    assert GOOD in sent(model)[0]


class BilledSummaries(ScriptedModel):
    """A scripted model whose summaries say what they cost, like a provider's."""

    async def complete(self, request: ModelRequest) -> Completion:
        done = await super().complete(request)
        return replace(done, usage=UsageReport(500, 5, 0.25))


async def test_a_refused_summarys_call_still_counts_in_the_turns_cost(pack: Pack) -> None:
    model = BilledSummaries(
        responder=model_summarising("I don't know.").responder,
        capable_of={"scripted/small": ModelCapabilities(tools=False, context_window=WINDOW)},
    )
    engine = engine_for(pack, model)
    noted = compacted = 0
    for number in range(6):
        (events,) = await talk(engine, f"{number}: {MESSAGE}")
        noted += any(
            "was refused" in n for e in events if isinstance(e, RequestBuilt) for n in e.notes
        )
        compacted += any(isinstance(e, ConversationCompacted) for e in events)
    assert noted and compacted  # both ways a refused summary goes: kept, and openings
    summary_calls = sum(is_summary_request(r) for r in model.requests)
    assert engine.costs.ledger.total == pytest.approx(0.25 * summary_calls)
