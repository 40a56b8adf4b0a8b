"""A scripted litellm custom provider, so tests run litellm's real streaming and parsing code.

Register it with the `fake_llm` fixture (tests/conftest.py), then script replies:

    fake_llm.script(Reply(text=["Hel", "lo"]), Reply(tool_calls=[("read_file", {"path": "a"})]))

Each call to `fake/<anything>` takes the next reply; every request is recorded with its
messages and the parameters litellm passed on.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from modes_tui.llm.litellm_import import import_litellm

# import litellm through the adapter, so its environment (no network) is set first
import_litellm(offline=True)

from litellm import CustomLLM, ModelResponse  # noqa: E402
from litellm.types.utils import GenericStreamingChunk  # noqa: E402

PROVIDER = "fake"


@dataclass
class Reply:
    """One scripted answer."""

    text: str | Sequence[str] = "ok"
    """The answer, as one string or as the chunks to stream."""
    reasoning: Sequence[str] = ()
    """Reasoning chunks streamed before the text."""
    tool_calls: Sequence[tuple[str, Mapping[str, Any] | str]] = ()
    """(name, arguments) calls streamed after the text; a str is sent as raw arguments."""
    error: BaseException | None = None
    """Raised when the call starts."""
    error_after: int | None = None
    """Raise `error` after this many text chunks instead (a failure mid-stream)."""
    delay: float = 0.0
    """Seconds to wait before each chunk (async streaming only)."""
    usage: tuple[int, int] = (12, 5)
    """(prompt_tokens, completion_tokens)."""
    logprobs: Sequence[Mapping[str, float]] | None = None
    """For whole completions: top logprobs per generated token."""


@dataclass
class Seen:
    """What one call received."""

    model: str
    messages: list[dict[str, Any]]
    params: dict[str, Any]
    stream: bool


@dataclass
class FakeProvider(CustomLLM):
    """Answers `fake/...` models from a script."""

    replies: deque[Reply] = field(default_factory=deque)
    seen: list[Seen] = field(default_factory=list)
    started: asyncio.Event | None = None
    cancelled: bool = False

    def __post_init__(self) -> None:
        super().__init__()

    def script(self, *replies: Reply) -> FakeProvider:
        """Queue replies, in order."""
        self.replies.extend(replies)
        return self

    def _next(
        self, model: str, messages: list[dict[str, Any]], kwargs: dict[str, Any], stream: bool
    ) -> Reply:
        params = dict(kwargs.get("optional_params") or {})
        self.seen.append(Seen(model, [dict(m) for m in messages], params, stream))
        reply = self.replies.popleft() if self.replies else Reply()
        if reply.error is not None and reply.error_after is None:
            raise reply.error
        return reply

    def _chunks(self, reply: Reply) -> Iterator[GenericStreamingChunk | BaseException]:
        for text in reply.reasoning:
            yield _chunk("", provider_fields={"reasoning_content": text})
        texts = [reply.text] if isinstance(reply.text, str) else list(reply.text)
        for count, text in enumerate(texts):
            if reply.error is not None and reply.error_after == count:
                yield reply.error
                return
            yield _chunk(text)
        for index, (name, arguments) in enumerate(reply.tool_calls):
            raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
            yield _chunk(
                "",
                tool_use={
                    "id": f"call_{len(self.seen)}_{index}",
                    "type": "function",
                    "function": {"name": name, "arguments": raw},
                    "index": index,
                },
            )
        prompt, completion = reply.usage
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        finish = "tool_calls" if reply.tool_calls else "stop"
        yield _chunk("", finished=True, finish_reason=finish, usage=usage)

    def _response(self, model: str, reply: Reply) -> ModelResponse:
        text = reply.text if isinstance(reply.text, str) else "".join(reply.text)
        choice: dict[str, Any] = {
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop",
        }
        if reply.logprobs is not None:
            content = []
            for position in reply.logprobs:
                best = max(position.items(), key=lambda item: item[1])
                content.append(
                    {
                        "token": best[0],
                        "logprob": best[1],
                        "top_logprobs": [{"token": t, "logprob": lp} for t, lp in position.items()],
                    }
                )
            choice["logprobs"] = {"content": content}
        prompt, completion = reply.usage
        return ModelResponse(
            model=model,
            choices=[choice],
            usage={
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        )

    # -- litellm's CustomLLM interface

    def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:  # type: ignore[override]
        return self._response(model, self._next(model, messages, kwargs, stream=False))

    async def acompletion(
        self, model: str, messages: list, *args: Any, **kwargs: Any
    ) -> ModelResponse:  # type: ignore[override]
        reply = self._next(model, messages, kwargs, stream=False)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        return self._response(model, reply)

    def streaming(
        self, model: str, messages: list, *args: Any, **kwargs: Any
    ) -> Iterator[GenericStreamingChunk]:  # type: ignore[override]
        for chunk in self._chunks(self._next(model, messages, kwargs, stream=True)):
            if isinstance(chunk, BaseException):
                raise chunk
            yield chunk

    async def astreaming(
        self, model: str, messages: list, *args: Any, **kwargs: Any
    ) -> AsyncIterator[GenericStreamingChunk]:  # type: ignore[override]
        reply = self._next(model, messages, kwargs, stream=True)
        try:
            for chunk in self._chunks(reply):
                if reply.delay:
                    await asyncio.sleep(reply.delay)
                if self.started is not None:
                    self.started.set()
                if isinstance(chunk, BaseException):
                    raise chunk
                yield chunk
        except (asyncio.CancelledError, GeneratorExit):
            self.cancelled = True
            raise


def _chunk(
    text: str,
    *,
    finished: bool = False,
    finish_reason: str = "",
    usage: dict[str, int] | None = None,
    tool_use: dict[str, Any] | None = None,
    provider_fields: dict[str, Any] | None = None,
) -> GenericStreamingChunk:
    chunk: GenericStreamingChunk = {
        "text": text,
        "is_finished": finished,
        "finish_reason": finish_reason,
        "usage": usage,  # type: ignore[typeddict-item]
        "index": 0,
        "tool_use": tool_use,  # type: ignore[typeddict-item]
    }
    if provider_fields:
        chunk["provider_specific_fields"] = provider_fields
    return chunk


FAKE_MODELS: dict[str, dict[str, Any]] = {
    "fake/plain": {"supports_reasoning": False, "supports_function_calling": True},
    "fake/thinker": {"supports_reasoning": True, "supports_function_calling": True},
}


def install(provider: FakeProvider) -> list[dict[str, Any]]:
    """Register `provider` under `fake/`; returns the previous provider map to restore."""
    litellm = import_litellm(offline=True)
    previous = list(litellm.custom_provider_map)
    litellm.custom_provider_map = [m for m in previous if m.get("provider") != PROVIDER] + [
        {"provider": PROVIDER, "custom_handler": provider}
    ]
    litellm.utils.custom_llm_setup()
    litellm.register_model(
        {
            name: {
                "litellm_provider": PROVIDER,
                "mode": "chat",
                "max_tokens": 4096,
                "max_input_tokens": 32768,
                "input_cost_per_token": 1e-6,
                "output_cost_per_token": 2e-6,
                **capabilities,
            }
            for name, capabilities in FAKE_MODELS.items()
        }
    )
    return previous


def wait_until(predicate: Any, timeout: float = 15.0) -> bool:
    """Poll `predicate` until it is true or `timeout` passes (for cross-thread checks)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return bool(predicate())
