"""A `session/prompt`'s content blocks as the one user message the engine routes.

Text blocks are the message; a resource the editor embeds (a file it attached, with
`embeddedContext`) follows as a fenced block named by its URI, and a resource link as its
name and URI. Images and audio are not offered (the prompt capabilities say so); a client
that sends them anyway gets an error naming the block. A message over `MAX_PROMPT_CHARS` is
refused as a whole, with the limit in the error: the router and the models are not made to
read megabytes, and nothing of it is recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp import RequestError

__all__ = ["MAX_PROMPT_CHARS", "prompt_text"]

MAX_PROMPT_CHARS = 1_000_000
"""The longest prompt taken (characters, embedded resources included): 1 MB of text."""


def prompt_text(blocks: Sequence[Any]) -> str:
    """The user message of a prompt; raises RequestError (invalid params) when it cannot be."""
    parts: list[str] = []
    for index, block in enumerate(blocks):
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(f"[{block.name}]({block.uri})")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is None:
                raise _refused(index, "a binary embedded resource is not supported; send text")
            parts.append(f"\n```{resource.uri}\n{text}\n```\n")
        else:
            raise _refused(index, f"{kind} content is not supported here; send text")
    text = "\n".join(parts)
    if len(text) > MAX_PROMPT_CHARS:
        raise RequestError.invalid_params(
            {
                "details": f"the prompt has {len(text)} characters, over the limit of "
                f"{MAX_PROMPT_CHARS}; send less (attach a file by path instead)"
            }
        )
    if not text.strip():
        raise RequestError.invalid_params({"details": "the prompt is empty; send some text"})
    return text


def _refused(index: int, why: str) -> RequestError:
    return RequestError.invalid_params({"details": f"prompt[{index}]: {why}"})
