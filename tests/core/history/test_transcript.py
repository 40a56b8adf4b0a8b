"""The one fold over a turn's events (core/history/transcript.py), as every front end reads it."""

from __future__ import annotations

import io

from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import (
    ReasoningDelta,
    RequestBuilt,
    RouteDecided,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    TurnCancelled,
    TurnCorrected,
    TurnEvent,
    TurnFailed,
    TurnFinished,
    Usage,
)
from modes_tui.core.history.transcript import TurnTranscript
from modes_tui.core.model.wire import ModelRequest, ToolCall
from modes_tui.core.values.route import Route
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.repl import Printer, run_lines
from tests.repl.test_repl import context_for, engine_with

CALL = ToolCall("c1", "read_file", {"path": "main.py"})


def request(mode: str, round: int = 1) -> RequestBuilt:
    return RequestBuilt(ModelRequest(model="scripted/echo", messages=()), mode, round=round)


def fold(events: list[TurnEvent]) -> TurnTranscript:
    turn = TurnTranscript(1, "why does main.py crash")
    for event in events:
        turn.apply(event)
    return turn


def test_a_tool_round_splits_the_answer_and_usage_adds_up() -> None:
    turn = fold(
        [
            RouteDecided(Route("code", "classifier", "keywords: crash"), warnings=("bad file",)),
            request("code"),
            ReasoningDelta("Look first. "),
            TextDelta("Let me read it."),
            ToolCallRequested(CALL),
            ToolCallFinished(CALL, "ok", '{"text": "x = 1/0"}', 2.0),
            Usage("scripted/echo", 10, 5, 0.001),
            request("code", round=2),
            ReasoningDelta("Division."),
            TextDelta("It divides by zero."),
            Usage("scripted/echo", 20, 7, 0.002),
            TurnFinished(Message("assistant", "It divides by zero.", mode="code")),
        ]
    )
    assert turn.status == "finished" and turn.mode == "code" and turn.warnings == ("bad file",)
    assert turn.segments == ["Let me read it.", "It divides by zero."]
    assert turn.answer == "Let me read it.\n\nIt divides by zero."
    assert turn.reasoning == "Look first. Division."
    assert [(t.call.name, t.outcome, t.segment) for t in turn.tools] == [("read_file", "ok", 0)]
    assert (turn.prompt_tokens, turn.completion_tokens) == (30, 12)
    assert turn.cost is not None and abs(turn.cost - 0.003) < 1e-12


def test_an_unknown_price_makes_the_cost_unknown_not_zero() -> None:
    turn = fold([Usage("a", 1, 1, 0.5), Usage("b", 1, 1, None)])
    assert turn.cost is None


def test_a_failure_keeps_the_partial_answer() -> None:
    turn = fold([request("chat"), TurnFailed("timeout", kind="timeout", partial="Half an")])
    assert turn.status == "failed" and turn.answer == "Half an"
    assert turn.failure is not None and turn.failure.kind == "timeout"


def test_a_retry_that_ends_without_text_keeps_the_earlier_partial_answer() -> None:
    turn = fold([request("chat"), TextDelta("Half an"), TurnFailed("reset", partial="Half an")])
    for attempt in (2, 3):
        turn.restart()
        assert turn.answer == ""  # a retry starts over
        turn.apply(request("chat"))
        turn.apply(TurnFailed("rate limit", kind="rate_limit"))
        assert turn.attempt == attempt and turn.answer == "Half an"
        assert turn.shows_kept_partial and turn.kept_from == 1
    turn.restart()
    turn.apply(TurnCancelled(""))
    assert turn.answer == "Half an" and turn.shows_kept_partial


def test_a_retry_with_text_of_its_own_shows_that_text() -> None:
    turn = fold([request("chat"), TextDelta("Half an"), TurnFailed("reset", partial="Half an")])
    turn.restart()
    for event in (request("chat"), TextDelta("Other"), TurnFailed("reset", partial="Other")):
        turn.apply(event)
    assert turn.answer == "Other" and not turn.shows_kept_partial


def test_a_correction_folds_the_first_answer_away_and_the_rerun_fills_the_turn() -> None:
    turn = fold(
        [
            RouteDecided(Route("chat", "classifier", "smalltalk")),
            request("chat"),
            TextDelta("Chatty answer."),
            TurnFinished(Message("assistant", "Chatty answer.", mode="chat")),
            TurnCorrected(turn=1, answered_mode="chat", corrected_mode="code"),
            RouteDecided(Route("code", "caller", "Mode requested by caller")),
            request("code"),
            TextDelta("Code answer."),
        ]
    )
    assert [(old.title, old.answer) for old in turn.superseded] == [
        ("answered in chat, corrected to code", "Chatty answer.")
    ]
    assert turn.answer == "Code answer." and turn.mode == "code"
    assert turn.routed_route is not None and turn.routed_route.mode_name == "chat"


def test_every_routing_decision_stays_over_a_retry_and_a_rerun() -> None:
    turn = fold([RouteDecided(Route("chat", "classifier", "smalltalk")), request("chat")])
    turn.apply(TurnFailed("the model did not answer", kind="timeout"))
    turn.restart()
    for event in [
        RouteDecided(Route("chat", "classifier", "smalltalk again"), warnings=("slow",)),
        TurnCorrected(turn=1, answered_mode="chat", corrected_mode="code"),
        RouteDecided(Route("code", "caller", "Mode requested by caller")),
    ]:
        turn.apply(event)
    reasons = [(d.route.reason, d.warnings) for d in turn.decisions]
    assert reasons == [
        ("smalltalk", ()),
        ("smalltalk again", ("slow",)),
        ("Mode requested by caller", ()),
    ]
    assert turn.route is not None and turn.route.mode_name == "code"


async def test_the_repl_why_reads_the_folded_last_turn() -> None:
    out = io.StringIO()
    context = context_for(engine_with(ScriptedModel().script(ScriptedReply("Hello back."))))
    await run_lines(["hello there\n", "/why\n"], context, Printer(out))
    assert context.last_turn is not None
    assert context.last_turn.answer == "Hello back." and context.last_turn.status == "finished"
    shown = out.getvalue()
    assert "turn 1: [chat · by classifier" in shown  # the panel's words, not a JSON dump
    assert "  request: scripted/echo (fast role), 2 message(s)" in shown


def test_the_apps_export_without_a_log_renders_streamed_chunks_as_whole_paragraphs() -> None:
    from modes_tui.store.export import conversation_markdown

    turn = fold(
        [
            RouteDecided(Route("code", "classifier", "keywords: crash", duration_ms=1.5)),
            request("code"),
            ReasoningDelta("Look "),
            ReasoningDelta("first."),
            TextDelta("Let me "),
            TextDelta("read it."),
            ToolCallRequested(CALL),
            ToolCallFinished(CALL, "error", "not json", 2.0),
            Usage("scripted/echo", 10, 5, None),
            TurnFailed("Request timed out", kind="timeout", hint="try again"),
        ]
    )
    markdown = conversation_markdown([turn])
    assert markdown.startswith("# modes-tui conversation\n\n- turns: 1\n\n## Turn 1\n")
    assert "> route: code by classifier, 1.5 ms: keywords: crash\n" in markdown
    assert "**You**\n\nwhy does main.py crash\n\n**Assistant** (code · scripted/echo)\n" in markdown
    assert "<details><summary>reasoning</summary>\n\nLook first.\n\n</details>" in markdown
    assert "\n\nLet me read it.\n\nTool call: `read_file main.py`" in markdown
    assert "Result of `read_file`: error (2.0 ms)\n\n```\nnot json\n```" in markdown
    assert "*(failed: Request timed out (try again))*" in markdown
    assert markdown.endswith("*usage: 10 prompt + 5 completion tokens*\n")
    assert "\n\n\n" not in markdown
