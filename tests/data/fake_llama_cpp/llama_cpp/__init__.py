"""A stand-in for llama-cpp-python in the model process, for tests without the weights.

Put this folder first on the model process's PYTHONPATH. Its "model file" is JSON:
`{"answer": "words to stream", "seconds_per_token": 0.05}`; it streams the answer one word
a token, honours `max_tokens` and the stopping criteria as llama.cpp does, and counts
tokens as words. It is the model process that uses it, never the test process.
"""

from __future__ import annotations

import ctypes
import json
import time
from collections.abc import Iterator
from typing import Any

__version__ = "0.0-fake"

llama_log_callback = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)


def llama_log_set(callback: Any, user_data: Any) -> None:
    return None


def llama_print_system_info() -> bytes:
    return b"CPU : FAKE = 1 |"


class StoppingCriteriaList(list):  # type: ignore[type-arg]
    def __call__(self, input_ids: Any, logits: Any) -> bool:
        return any(criterion(input_ids, logits) for criterion in self)


class Llama:
    def __init__(self, model_path: str, n_ctx: int, n_threads: int, verbose: bool) -> None:
        with open(model_path, encoding="utf-8") as handle:
            spec = json.load(handle)
        self.answer: list[str] = spec["answer"].split(" ")
        self.delay = float(spec.get("seconds_per_token", 0.0))
        self.n_tokens = 0

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return list(range(len(text.split()) + int(add_bos)))

    def create_completion(self, prompt: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
        prompt_tokens = len(self.tokenize(prompt.encode()))
        stop = kwargs.get("stopping_criteria") or StoppingCriteriaList()
        self.n_tokens = prompt_tokens
        words = self.answer[: kwargs["max_tokens"]]
        for number, word in enumerate(words):
            time.sleep(self.delay)
            self.n_tokens += 1
            if stop(None, None):
                return
            text = word if number == 0 else " " + word
            yield {"choices": [{"text": text, "finish_reason": None}]}
        self.n_tokens -= 1  # the last sampled token is not fed back, as in llama.cpp
        finish = "length" if len(words) < len(self.answer) else "stop"
        yield {"choices": [{"text": "", "finish_reason": finish}]}

    def close(self) -> None:
        return None
