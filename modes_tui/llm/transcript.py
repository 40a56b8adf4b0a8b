"""Chat messages as the plain transcript a base model continues.

Gemma 3 270M is a *base* model: it continues text, it does not take chat turns. So the
messages become a `User:` / `Assistant:` transcript (`render_transcript`) that ends with
`Assistant:`, the answer is cut at `STOP_SEQUENCES`, and the oldest turns are dropped when
the transcript does not fit the context (`fit_transcript`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from modes_tui.core.config.models import EMBEDDED_MODEL
from modes_tui.core.errors import ProviderError

STOP_SEQUENCES: tuple[str, ...] = ("\nUser:", "\nAssistant:", "<end_of_turn>", "<eos>")
"""Where a transcript turn ends. The special-token spellings catch a user GGUF that is an
instruction-tuned Gemma and emits its turn markers as text."""

INTRO = (
    "The following is a conversation between a user and a helpful, knowledgeable assistant. "
    "The assistant answers correctly and briefly."
)
"""The line that tells a base model what kind of text follows (tried by hand: with it and the
examples below, the 270M model answers the question asked far more often than without)."""
EXAMPLE_TURNS: tuple[tuple[str, str], ...] = (
    ("User", "Hello!"),
    ("Assistant", "Hello! How can I help you today?"),
    ("User", "What is the capital of Italy?"),
    ("Assistant", "The capital of Italy is Rome."),
)
"""Two worked turns: a base model copies the shape (short, on-topic answers) of what it sees."""


def message_text(content: object) -> str:
    """The text of an OpenAI-style message content: a string or a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type", "text") == "text"
        ]
        return "\n".join(text for text in texts if text)
    return str(content)


def render_transcript(
    messages: Sequence[Mapping[str, Any]],
    *,
    intro: str = INTRO,
    examples: Sequence[tuple[str, str]] = EXAMPLE_TURNS,
) -> str:
    """Chat messages as the plain transcript a base model continues.

    Layout: the system messages' text, the intro line, the worked examples, then one line
    per turn (`User: ...`, `Assistant: ...`, `Tool result (name): ...`), ending with
    `Assistant:` for the model to complete. Blank messages are skipped.
    """
    head = [text for m in messages if _role(m) in ("system", "developer") if (text := _text(m))]
    if intro:
        head.append(intro.strip())
    lines = [f"{speaker}: {text}" for speaker, text in examples]
    tool_names: dict[str, str] = {}
    for message in messages:
        role = _role(message)
        text = _text(message)
        if role == "user":
            lines.append(f"User: {text}")
        elif role == "assistant":
            for call in message.get("tool_calls") or ():
                if isinstance(call, Mapping):
                    function = call.get("function") or {}
                    tool_names[str(call.get("id", ""))] = str(function.get("name", "tool"))
            if text:
                lines.append(f"Assistant: {text}")
        elif role in ("tool", "function"):
            call_id = str(message.get("tool_call_id", ""))
            name = message.get("name") or tool_names.get(call_id) or "tool"
            lines.append(f"Tool result ({name}): {text}")
    lines.append("Assistant:")
    body = "\n".join(lines)
    return "\n\n".join([*head, body])


def fit_transcript(
    messages: Sequence[Mapping[str, Any]],
    count_tokens: Callable[[str], int],
    budget: int,
) -> str:
    """The transcript, with the oldest turns dropped until it fits in `budget` tokens.

    System messages and the last message always stay. Raises `ProviderError`
    (`context_too_long`) when even that does not fit.
    """
    kept = list(messages)
    while True:
        prompt = render_transcript(kept)
        if count_tokens(prompt) <= budget:
            return prompt
        droppable = [
            index
            for index, message in enumerate(kept[:-1])
            if _role(message) not in ("system", "developer")
        ]
        if not droppable:
            raise ProviderError(
                "context_too_long",
                f"the prompt does not fit in the local model's {budget}-token budget",
                hint="shorten the message or the system prompt",
                model=EMBEDDED_MODEL,
            )
        del kept[droppable[0]]


def _role(message: Mapping[str, Any]) -> str:
    return str(message.get("role", ""))


def _text(message: Mapping[str, Any]) -> str:
    return message_text(message.get("content")).strip()
