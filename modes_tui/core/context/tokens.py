"""Counting tokens: the model's own tokenizer where the adapter knows one, else an estimate.

`TokenTally` counts texts for one model through a `TokenCounter` (cached by text, so a
long conversation is not tokenized again every round) and falls back to `estimate_tokens`
when the adapter knows no tokenizer or fails. Every count says how it was made
(`TokenTally.method`), so the inspector and the log never present an estimate as exact.
"""

from __future__ import annotations

import json
import logging
import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from modes_tui.core.context.ports import TokenCounter

__all__ = [
    "ESTIMATE",
    "MESSAGE_OVERHEAD",
    "TokenTally",
    "estimate_tokens",
    "message_text",
]

log = logging.getLogger("modes_tui.context")

CHARS_PER_TOKEN = 3
"""The estimate's ratio. Tokenizers of current models average 3.5 to 4.5 characters per
token on English prose and fewer on code and other scripts; 3 errs on the side of a request
that fits."""
ESTIMATE = f"estimate: 1 token per {CHARS_PER_TOKEN} characters"
"""How an estimated count is described."""
MESSAGE_OVERHEAD = 8
"""Tokens a chat template adds around each message (role markers, separators)."""
_CACHE_SIZE = 4096


def estimate_tokens(text: str) -> int:
    """The stated estimate for `text` (no tokenizer): one token per 3 characters, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def message_text(message: Mapping[str, Any]) -> str:
    """What of a wire message the model reads: its content and its tool calls' JSON."""
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif content is None:
        text = ""
    else:  # content parts (images, ...): their JSON is a fair upper bound
        text = json.dumps(content, ensure_ascii=False)
    calls = message.get("tool_calls")
    if calls:
        text += json.dumps(calls, ensure_ascii=False)
    return text


class TokenTally:
    """Counts texts for one model: its tokenizer through the adapter, else the estimate."""

    def __init__(self, model: str, counter: TokenCounter | None) -> None:
        self.model = model
        self._counter = counter
        self._cache: OrderedDict[str, int] = OrderedDict()
        self.method = ESTIMATE
        """How the latest counts were made (a tokenizer's name, or the estimate)."""
        self._exact: bool | None = None

    @property
    def exact(self) -> bool:
        """Whether the counts come from the model's own tokenizer."""
        return bool(self._exact)

    def count(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text (blocking: the adapter may tokenize in another process)."""
        missing = [text for text in dict.fromkeys(texts) if text not in self._cache]
        if missing:
            for text, tokens in zip(missing, self._count_new(missing), strict=True):
                self._cache[text] = tokens
                if len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
        return [self._cached(text) for text in texts]

    def messages(self, messages: Sequence[Mapping[str, Any]]) -> list[int]:
        """Tokens of each wire message, template overhead included."""
        counts = self.count([message_text(message) for message in messages])
        return [tokens + MESSAGE_OVERHEAD for tokens in counts]

    def _cached(self, text: str) -> int:
        tokens = self._cache.get(text)
        if tokens is None:  # evicted between counting and reading: count it alone
            return self.count([text])[0]
        self._cache.move_to_end(text)
        return tokens

    def _count_new(self, texts: list[str]) -> list[int]:
        if self._counter is not None and self._exact is not False:
            try:
                counted = self._counter.count_tokens(self.model, texts)
            except Exception:  # a broken tokenizer must not stop the turn: estimate instead
                log.exception("counting tokens for %s failed; estimating", self.model)
                counted = None
            if counted is not None and len(counted.counts) == len(texts):
                self._exact = True
                self.method = counted.tokenizer
                return list(counted.counts)
            self._exact = False  # asked once per model: the answer does not change
        self.method = ESTIMATE
        return [estimate_tokens(text) for text in texts]
