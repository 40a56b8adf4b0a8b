"""Fitting one request into its budget: cut oversized tool results, then leave out old turns.

    the request (system part, earlier turns, this turn) -> tool results over a quarter of
    the budget are cut with a marker -> while it is still over: the oldest earlier turn goes
    -> still over with no earlier turn left: this turn's tool results share what is left

What the model is given changes; the conversation and the session log keep everything
(a cut result stays whole in its `tool_result` record). `ContextReport` says what happened,
for the request record and the inspector.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modes_tui.core.context.tokens import MESSAGE_OVERHEAD, TokenTally
from modes_tui.core.context.window import ContextBudget
from modes_tui.core.history.compaction import ContextReport

__all__ = ["CUT_MARKER", "Fitted", "cut_text", "fit_request"]

CUT_MARKER = (
    "[cut for the model: the first {shown} of {total} characters; "
    "the whole result is in the session log]"
)
MIN_RESULT_TOKENS = 64
"""A tool result is never cut below this (a marker alone tells the model nothing)."""

Wire = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Fitted:
    """A request that fits, and how it was made to."""

    messages: tuple[Wire, ...]
    """What to send."""
    report: ContextReport
    """What fitting did."""


def cut_text(text: str, keep: int) -> str:
    """`text` cut to its first `keep` characters, followed by the marker."""
    if len(text) <= keep:
        return text
    return f"{text[:keep]}\n{CUT_MARKER.format(shown=keep, total=len(text))}"


def fit_request(
    sent: Sequence[Wire], tools_json: str, current: int, budget: ContextBudget, tally: TokenTally
) -> Fitted:
    """A request's messages `sent` fitted into `budget` beside its tool schemas (`tools_json`,
    "" for none); `current` is where this turn starts (its user message), so what lies between
    the system part and it are earlier turns."""
    messages = list(sent)
    tools = tally.count([tools_json])[0] if tools_json else 0
    counts = tally.messages(messages)
    cap = max(MIN_RESULT_TOKENS, budget.prompt // 4)
    cut = _cut_results(messages, counts, range(len(messages)), cap, tally)
    dropped = _earlier_to_drop(messages, counts, current, budget.prompt - tools)
    if dropped:
        groups = _turn_starts(messages, current)
        first, upto = groups[0], groups[dropped] if dropped < len(groups) else current
        del messages[first:upto], counts[first:upto]
        current -= upto - first
    over = tools + sum(counts) - budget.prompt
    if over > 0:
        cut |= _share_rest(messages, counts, current, over, tally)
    total = tools + sum(counts)
    report = ContextReport(
        tokens=total,
        budget=budget.prompt,
        window=budget.window,
        tokenizer=tally.method,
        dropped_turns=dropped,
        cut_results=len(cut),
        fits=total <= budget.prompt,
    )
    return Fitted(tuple(messages), report)


def _earlier_to_drop(
    messages: Sequence[Wire], counts: Sequence[int], current: int, room: int
) -> int:
    """How many of the oldest earlier turns must go for the rest to fit in `room`."""
    groups = _turn_starts(messages, current)
    total = sum(counts)
    dropped = 0
    while total > room and dropped < len(groups):
        end = groups[dropped + 1] if dropped + 1 < len(groups) else current
        total -= sum(counts[groups[dropped] : end])
        dropped += 1
    return dropped


def _turn_starts(messages: Sequence[Wire], current: int) -> list[int]:
    """Where each earlier turn starts (its user message), oldest first."""
    return [i for i in range(1, current) if messages[i].get("role") == "user"]


def _cut_results(
    messages: list[Wire], counts: list[int], where: Sequence[int], cap: int, tally: TokenTally
) -> set[int]:
    """Cut every tool result among `where` that is over `cap` tokens; the indexes cut."""
    cut: set[int] = set()
    for index in where:
        message = messages[index]
        if message.get("role") != "tool" or counts[index] <= cap:
            continue
        content = str(message.get("content") or "")
        marker = CUT_MARKER.format(shown=len(content), total=len(content))
        room = max(1, cap - tally.count([marker])[0] - MESSAGE_OVERHEAD)
        keep = max(1, int(len(content) * room / counts[index]))
        messages[index] = {**message, "content": cut_text(content, keep)}
        counts[index] = tally.messages([messages[index]])[0]
        cut.add(index)
    return cut


def _share_rest(
    messages: list[Wire], counts: list[int], current: int, over: int, tally: TokenTally
) -> set[int]:
    """This turn alone is over: its tool results share what is left, equally."""
    results = [i for i in range(current, len(messages)) if messages[i].get("role") == "tool"]
    if not results:
        return set()
    spare = sum(counts[i] for i in results) - over
    share = max(MIN_RESULT_TOKENS, spare // len(results))
    return _cut_results(messages, counts, results, share, tally)
