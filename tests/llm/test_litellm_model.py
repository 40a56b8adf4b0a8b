"""The litellm adapter, driven through litellm's real code by the fake custom provider."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from modes_tui.core.errors import ProviderError
from modes_tui.core.model.wire import (
    ModelEvent,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
    ToolCall,
    ToolCallChunk,
    UsageReport,
)
from modes_tui.llm.litellm_import import import_litellm
from modes_tui.llm.litellm_model import LiteLLMChatModel
from modes_tui.llm.provider_errors import classify_error
from tests.support.fake_provider import FakeProvider, Reply


def request(model: str = "fake/plain", **kwargs: Any) -> ModelRequest:
    return ModelRequest(model=model, messages=({"role": "user", "content": "hi"},), **kwargs)


async def collect(model: LiteLLMChatModel, req: ModelRequest) -> list[ModelEvent]:
    return [event async for event in model.stream(req)]


async def test_text_streams_in_chunks_with_usage_and_cost(fake_llm: FakeProvider) -> None:
    fake_llm.script(Reply(text=["Hel", "lo", "!"], usage=(10, 3)))
    events = await collect(LiteLLMChatModel(), request(temperature=0.3))
    assert [e.text for e in events if isinstance(e, TextChunk)] == ["Hel", "lo", "!"]
    usage = events[-1]
    assert isinstance(usage, UsageReport)
    assert (usage.prompt_tokens, usage.completion_tokens) == (10, 3)
    assert usage.cost == pytest.approx(10 * 1e-6 + 3 * 2e-6)
    assert fake_llm.seen[0].params["temperature"] == 0.3


async def test_tool_calls_arrive_whole_after_the_text(fake_llm: FakeProvider) -> None:
    fake_llm.script(
        Reply(text="Let me look.", tool_calls=[("read_file", {"path": "a.py"}), ("list_files", {})])
    )
    events = await collect(LiteLLMChatModel(), request())
    calls = [e for e in events if isinstance(e, ToolCallChunk)]
    assert [c.call.name for c in calls] == ["read_file", "list_files"]
    assert calls[0].call.arguments == {"path": "a.py"} and calls[0].invalid_arguments is None
    assert isinstance(calls[0].call, ToolCall) and calls[0].call.id


async def test_invalid_tool_arguments_are_reported_not_raised(fake_llm: FakeProvider) -> None:
    fake_llm.script(Reply(text="", tool_calls=[("read_file", '{"path": ')]))
    events = await collect(LiteLLMChatModel(), request())
    call = next(e for e in events if isinstance(e, ToolCallChunk))
    assert call.call.arguments == {}
    assert call.invalid_arguments is not None and "not valid JSON" in call.invalid_arguments


async def test_reasoning_streams_separately(fake_llm: FakeProvider) -> None:
    fake_llm.script(Reply(text="42", reasoning=["Let me ", "think."]))
    events = await collect(LiteLLMChatModel(), request("fake/thinker", reasoning_effort="high"))
    assert [e.text for e in events if isinstance(e, ReasoningChunk)] == ["Let me ", "think."]
    assert fake_llm.seen[0].params["reasoning_effort"] == "high"


def test_capabilities_come_from_litellm(fake_llm: FakeProvider) -> None:
    model = LiteLLMChatModel()
    assert model.supports_reasoning("fake/thinker") is True
    assert model.supports_reasoning("fake/plain") is False
    assert model.supports_reasoning("nobody/knows-this-model") is False


async def test_complete_returns_text_and_top_logprobs(fake_llm: FakeProvider) -> None:
    fake_llm.script(Reply(text="A", logprobs=[{"A": -0.1, "B": -2.5}], usage=(40, 1)))
    completion = await LiteLLMChatModel().complete(
        request(max_tokens=1, extra={"logprobs": True, "top_logprobs": 2})
    )
    assert completion.text == "A"
    assert completion.top_logprobs == ({"A": -0.1, "B": -2.5},)
    assert completion.usage is not None and completion.usage.prompt_tokens == 40


def litellm_errors() -> list[tuple[str, BaseException]]:
    litellm = import_litellm(offline=True)
    args = {"model": "fake/plain", "llm_provider": "fake"}
    return [
        ("timeout", litellm.Timeout(message="took 30s", **args)),
        ("rate_limit", litellm.RateLimitError(message="slow down", **args)),
        ("auth", litellm.AuthenticationError(message="bad key sk-...", **args)),
        ("connection", litellm.APIConnectionError(message="connection refused", **args)),
        ("context_too_long", litellm.ContextWindowExceededError(message="too many tokens", **args)),
        ("not_found", litellm.NotFoundError(message="no such model", **args)),
        ("bad_request", litellm.BadRequestError(message="temperature too high", **args)),
    ]


@pytest.mark.parametrize("index", range(7))
async def test_every_provider_error_kind_becomes_one_error_with_a_hint(
    fake_llm: FakeProvider, index: int
) -> None:
    kind, error = litellm_errors()[index]
    fake_llm.script(Reply(error=error))
    with pytest.raises(ProviderError) as caught:
        await collect(LiteLLMChatModel(), request())
    assert caught.value.kind == kind
    assert caught.value.hint
    assert "Traceback" not in str(caught.value)
    assert str(caught.value).startswith(kind.replace("_", " ") + " (fake/plain): ")


async def test_an_error_mid_stream_is_a_provider_error(fake_llm: FakeProvider) -> None:
    litellm = import_litellm(offline=True)
    broken = litellm.APIConnectionError(
        message="peer reset", model="fake/plain", llm_provider="fake"
    )
    fake_llm.script(Reply(text=["one ", "two ", "three"], error=broken, error_after=2))
    seen: list[str] = []
    with pytest.raises(ProviderError) as caught:
        async for event in LiteLLMChatModel().stream(request()):
            if isinstance(event, TextChunk):
                seen.append(event.text)
    assert seen == ["one ", "two "]
    assert caught.value.kind == "connection" and "peer reset" in caught.value.provider_message


async def test_unknown_provider_is_not_found() -> None:
    with pytest.raises(ProviderError) as caught:
        await collect(LiteLLMChatModel(offline=True), request("nosuchprovider-xyz/model"))
    assert caught.value.kind in {"not_found", "bad_request"}
    assert caught.value.hint.startswith(("check the model id", "the provider refused"))


async def test_a_missing_api_key_is_an_auth_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError) as caught:
        await collect(LiteLLMChatModel(timeout=5), request("openai/gpt-4.1-mini"))
    assert caught.value.kind == "auth", caught.value
    assert "OPENAI_API_KEY" in caught.value.hint


async def test_cancelling_a_stream_stops_the_provider(fake_llm: FakeProvider) -> None:
    fake_llm.started = asyncio.Event()
    fake_llm.script(Reply(text=["a"] * 100, delay=0.02))
    model = LiteLLMChatModel()

    async def consume() -> None:
        async for _ in model.stream(request()):
            pass

    task = asyncio.create_task(consume())
    await asyncio.wait_for(fake_llm.started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_plain_python_errors_are_classified() -> None:
    assert classify_error(TimeoutError()) == "timeout"
    assert classify_error(ValueError("x")) == "unknown"
