"""The litellm adapter: the only module that calls litellm for chat.

Every model call goes through here, the embedded local model included (it is a litellm
custom provider). `import litellm` costs seconds and, unless told otherwise, reaches for
the network to fetch a price list, so it is imported lazily, with the environment set
first, and can be warmed in a background thread after the first paint (`preload`).
Provider failures become one `ProviderError` with the provider's own words and a hint.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from modes_tui.core.conversation import ToolCall
from modes_tui.core.errors import ProviderError, ProviderErrorKind
from modes_tui.core.models import ModelCatalog, ModelConfig, ModelPrice
from modes_tui.core.ports import ModelCapabilities
from modes_tui.core.wire import (
    Completion,
    ModelEvent,
    ModelRequest,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
    UsageReport,
)

LOCAL_PREFIX = "local/"
_import_lock = threading.Lock()
_litellm: ModuleType | None = None


def configure_environment(*, offline: bool) -> None:
    """Set what litellm reads at import: the bundled price list, and offline mode."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if offline:
        os.environ.setdefault("LITELLM_OFFLINE_MODE", "True")


def import_litellm(*, offline: bool = False) -> ModuleType:
    """Import litellm once, quietly, with the environment set first. Thread-safe."""
    global _litellm
    with _import_lock:
        if _litellm is None:
            configure_environment(offline=offline)
            import litellm

            litellm.suppress_debug_info = True
            litellm.telemetry = False
            logging.getLogger("LiteLLM").setLevel(logging.ERROR)
            _litellm = litellm
        return _litellm


async def import_litellm_async(*, offline: bool = False) -> ModuleType:
    """`import_litellm` without blocking the event loop on the first, slow import."""
    if _litellm is not None:
        return _litellm
    return await asyncio.to_thread(import_litellm, offline=offline)


def preload(*, offline: bool = False) -> threading.Thread:
    """Import litellm in a daemon thread (call after the first paint)."""
    thread = threading.Thread(
        target=import_litellm, kwargs={"offline": offline}, name="litellm-import", daemon=True
    )
    thread.start()
    return thread


def is_remote(model: str) -> bool:
    """Whether calling `model` needs the network."""
    return not (model.startswith(LOCAL_PREFIX) or model.startswith("fake/"))


# --------------------------------------------------------------------------- errors

_HINTS: dict[ProviderErrorKind, str] = {
    "timeout": "the model took too long; retry, or raise `timeout` for slow models",
    "rate_limit": "the provider is rate-limiting you; wait a moment and retry",
    "auth": "check the API key for this provider (e.g. OPENAI_API_KEY, ANTHROPIC_API_KEY)",
    "connection": "the connection to the provider failed; check the network, or use the offline "
    "model local/gemma-3-270m (modes-tui --model local/gemma-3-270m)",
    "bad_stream": "the provider sent an answer that could not be read; retry",
    "server_error": "the provider failed on its side (an HTTP 5xx answer); retry in a moment",
    "context_too_long": "the conversation is longer than this model accepts; /clear, or lower "
    "`history: {last: N}` in the mode's profile",
    "not_found": "check the model id (provider/model, e.g. openai/gpt-4.1-mini) in the profile "
    "or in --model",
    "bad_request": "the provider refused the request; check the profile's parameters",
    "unknown": "see the log for details; retry",
}


_WRAPPER_PREFIX = re.compile(
    r"^(?:(?:litellm|LiteLLM)\.\w+: |\w*(?:Error|Exception|Timeout)(?::| -) )+"
)
"""litellm's class names in front of the provider's words (`InternalServerError:
OpenAIException - ...`): they say nothing the error's kind does not."""
_VAGUE = frozenset({"connection error.", "request timed out.", "error", ""})
_NETWORK_NAMES = frozenset(
    {"ConnectError", "ReadError", "RemoteProtocolError", "ClientConnectorError", "OSError"}
)


def _provider_message(error: BaseException) -> str:
    text = str(getattr(error, "message", "") or str(error) or type(error).__name__)
    first = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    first = _WRAPPER_PREFIX.sub("", first).strip() or first
    said, _, again = first.partition(" Error_str: ")
    if again and again.strip() == said.strip():
        first = said  # litellm repeats the words of some errors
    if first.lower() in _VAGUE:
        # "Connection error." alone says nothing; the network library's words say what
        cause = _network_cause(error)
        if cause:
            first = f"{first} ({cause})"
    return first[:500]


def _chain(error: BaseException) -> list[BaseException]:
    """`error` and everything it wraps (original_exception, cause, context), outside in."""
    found: list[BaseException] = []
    seen: set[int] = set()
    queue: list[BaseException | None] = [error]
    while queue:
        item = queue.pop(0)
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        found.append(item)
        inner = getattr(item, "original_exception", None)
        queue += [
            inner if isinstance(inner, BaseException) else None,
            item.__cause__,
            item.__context__,
        ]
    return found


def _network_cause(error: BaseException) -> str:
    """The words of the first network-level failure `error` wraps ('' if none)."""
    for item in _chain(error):
        names = {cls.__name__ for cls in type(item).__mro__}
        if names & _NETWORK_NAMES and str(item).strip():
            return str(item).strip().splitlines()[0]
    return ""


def _answered(error: BaseException) -> bool:
    """Whether the provider answered with an HTTP error status (it was reached).

    litellm's own wrappers subclass the status errors whatever happened, so only the
    client library's errors (openai, httpx) count.
    """
    return any(
        not type(item).__module__.startswith("litellm")
        and {cls.__name__ for cls in type(item).__mro__} & {"APIStatusError", "HTTPStatusError"}
        for item in _chain(error)
    )


def _unwrap(error: BaseException) -> BaseException:
    """litellm wraps failures inside a stream; the original says what happened."""
    for _ in range(5):
        inner = getattr(error, "original_exception", None)
        if not isinstance(inner, BaseException) or inner is error:
            break
        error = inner
    return error


_MALFORMED = frozenset({"APIResponseValidationError", "JSONDecodeError"})


def _malformed(error: BaseException) -> bool:
    """Whether an unreadable answer is anywhere in the chain.

    litellm wraps a chunk that does not parse as a connection error, keeping the parse
    error only as the wrapper's `__context__`.
    """
    seen: set[int] = set()
    stack: list[BaseException | None] = [error]
    while stack:
        item = stack.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        if {cls.__name__ for cls in type(item).__mro__} & _MALFORMED:
            return True
        inner = getattr(item, "original_exception", None)
        stack += [
            inner if isinstance(inner, BaseException) else None,
            item.__cause__,
            item.__context__,
        ]
    return False


_MISSING_KEY_WORDS = ("missing credentials", "api_key client option must be set", "no api key")


def _mentions_missing_key(error: BaseException) -> bool:
    """litellm reports an unset API key as a server error; its text says what it is."""
    text = str(error).lower()
    return any(words in text for words in _MISSING_KEY_WORDS)


def classify_error(error: BaseException) -> ProviderErrorKind:
    """Which kind of provider failure `error` is (by litellm/openai class names)."""
    kind = _classify(_unwrap(error), error)
    if kind in ("connection", "unknown") and _malformed(error):
        return "bad_stream"
    return kind


def _classify(error: BaseException, whole: BaseException | None = None) -> ProviderErrorKind:
    names = {cls.__name__ for cls in type(error).__mro__}
    if isinstance(error, asyncio.TimeoutError | TimeoutError) or names & {
        "Timeout",
        "APITimeoutError",
    }:
        return "timeout"
    if "ContextWindowExceededError" in names:
        return "context_too_long"
    if "RateLimitError" in names:
        return "rate_limit"
    if names & {"AuthenticationError", "PermissionDeniedError"} or _mentions_missing_key(error):
        return "auth"
    if "NotFoundError" in names or "LLM Provider NOT provided" in str(error):
        return "not_found"
    if names & {"ServiceUnavailableError", "BadGatewayError", "InternalServerError"} and (
        _answered(whole or error) or not _network_cause(whole or error)
    ):
        return "server_error"  # it was reached and failed on its side (HTTP 5xx)
    if names & {
        "APIConnectionError",
        "ServiceUnavailableError",
        "BadGatewayError",
        "InternalServerError",
        "ConnectionError",
    }:
        return "connection"
    if names & {"BadRequestError", "UnsupportedParamsError", "UnprocessableEntityError"}:
        return "bad_request"
    return "unknown"


def _wrapped_provider_error(error: BaseException) -> ProviderError | None:
    """Our own ProviderError (e.g. from the local provider) that litellm re-raised as its own."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, ProviderError):
            return current
        seen.add(id(current))
        inner = getattr(current, "original_exception", None)
        current = (
            inner if isinstance(inner, BaseException) else current.__cause__ or current.__context__
        )
    return None


def to_provider_error(error: BaseException, model: str) -> ProviderError:
    """One ProviderError with the provider's words and a hint."""
    ours = _wrapped_provider_error(error)
    if ours is not None:
        return ours
    kind = classify_error(error)
    return ProviderError(kind, _provider_message(_unwrap(error)), hint=_HINTS[kind], model=model)


# --------------------------------------------------------------------------- the adapter


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


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

    # -- capabilities

    def capabilities(self, model: str) -> ModelCapabilities:
        """Everything below for `model`: configured values first, then litellm's model map."""
        return ModelCapabilities(
            tools=self.supports_tools(model),
            reasoning=self.supports_reasoning(model),
            logprobs=self.supports_logprobs(model),
            price=self.price(model),
            context_window=self.context_window(model),
        )

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
        pending: dict[int, _PendingCall] = {}
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
                reasoning = _read(delta, "reasoning_content")
                specific = _read(delta, "provider_specific_fields")
                if not reasoning and specific:
                    reasoning = specific.get("reasoning_content")
                if reasoning:
                    yield ReasoningChunk(str(reasoning))
                content = _read(delta, "content")
                if content:
                    yield TextChunk(content)
                for fragment in _read(delta, "tool_calls") or ():
                    call = pending.setdefault(fragment.index or 0, _PendingCall())
                    call.id = fragment.id or call.id
                    if fragment.function is not None:
                        call.name = fragment.function.name or call.name
                        call.arguments.append(fragment.function.arguments or "")
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
        for index in sorted(pending):
            yield _tool_call_chunk(pending[index], index)
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
                hint=_HINTS["bad_stream"],
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
