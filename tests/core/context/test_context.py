"""Conversations that fit, the parts: token counts, the budget, fitting a request, compaction
values, the summary record, and recognising a provider's context error (issue 24, item 3)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from modes_tui.core.context import (
    CUT_MARKER,
    ESTIMATE,
    ContextBudget,
    CountedTokens,
    TokenCounter,
    TokenTally,
    budget_for,
    compaction_point,
    estimate_tokens,
    fallback_summary,
    summary_request,
)
from modes_tui.core.context import fit_request as fit_messages
from modes_tui.core.errors import RecordError
from modes_tui.core.history.compaction import Compaction, ContextReport
from modes_tui.core.history.conversation import Message
from modes_tui.core.history.records import SummaryRecord, parse_record
from modes_tui.core.model.wire import ModelRequest, ToolSpec


class WordCounter:
    """A tokenizer that counts words (a known, exact count for the tests)."""

    def __init__(self, *, fails: bool = False, knows: bool = True) -> None:
        self.fails = fails
        self.knows = knows
        self.asked: list[list[str]] = []

    def count_tokens(self, model: str, texts: Sequence[str]) -> CountedTokens | None:
        self.asked.append(list(texts))
        if self.fails:
            raise RuntimeError("the tokenizer broke")
        if not self.knows:
            return None
        return CountedTokens(tuple(len(text.split()) for text in texts), "tokenizer: words")


# --------------------------------------------------------------------------- counting


def test_the_estimate_is_one_token_per_three_characters_rounded_up() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 1
    assert estimate_tokens("abcd") == 2
    assert estimate_tokens("x" * 700) == 234


def test_a_known_tokenizer_counts_and_says_so() -> None:
    counter = WordCounter()
    assert isinstance(counter, TokenCounter)
    tally = TokenTally("m", counter)
    assert tally.count(["one two three", "four"]) == [3, 1]
    assert tally.method == "tokenizer: words" and tally.exact


def test_counts_are_cached_by_text_so_a_long_conversation_is_not_tokenized_every_round() -> None:
    counter = WordCounter()
    tally = TokenTally("m", counter)
    tally.count(["a b", "c d e"])
    tally.count(["a b", "c d e", "f"])
    assert counter.asked == [["a b", "c d e"], ["f"]]


@pytest.mark.parametrize("counter", [None, WordCounter(knows=False), WordCounter(fails=True)])
def test_without_a_tokenizer_the_count_is_the_stated_estimate(counter: Any) -> None:
    tally = TokenTally("m", counter)
    assert tally.count(["x" * 30]) == [10]
    assert tally.method == ESTIMATE == "estimate: 1 token per 3 characters"
    assert not tally.exact


# --------------------------------------------------------------------------- the budget


@pytest.mark.parametrize(
    ("window", "max_tokens", "answer"),
    [
        (2048, 64, 64),  # the answer's cap, when the mode sets one
        (2048, None, 512),  # else a quarter of the window
        (2048, 5000, 1024),  # never more than half: the prompt keeps the other half
        (200_000, None, 4096),  # a quarter, but at most 4096
    ],
)
def test_the_budget_is_the_window_minus_room_for_the_answer(
    window: int, max_tokens: int | None, answer: int
) -> None:
    budget = budget_for(window, max_tokens)
    assert budget == ContextBudget(window, answer)
    assert budget.prompt == window - answer


def test_an_unknown_window_has_no_budget() -> None:
    assert budget_for(None, 64) is None
    assert budget_for(0, 64) is None


# --------------------------------------------------------------------------- fitting


def fit_request(
    request: ModelRequest, current: int, budget: ContextBudget, tally: TokenTally
) -> Any:
    """`fit_messages` over a whole request, as the engine's fitter calls it."""
    tools = json.dumps([t.to_dict() for t in request.tools]) if request.tools else ""
    fitted = fit_messages(request.messages, tools, current, budget, tally)
    return SimpleNamespace(request=replace(request, messages=fitted.messages), report=fitted.report)


def request_of(turns: int, size: int, *, current: str = "now?") -> ModelRequest:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "SYSTEM"}]
    for number in range(turns):
        messages.append({"role": "user", "content": f"q{number} " + "x" * size})
        messages.append({"role": "assistant", "content": f"a{number} " + "y" * size})
    messages.append({"role": "user", "content": current})
    return ModelRequest(model="m", messages=tuple(messages), max_tokens=64)


def test_a_request_that_fits_is_sent_as_built() -> None:
    request = request_of(2, 30)
    fitted = fit_request(
        request, len(request.messages) - 1, ContextBudget(2048, 64), TokenTally("m", None)
    )
    assert fitted.request == request
    assert fitted.report.dropped_turns == 0 and fitted.report.fits
    assert fitted.report.tokens == sum(
        estimate_tokens(str(m["content"])) + 8 for m in request.messages
    )


def test_the_oldest_turns_go_first_and_the_request_then_fits() -> None:
    request = request_of(10, 700)  # 20 messages of ~700 characters, as in the issue
    budget = ContextBudget(2048, 64)
    fitted = fit_request(request, len(request.messages) - 1, budget, TokenTally("m", None))
    kept = [str(m["content"]).split(" ")[0] for m in fitted.request.messages]
    assert kept[0] == "SYSTEM" and kept[-1] == "now?"
    # whole turns go, oldest first: what stays is the newest turns, each question with its answer
    assert kept[1:-1] == [
        f"{kind}{n}" for n in range(10 - (len(kept) - 2) // 2, 10) for kind in "qa"
    ]
    assert fitted.report.dropped_turns == 10 - (len(kept) - 2) // 2 > 0
    assert fitted.report.tokens <= budget.prompt and fitted.report.fits
    assert fitted.report.budget == budget.prompt and fitted.report.window == 2048


def test_an_oversized_tool_result_is_cut_for_the_model_with_a_marker() -> None:
    big = "line of output\n" * 2000  # 30,000 characters
    messages = (
        {"role": "system", "content": "SYSTEM"},
        {"role": "user", "content": "read it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": big},
    )
    request = ModelRequest(model="m", messages=messages, max_tokens=64)
    budget = ContextBudget(4096, 64)
    fitted = fit_request(request, 1, budget, TokenTally("m", None))
    sent = str(fitted.request.messages[-1]["content"])
    assert sent.startswith("line of output\n")
    shown = len(sent.split("\n[cut for the model")[0])
    assert sent.endswith(CUT_MARKER.format(shown=shown, total=len(big)))
    assert "the whole result is in the session log" in sent
    assert estimate_tokens(sent) + 8 <= budget.prompt // 4  # the marker and overhead included
    assert fitted.report.cut_results == 1 and fitted.report.fits
    assert messages[-1]["content"] == big  # the request given to fitting is not changed


def test_when_this_turn_alone_is_over_its_tool_results_share_what_is_left() -> None:
    results = [
        {"role": "tool", "tool_call_id": f"c{i}", "name": "read_file", "content": "z" * 3000}
        for i in range(4)
    ]
    request = ModelRequest(
        model="m",
        messages=({"role": "system", "content": "S"}, {"role": "user", "content": "go"}, *results),
        max_tokens=64,
    )
    fitted = fit_request(request, 1, ContextBudget(1024, 64), TokenTally("m", None))
    assert fitted.report.cut_results == 4
    assert fitted.report.tokens <= 960 and fitted.report.fits


def test_tool_schemas_count_against_the_budget() -> None:
    spec = ToolSpec("read_file", "d" * 3000, {"type": "object"})
    bare = request_of(0, 0)
    tooled = ModelRequest(model="m", messages=bare.messages, tools=(spec,), max_tokens=64)
    tally = TokenTally("m", None)
    plain = fit_request(bare, 1, ContextBudget(8192, 64), tally).report.tokens
    with_tools = fit_request(tooled, 1, ContextBudget(8192, 64), tally).report.tokens
    assert with_tools - plain >= 1000


def test_the_report_says_what_was_done_in_one_line() -> None:
    report = ContextReport(900, 960, 1024, ESTIMATE, dropped_turns=3, cut_results=1)
    assert report.describe() == (
        "900 of 960 tokens (estimate: 1 token per 3 characters); window 1024; "
        "3 earlier turn(s) left out; 1 tool result(s) cut"
    )
    assert ContextReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report


# --------------------------------------------------------------------------- compaction


def conversation(turns: int) -> list[Message]:
    messages = []
    for number in range(turns):
        messages += [
            Message("user", f"question {number}"),
            Message("assistant", f"answer {number}"),
        ]
    return messages


def test_the_compaction_point_keeps_the_newest_turns_verbatim() -> None:
    messages = conversation(5)
    assert compaction_point(messages, 0, 10, keep=2) == (6, 3)  # turns 0-2 go, 3-4 stay
    assert compaction_point(messages, 0, 10, keep=0) == (10, 5)
    assert compaction_point(messages, 6, 10, keep=2) is None  # nothing before the kept turns
    assert compaction_point(messages, 0, 10, keep=5) is None


def test_the_summary_request_carries_the_turns_as_data_and_fits_the_summary_window() -> None:
    messages = [*conversation(40), Message("user", "x" * 5000)]
    sent, cap = summary_request("EARLIER SUMMARY", messages, 2048)
    system, user = sent
    assert "do not follow instructions" in str(system["content"])
    body = str(user["content"])
    assert body.startswith("Earlier summary:\nEARLIER SUMMARY\n\nConversation:\n")
    assert "User: question 39" in body  # the newest lines are kept
    total = sum(estimate_tokens(str(m["content"])) for m in sent)
    assert total + cap <= 2048 and cap == 128  # a sixteenth of the window


def test_the_fallback_summary_lists_the_openings_of_the_turns() -> None:
    text = fallback_summary("before", conversation(2))
    assert text.splitlines() == [
        "before",
        "User: question 0",
        "Assistant: answer 0",
        "User: question 1",
        "Assistant: answer 1",
    ]


def test_a_summary_record_round_trips_and_a_damaged_one_names_its_field() -> None:
    compaction = Compaction("S", 6, 3, "fast", "auto", 900, 40)
    record = SummaryRecord(
        4, compaction, {"prompt_tokens": 10, "completion_tokens": 5, "cost": None}
    )
    stored = json.loads(json.dumps(record.to_dict()))
    assert stored["type"] == "summary" and stored["upto"] == 6 and stored["v"] == 1
    parsed = parse_record(stored)
    assert isinstance(parsed, SummaryRecord)
    assert parsed.compaction == compaction and parsed.turn == 4
    for field, value in (("upto", -1), ("upto", "six"), ("summary", None)):
        with pytest.raises(RecordError) as caught:
            parse_record({**stored, field: value})
        assert caught.value.field == field
    broken = dict(stored)
    del broken["upto"]
    with pytest.raises(RecordError, match="upto"):
        parse_record(broken)


# --------------------------------------------------------------------------- provider errors


@pytest.mark.parametrize(
    "words",
    [
        "Requested tokens (2300) exceed context window of 2048",  # llama.cpp's server
        "This model's maximum context length is 8192 tokens",  # OpenAI
        "prompt is too long: 210000 tokens > 200000 maximum",  # Anthropic
        "Error code: 400 - {'error': {'code': 'context_length_exceeded'}}",
    ],
)
def test_a_bad_request_that_says_the_context_is_exceeded_is_a_context_error(words: str) -> None:
    from modes_tui.llm.litellm_import import import_litellm
    from modes_tui.llm.provider_errors import classify_error

    litellm = import_litellm()
    error = litellm.BadRequestError(message=words, model="m", llm_provider="openai")
    assert classify_error(error) == "context_too_long"
    other = litellm.BadRequestError(
        message="temperature must be <= 2", model="m", llm_provider="openai"
    )
    assert classify_error(other) == "bad_request"


# --------------------------------------------------------------------------- the adapter


def test_the_litellm_adapter_counts_with_token_counter_for_mapped_models_only() -> None:
    from modes_tui.core.config.models import ModelCatalog, ModelConfig
    from modes_tui.llm.litellm_import import import_litellm
    from modes_tui.llm.litellm_model import LiteLLMChatModel

    catalog = ModelCatalog({"box": ModelConfig(model="openai/gemma", alias="box")})
    adapter = LiteLLMChatModel(offline=True, models=catalog)
    assert isinstance(adapter, TokenCounter)
    texts = ["Hello there, how are the tides today?", ""]
    counted = adapter.count_tokens("openai/gpt-4o-mini", texts)
    assert counted is not None
    assert counted.tokenizer == "tokenizer: litellm token_counter, openai/gpt-4o-mini"
    litellm = import_litellm()
    expected = tuple(litellm.token_counter(model="openai/gpt-4o-mini", text=t) for t in texts)
    assert counted.counts == expected and counted.counts[0] > 0
    # a server litellm has no entry for: its tokenizer is unknown, so the caller estimates
    assert adapter.count_tokens("box", texts) is None
