"""Answering the REPL's questions in tests as a person would: after the question shows."""

from __future__ import annotations

import asyncio
from typing import Any

from modes_tui.plain import PromptConfirmer


async def answer_when_asked(
    confirmer: PromptConfirmer, pipe: Any, keys: str, *, prompt: int = 1
) -> None:
    """Type `keys` into `pipe` once `confirmer` waits for an answer for the `prompt`-th
    time (keys sent any earlier are typed ahead, and never its answer)."""
    while not (confirmer.answering and confirmer.prompts == prompt):
        await asyncio.sleep(0.01)
    pipe.send_text(keys)
