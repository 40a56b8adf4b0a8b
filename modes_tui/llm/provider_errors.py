"""litellm's failures as one `ProviderError`: its kind, the provider's own words, a hint.

litellm wraps provider errors in its own classes, sometimes several deep, and often in
front of a vaguer message; this module digs out what happened (by class names, so it needs
no litellm import) and says what to do about it.
"""

from __future__ import annotations

import asyncio
import re

from modes_tui.core.errors import ProviderError, ProviderErrorKind

HINTS: dict[ProviderErrorKind, str] = {
    "timeout": "the model took too long; retry, or raise `timeout` for slow models",
    "rate_limit": "the provider is rate-limiting you; wait a moment and retry",
    "auth": "check the API key for this provider (e.g. OPENAI_API_KEY, ANTHROPIC_API_KEY)",
    "connection": "the connection to the provider failed; check the network, or use the offline "
    "model local/gemma-3-270m (modes-tui --model local/gemma-3-270m)",
    "bad_stream": "the provider sent an answer that could not be read; retry",
    "server_error": "the provider failed on its side (an HTTP 5xx answer); retry in a moment",
    "crashed": "the model's process died; retry starts a new one",
    "context_too_long": "the request is longer than this model accepts even with the earlier "
    "turns compacted; /clear, or set `context_window` for this model in config.yaml",
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


_CONTEXT_LIMIT = re.compile(
    r"context[ _]length[ _]exceeded|maximum context length|exceeds? (?:the )?context window"
    r"|exceeds? (?:the )?(?:model's )?context length|prompt is too long|input is too long"
    r"|too many tokens|context window exceeded",
    re.IGNORECASE,
)
"""How providers word a request that is too long when litellm does not map it to
`ContextWindowExceededError` (llama.cpp's server: "Requested tokens (2300) exceed context
window of 2048"; Anthropic: "prompt is too long"; OpenAI's code `context_length_exceeded`)."""


def _mentions_context_limit(error: BaseException) -> bool:
    return any(_CONTEXT_LIMIT.search(str(item)) for item in _chain(error))


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
        return "context_too_long" if _mentions_context_limit(whole or error) else "bad_request"
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
    return ProviderError(kind, _provider_message(_unwrap(error)), hint=HINTS[kind], model=model)
