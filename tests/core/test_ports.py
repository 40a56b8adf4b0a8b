"""The ports in core: a model says what it can do through one typed `capabilities()`.

Every consumer (the engine's thinking and tools, the cost ledger's prices, the judge
router's logprobs) asks that one method; nothing probes an adapter for optional methods.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from modes_tui.core.config.models import ModelCatalog, ModelPrice, parse_models
from modes_tui.core.engine.costs import TurnCosts
from modes_tui.core.engine.engine import Engine
from modes_tui.core.history.events import RequestBuilt, TurnEvent, TurnFailed, TurnFinished
from modes_tui.core.history.ledger import CostLedger
from modes_tui.core.model.ports import ChatModel, ModelCapabilities
from modes_tui.core.model.wire import ModelRequest
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
from modes_tui.core.routing.router import Router
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.llm.litellm_model import LiteLLMChatModel
from tests.support.engine_support import with_config
from tests.support.fake_provider import FakeProvider

MODES: dict[str, dict[str, Any]] = {
    "chat": {"description": "Everyday chat.", "keywords": ["hello"]},
    "code": {
        "description": "Code questions.",
        "keywords": ["python"],
        "thinking": "high",
        "tools": ["read_file"],
    },
}


@pytest.fixture
def pack(write_pack: Callable[..., Path]) -> Pack:
    return load_pack(profiles_dir=write_pack(modes=MODES))


class CountingModel(ScriptedModel):
    """A scripted model that counts capability questions, and can fail them."""

    def __init__(self, fail: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.asked: list[str] = []
        self.fail = fail

    def capabilities(self, model: str) -> ModelCapabilities:
        self.asked.append(model)
        if self.fail:
            raise RuntimeError("the model map is unreadable")
        return super().capabilities(model)


def engine_for(pack: Pack, model: ChatModel, tmp_path: Path, **kwargs: Any) -> Engine:
    return Engine(
        **with_config(
            pack=pack,
            router=Router(pack, KeywordClassifier()),
            model=model,
            default_model="scripted/plain",
            cwd=tmp_path,
            **kwargs,
        )
    )


async def turn(engine: Engine, text: str) -> list[TurnEvent]:
    return [event async for event in engine.run_turn(text)]


def built(events: list[TurnEvent]) -> RequestBuilt:
    return next(event for event in events if isinstance(event, RequestBuilt))


# --------------------------------------------------------------------------- the adapters


def test_the_adapters_and_the_fake_are_whole_chat_models() -> None:
    assert isinstance(ScriptedModel(), ChatModel)
    assert isinstance(LiteLLMChatModel(offline=True), ChatModel)


def test_the_scripted_model_says_tools_and_reasoning_unless_told_otherwise() -> None:
    plain = ModelCapabilities(tools=False, price=ModelPrice(1e-6, 2e-6))
    model = ScriptedModel(capable_of={"scripted/cheap": plain})
    assert model.capabilities("scripted/echo") == ModelCapabilities(tools=True, reasoning=False)
    assert model.capabilities("scripted/thinker").reasoning is True
    assert model.capabilities("scripted/cheap") == plain


def test_litellm_capabilities_take_configured_values_first_then_litellm_map(
    fake_llm: FakeProvider,
) -> None:
    models = parse_models(
        {
            "cheap": {
                "model": "fake/plain",
                "tools": False,
                "reasoning": True,
                "input_cost_per_token": 0.01,
                "output_cost_per_token": 0.1,
                "context_window": 8000,
            }
        },
        where="config.yaml",
    )
    adapter = LiteLLMChatModel(offline=True, models=ModelCatalog(models))
    assert adapter.capabilities("cheap") == ModelCapabilities(
        tools=False,
        reasoning=True,
        logprobs=adapter.supports_logprobs("fake/plain"),
        price=ModelPrice(0.01, 0.1),
        context_window=8000,
    )
    assert adapter.capabilities("cheap") is adapter.capabilities("cheap")  # asked once
    mapped = adapter.capabilities("fake/thinker")
    assert (mapped.tools, mapped.reasoning) == (True, True)  # from litellm's registered map
    unknown = adapter.capabilities("nobody/knows")
    assert (unknown.tools, unknown.reasoning, unknown.price) == (False, False, None)


def test_the_local_model_has_no_logprobs_tools_or_reasoning() -> None:
    registered: list[str] = []
    adapter = LiteLLMChatModel(offline=True, register_local=registered.append)
    found = adapter.capabilities("local/gemma-3-270m")
    assert found.logprobs is False
    assert registered == ["local/gemma-3-270m"]  # asked after the provider is registered


# --------------------------------------------------------------------------- the engine


async def test_the_engine_asks_a_model_once_and_uses_the_answer(pack: Pack, tmp_path: Path) -> None:
    thinker = ModelCapabilities(tools=True, reasoning=True)
    model = CountingModel(capable_of={"scripted/plain": thinker})
    engine = engine_for(pack, model, tmp_path)
    first = await turn(engine, "a python question")
    asked_in_the_first_turn = list(model.asked)
    await turn(engine, "another python question")
    assert built(first).request.reasoning_effort == "high"
    assert [spec.name for spec in built(first).request.tools] == ["read_file"]
    assert built(first).notes == ()
    assert set(asked_in_the_first_turn) == {"scripted/plain"}
    assert model.asked == asked_in_the_first_turn  # the answers are kept for the next turn


async def test_a_model_without_tools_or_reasoning_gets_neither_with_notes(
    pack: Pack, tmp_path: Path
) -> None:
    bare = ModelCapabilities(tools=False, reasoning=False)
    model = ScriptedModel(capable_of={"scripted/plain": bare})
    events = await turn(engine_for(pack, model, tmp_path), "a python question")
    request = built(events)
    assert request.request.tools == () and request.request.reasoning_effort is None
    assert request.notes == ("thinking n/a for scripted/plain", "tools n/a for scripted/plain")
    assert isinstance(events[-1], TurnFinished)


async def test_a_failing_capability_question_is_a_note_not_a_failed_turn(
    pack: Pack, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = CountingModel(fail=True).script(ScriptedReply("still answered"))
    with caplog.at_level(logging.ERROR):
        events = await turn(engine_for(pack, model, tmp_path), "a python question")
    assert built(events).notes == (
        "thinking n/a for scripted/plain",
        "tools n/a for scripted/plain",
    )
    assert not any(isinstance(event, TurnFailed) for event in events)
    assert isinstance(events[-1], TurnFinished) and events[-1].message.content == "still answered"
    assert "capabilities(scripted/plain) failed" in caplog.text
    assert "the model map is unreadable" in caplog.text


# --------------------------------------------------------------------------- prices


async def test_prices_come_from_capabilities_and_are_asked_once() -> None:
    priced = ModelCapabilities(price=ModelPrice(0.5, 1.0))
    model = CountingModel(capable_of={"scripted/dear": priced})
    costs = TurnCosts(model, CostLedger())
    assert await costs.price("scripted/dear") == ModelPrice(0.5, 1.0)
    assert await costs.price("scripted/dear") == ModelPrice(0.5, 1.0)
    assert await costs.price("scripted/free") is None
    assert model.asked == ["scripted/dear", "scripted/free"]


async def test_a_failing_price_question_means_an_unknown_price(
    caplog: pytest.LogCaptureFixture,
) -> None:
    costs = TurnCosts(CountingModel(fail=True), CostLedger(budget=1.0))
    request = ModelRequest("scripted/dear", ({"role": "user", "content": "hi"},))
    with caplog.at_level(logging.ERROR):
        assert await costs.price("scripted/dear") is None
        assert await costs.check_budget("scripted/dear", request) is None
    assert "capabilities(scripted/dear) failed" in caplog.text


async def test_the_budget_check_uses_the_price_capabilities_report() -> None:
    dear = ModelCapabilities(price=ModelPrice(1.0, 1.0))
    costs = TurnCosts(ScriptedModel(capable_of={"scripted/dear": dear}), CostLedger(budget=0.01))
    request = ModelRequest("scripted/dear", ({"role": "user", "content": "x" * 400},))
    refusal = await costs.check_budget("scripted/dear", request)
    assert refusal is not None and "nobody can confirm here" in refusal
