"""The litellm adapter: the only module that calls litellm for chat.

Every model call goes through here, the embedded local model included (it is a litellm
custom provider, `local.py`, registered before its first call). litellm is imported lazily
(`litellm_import.py`); its failures become one `ProviderError` with the provider's own
words and a hint (`provider_errors.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modes_tui.core.config.models import ModelCatalog, ModelConfig, ModelPrice
from modes_tui.core.context.ports import CountedTokens
from modes_tui.core.errors import ProviderError
from modes_tui.core.model.ports import ModelCapabilities
from modes_tui.core.model.wire import (
    Completion,
    ModelEvent,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
    ToolCall,
    ToolCallChunk,
    UsageReport,
)
from modes_tui.llm.litellm_import import import_litellm, import_litellm_async
from modes_tui.llm.provider_errors import HINTS, to_provider_error

LOCAL_PREFIX = "local/"


def is_remote(model: str) -> bool:
    """Whether calling `model` needs the network."""
    return not (model.startswith(LOCAL_PREFIX) or model.startswith("fake/"))


# --------------------------------------------------------------------------- the adapter


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _StreamedCalls:
    """Tool calls as they stream: fragments of id, name and arguments, keyed by index."""

    def __init__(self) -> None:
        self._pending: dict[int, _PendingCall] = {}

    def add(self, fragments: Iterable[Any]) -> None:
        """Join one delta's fragments to the calls they continue (or start)."""
        for fragment in fragments:
            call = self._pending.setdefault(fragment.index or 0, _PendingCall())
            call.id = fragment.id or call.id
            if fragment.function is not None:
                call.name = fragment.function.name or call.name
                call.arguments.append(fragment.function.arguments or "")

    def chunks(self) -> list[ToolCallChunk]:
        """The complete calls, in index order (once the stream has ended)."""
        return [_tool_call_chunk(self._pending[index], index) for index in sorted(self._pending)]


def _reasoning_of(delta: Any) -> Any:
    """A delta's reasoning text: litellm's own field, or the provider-specific one."""
    reasoning = _read(delta, "reasoning_content")
    specific = _read(delta, "provider_specific_fields")
    if not reasoning and specific:
        reasoning = specific.get("reasoning_content")
    return reasoning


LocalRegistrar = Callable[[str], None]


class LiteLLMChatModel:
    """`ChatModel` over litellm: streaming, whole completions, capabilities."""

    def __init__(
        self,
        *,
        timeout: float = 120.0,
        offline: bool = False,
        local_model_path: Path | None = None,
        data_dir: Path | None = None,
        register_local: LocalRegistrar | None = None,
        models: ModelCatalog | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.models = models or ModelCatalog()
        """Aliases from config.yaml `models:`; a request's model may name one."""
        self.environ = os.environ if environ is None else environ
        """Where `api_key_env` variables are read, at each call."""
        self.timeout = timeout
        self.offline = offline
        self.local_model_path = local_model_path
        self.data_dir = data_dir
        self._register_local = register_local
        self._local_ready: set[str] = set()
        self._local_lock = threading.Lock()
        self._capabilities: dict[str, ModelCapabilities] = {}

    # -- capabilities

    def capabilities(self, model: str) -> ModelCapabilities:
        """Everything below for `model`: configured values first, then litellm's model map.

        Kept per model: the engine, the cost ledger and the judge router all ask, and the
        first question about a provider can take a while (litellm loads its config then).
        """
        known = self._capabilities.get(model)
        if known is None:
            known = ModelCapabilities(
                tools=self.supports_tools(model),
                reasoning=self.supports_reasoning(model),
                logprobs=self.supports_logprobs(model),
                price=self.price(model),
                context_window=self.context_window(model),
            )
            self._capabilities[model] = known
        return known

    def supports_reasoning(self, model: str) -> bool:
        """Whether litellm says `model` takes `reasoning_effort`."""
        return self._supports("supports_reasoning", model)

    def supports_tools(self, model: str) -> bool:
        """Whether litellm says `model` can call functions."""
        return self._supports("supports_function_calling", model)

    def supports_logprobs(self, model: str) -> bool:
        """Whether `model` returns token log probabilities."""
        model = self.models.resolve(model).model
        if model.startswith(LOCAL_PREFIX):
            return False  # the in-process provider streams text only
        litellm = import_litellm(offline=self.offline)
        self._ensure_local(model)
        try:
            params = litellm.get_supported_openai_params(model=model) or []
        except Exception:  # noqa: BLE001 - unknown models simply have no known params
            return False
        return "logprobs" in params or "top_logprobs" in params

    def _supports(self, check: str, model: str) -> bool:
        config = self.models.resolve(model)
        override = {
            "supports_reasoning": config.reasoning,
            "supports_function_calling": config.tools,
        }
        if override.get(check) is not None:
            return bool(override[check])
        model = config.model
        litellm = import_litellm(offline=self.offline)
        self._ensure_local(model)
        try:
            return bool(getattr(litellm, check)(model=model))
        except Exception:  # noqa: BLE001 - litellm raises for unmapped models: not supported
            return False

    # -- calls

    def _needs_registration(self, model: str) -> bool:
        # a thread hop costs a loop turn on every call; only the first local call needs it
        return model.startswith(LOCAL_PREFIX) and model not in self._local_ready

    def _ensure_local(self, model: str) -> None:
        """Register the in-process provider before the first `local/` call."""
        if not model.startswith(LOCAL_PREFIX) or model in self._local_ready:
            return
        with self._local_lock:
            if model in self._local_ready:
                return
            if self._register_local is not None:
                self._register_local(model)
            else:
                from modes_tui.core.paths import app_dirs

                # an adapter module loaded on demand; it loads llama.cpp on first use
                from modes_tui.llm.local import register_local_provider

                register_local_provider(
                    self.local_model_path, data_dir=self.data_dir or app_dirs().data
                )
            self._local_ready.add(model)

    def price(self, model: str) -> ModelPrice | None:
        """USD per token: the configured price, else litellm's price list; None if unknown."""
        config = self.models.resolve(model)
        if config.price is not None:
            return config.price
        info = self._model_info(config)
        prices = (info.get("input_cost_per_token"), info.get("output_cost_per_token"))
        if any(not isinstance(value, int | float) for value in prices):
            return None
        return ModelPrice(float(prices[0]), float(prices[1]))  # type: ignore[arg-type]

    def context_window(self, model: str) -> int | None:
        """Input tokens `model` accepts: configured, else litellm's model map; None if unknown."""
        config = self.models.resolve(model)
        if config.context_window is not None:
            return config.context_window
        window = self._model_info(config).get("max_input_tokens")
        return int(window) if isinstance(window, int) else None

    def count_tokens(self, model: str, texts: Sequence[str]) -> CountedTokens | None:
        """Tokens of each text by `model`'s own tokenizer (`TokenCounter`): the GGUF's for
        the embedded model (counted in its process), litellm's `token_counter` for a model
        in litellm's model map; None for any other (the caller estimates)."""
        config = self.models.resolve(model)
        if config.model.startswith(LOCAL_PREFIX):
            self._ensure_local(config.model)
            from modes_tui.llm.local import count_local_tokens

            counts = count_local_tokens(texts)
            if counts is None:
                return None
            return CountedTokens(tuple(counts), f"tokenizer: the GGUF's, of {config.model}")
        if not self._model_info(config):
            return None  # litellm would fall back to an unrelated tokenizer: say it is unknown
        litellm = import_litellm(offline=self.offline)
        counts = [int(litellm.token_counter(model=config.model, text=text)) for text in texts]
        return CountedTokens(tuple(counts), f"tokenizer: litellm token_counter, {config.model}")

    def _model_info(self, config: ModelConfig) -> Mapping[str, Any]:
        litellm = import_litellm(offline=self.offline)
        self._ensure_local(config.model)
        try:
            return litellm.get_model_info(model=config.model) or {}
        except Exception:  # noqa: BLE001 - litellm raises for models it has no entry for
            return {}

    def _params(self, request: ModelRequest, *, stream: bool) -> dict[str, Any]:
        params = request.params()
        config = self.models.resolve(request.model)
        params["model"] = config.model
        if config.api_key_env and not self.environ.get(config.api_key_env):
            raise ProviderError(
                "auth",
                f"{config.api_key_env} is not set ({config.source} reads the key from it)",
                hint=f"export {config.api_key_env}=<your key>, then retry",
                model=request.model,
            )
        for key, value in config.call_params(self.environ).items():
            params.setdefault(key, value)  # the request's own parameters win
        params.setdefault("timeout", self.timeout)
        if stream:
            params["stream"] = True
            params["stream_options"] = {"include_usage": True}
        if request.reasoning_effort is not None:
            # custom providers reject it unless it is allowed explicitly
            params["allowed_openai_params"] = ["reasoning_effort"]
        return params

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream text, reasoning, then complete tool calls and usage."""
        # the first import takes seconds: keep it off the event loop
        litellm = await import_litellm_async(offline=self.offline)
        calls = _StreamedCalls()
        usage: Any = None
        response: Any = None
        try:
            params = self._params(request, stream=True)
            if self._needs_registration(params["model"]):
                await asyncio.to_thread(self._ensure_local, params["model"])
            response = await litellm.acompletion(**params)
            async for chunk in response:
                found = _read(chunk, "usage")
                if found:
                    usage = found
                if not chunk.choices:
                    continue
                delta = chunk.choices[0].delta
                reasoning = _reasoning_of(delta)
                if reasoning:
                    yield ReasoningChunk(str(reasoning))
                content = _read(delta, "content")
                if content:
                    yield TextChunk(content)
                calls.add(_read(delta, "tool_calls") or ())
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as error:
            raise to_provider_error(error, request.model) from error
        finally:
            close = getattr(response, "aclose", None)
            if close is not None:
                # closing a broken stream may fail again; the first error is the one to show
                with contextlib.suppress(Exception):
                    await close()
        for call in calls.chunks():
            yield call
        if usage is not None:
            yield self._usage(usage, request.model)

    async def complete(self, request: ModelRequest) -> Completion:
        """One whole answer (routing backends): text, top logprobs, usage."""
        # the first import takes seconds: keep it off the event loop
        litellm = await import_litellm_async(offline=self.offline)
        try:
            params = self._params(request, stream=False)
            if self._needs_registration(params["model"]):
                await asyncio.to_thread(self._ensure_local, params["model"])
            response = await litellm.acompletion(**params)
        except Exception as error:
            raise to_provider_error(error, request.model) from error
        try:
            choice = response.choices[0]
            text = choice.message.content or ""
        except (AttributeError, IndexError, TypeError) as error:
            raise ProviderError(
                "bad_stream",
                f"the answer had no message ({error})",
                hint=HINTS["bad_stream"],
                model=request.model,
            ) from error
        positions: list[Mapping[str, float]] = []
        logprobs = getattr(choice, "logprobs", None)
        for token in getattr(logprobs, "content", None) or ():
            tops = getattr(token, "top_logprobs", None) or [token]
            positions.append({str(t.token): float(t.logprob) for t in tops})
        usage = getattr(response, "usage", None)
        return Completion(
            text=text,
            top_logprobs=tuple(positions),
            usage=self._usage(usage, request.model) if usage else None,
            model=str(getattr(response, "model", "") or request.model),
        )

    def _usage(self, usage: Any, model: str) -> UsageReport:
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        cost = getattr(usage, "cost", None)
        config = self.models.resolve(model)
        if config.price is not None:  # a configured price wins over any the provider reports
            cost = config.price.cost(prompt, completion)
        if cost is None:
            try:
                prompt_cost, completion_cost = import_litellm().cost_per_token(
                    model=config.model, prompt_tokens=prompt, completion_tokens=completion
                )
                cost = prompt_cost + completion_cost
            except Exception:  # noqa: BLE001 - unknown price: cost stays unknown
                cost = None
        return UsageReport(prompt, completion, float(cost) if cost is not None else None)


def _read(item: Any, name: str) -> Any:
    """`getattr(item, name, None)`, minus pydantic's slow `__getattr__` on the hot path.

    litellm's stream chunks are pydantic models that keep most delta fields (content,
    tool_calls, usage) in `__pydantic_extra__`, so plain attribute access takes pydantic's
    fallback path, and a missing field raises inside it: microseconds per read, several
    reads per chunk. The dicts are read first; anything else falls back to `getattr`.
    """
    fields = getattr(item, "__dict__", None)
    if fields is not None and name in fields:
        return fields[name]
    extra = getattr(item, "__pydantic_extra__", None)
    if extra is not None and name in extra:
        return extra[name]
    if extra is not None:
        key = (type(item), name)
        on_class = _CLASS_HAS.get(key)
        if on_class is None:  # pydantic's metaclass makes this lookup slow: ask once
            on_class = _CLASS_HAS[key] = hasattr(type(item), name)
        if not on_class:
            return None  # a pydantic model without that field, and no property of that name
    return getattr(item, name, None)


_CLASS_HAS: dict[tuple[type, str], bool] = {}


def _tool_call_chunk(call: _PendingCall, index: int) -> ToolCallChunk:
    raw = "".join(call.arguments).strip()
    invalid = None
    arguments: dict[str, Any] = {}
    if raw:
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as error:
            invalid = f"arguments are not valid JSON ({error.msg} at {error.pos}): {raw[:200]}"
        else:
            if isinstance(parsed, dict):
                arguments = parsed
            else:
                invalid = f"arguments must be a JSON object, got {type(parsed).__name__}"
    return ToolCallChunk(
        ToolCall(call.id or f"call_{index}", call.name, arguments), invalid_arguments=invalid
    )
