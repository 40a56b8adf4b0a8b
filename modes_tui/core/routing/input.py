"""What a classifier sees of a conversation: the routed message and the history before it.

`split_transcript` filters any accepted entry shape (`Message`, a `{"role", "content"}`
mapping, or a plain string) down to the routed user message and `HistoryEntry`s;
`cut_middle` and `cut_tail` apply router.yaml's `truncate` caps.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from modes_tui.core.history.conversation import Message
from modes_tui.core.values.entry import HistoryEntry

CUT_MARKER = "[… {count} characters cut …]"


MessageLike = Message | Mapping[str, Any] | str


def _role_and_text(entry: MessageLike) -> tuple[str | None, str, bool]:
    """(role, text, has_tool_calls) of any accepted entry shape."""
    if isinstance(entry, str):
        return None, entry, False
    if isinstance(entry, Message):
        return entry.role, entry.content, bool(entry.tool_calls)
    if isinstance(entry, Mapping):
        content = entry.get("content")
        if isinstance(content, list):  # content parts: keep the text ones
            content = "\n".join(
                str(part.get("text", "")) for part in content if isinstance(part, Mapping)
            )
        return (
            entry.get("role"),
            "" if content is None else str(content),
            bool(entry.get("tool_calls")),
        )
    raise TypeError(f"cannot route a {type(entry).__name__}; pass Message, dict or str entries")


def split_transcript(entries: Iterable[MessageLike]) -> tuple[str, list[HistoryEntry]]:
    """The routed message and the filtered history before it.

    System entries are removed; the last entry left must be a user message. History keeps
    non-blank user and assistant text (also assistant text that came with tool calls) and
    plain strings; tool results and anything else are dropped.
    """
    items = [_role_and_text(entry) for entry in entries]
    items = [item for item in items if item[0] != "system"]
    if not items:
        raise ValueError("nothing to route: the conversation has no user message")
    role, text, _ = items[-1]
    if role != "user":
        raise ValueError(
            f"the last message must be a user message to route, not {role or 'a plain string'}"
        )
    history = [
        HistoryEntry(r, t)
        for r, t, _ in items[:-1]
        if (r in {"user", "assistant"} or r is None) and t.strip()
    ]
    return text, history


def cut_middle(text: str, cap: int | None) -> str:
    """Keep the head and the tail of `text` around a marker, so it fits `cap`."""
    if cap is None or len(text) <= cap:
        return text
    cut = len(text) - cap
    head = cap - cap // 2
    tail = cap // 2
    marker = CUT_MARKER.format(count=cut)
    return f"{text[:head]}\n{marker}\n{text[len(text) - tail :] if tail else ''}"


def cut_tail(text: str, cap: int | None) -> str:
    """Keep the head of `text`, with a marker for what was cut."""
    if cap is None or len(text) <= cap:
        return text
    marker = CUT_MARKER.format(count=len(text) - cap)
    return f"{text[:cap]}\n{marker}"
