"""Answering the REPL's questions in tests as a person would: after the question shows."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from modes_tui.repl.questions import PromptConfirmer

T = TypeVar("T")


async def answer_when_asked(
    confirmer: PromptConfirmer, pipe: Any, keys: str, *, prompt: int = 1
) -> None:
    """Type `keys` into `pipe` once `confirmer` waits for an answer for the `prompt`-th
    time (keys sent any earlier are typed ahead, and never its answer); fail after 30 s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30.0
    while not (confirmer.answering and confirmer.prompts == prompt):
        if loop.time() > deadline or confirmer.prompts > prompt:
            raise AssertionError(
                f"question {prompt} never waited for its answer ({confirmer.prompts} asked)"
            )
        await asyncio.sleep(0.01)
    pipe.send_text(keys)


async def within(asked: Awaitable[T], seconds: float = 30.0) -> T:
    """The answer of a question being asked; a question still waiting after `seconds`
    (it took the wrong keys, or none) fails the test instead of hanging it."""
    return await asyncio.wait_for(asked, seconds)
