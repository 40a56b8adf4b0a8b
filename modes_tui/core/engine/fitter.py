"""The engine's side of the context window: every request fitted, older turns compacted.

`RequestFitter.prepare` takes the request a turn is about to send and returns it fitted
(`core.context.fitting.fit_request`), after compacting older turns first when the request would fill
more than `COMPACT_AT` of its budget. `RequestFitter.compact` writes the summary (the
summary model's, else `fallback_summary`) and puts it on the conversation; the caller
records it. A summary `summary_problem` finds useless is refused: the turns are kept
(`SummaryRefused`, or a note on the request that fits without it), or, when the request
would not fit otherwise, their openings stand in for them and the compaction says why.
A model whose window is unknown is sent the request as built: the provider's context
error then triggers a compaction and one retry (the turn loop does that).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

from modes_tui.core.context.compaction import (
    compaction_point,
    fallback_summary,
    summary_problem,
    summary_request,
    summary_text,
)
from modes_tui.core.context.fitting import fit_request
from modes_tui.core.context.ports import TokenCounter
from modes_tui.core.context.tokens import MESSAGE_OVERHEAD, TokenTally
from modes_tui.core.context.window import ContextBudget, budget_for
from modes_tui.core.errors import CompactionRefused, ProviderError
from modes_tui.core.history.compaction import Compaction, ContextReport, Trigger
from modes_tui.core.history.conversation import Conversation, Message
from modes_tui.core.model.ports import ChatModel, ModelCapabilities
from modes_tui.core.model.wire import ModelRequest, UsageReport

__all__ = ["Prepared", "RequestFitter", "SummaryRefused"]

log = logging.getLogger("modes_tui.context")

SHRINK_TRIES = 4
"""How often a summary model that refuses its transcript as too long gets one half as long."""
KEEP_SHARE = 3
"""Auto compaction keeps the newest turns verbatim while they fill at most 1/3 of the budget."""

Build = Callable[[Conversation], ModelRequest]
"""Builds the turn's request from the conversation as it stands (its compaction included)."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """A request ready to send, and what was done to make it fit."""

    request: ModelRequest
    """What to send."""
    report: ContextReport | None
    """How it was fitted (None: the model's window is unknown, sent as built)."""
    compaction: Compaction | None = None
    """The compaction made for it, if one was (the caller records it)."""
    usage: UsageReport | None = None
    """What the summary model's call used, if it was called."""
    note: str = ""
    """What the request's notes should say (a summary refused, the turns kept)."""


class SummaryRefused(CompactionRefused):
    """The summary model's answer cannot stand for the turns (`summary_problem`); they stay."""

    def __init__(self, message: str, usage: UsageReport | None) -> None:
        super().__init__(message)
        self.usage = usage
        """What the refused summary's call used."""


class RequestFitter:
    """Fits the requests of one conversation into their models' context windows."""

    def __init__(
        self,
        model: ChatModel,
        capabilities: Callable[[str], Awaitable[ModelCapabilities]],
    ) -> None:
        self._model = model
        self._capabilities = capabilities
        self._counter = model if isinstance(model, TokenCounter) else None
        self._tallies: dict[str, TokenTally] = {}
        self._held: tuple[int, int] | None = None
        """(conversation, where its summary starts) whose summary was refused while its
        request still fit: not asked again until the request no longer fits, or a
        compaction moves the start (one refused call, not one per turn)."""

    def tally(self, model: str) -> TokenTally:
        """The token counting for `model` (its cache lives as long as this fitter)."""
        tally = self._tallies.get(model)
        if tally is None:
            tally = self._tallies[model] = TokenTally(model, self._counter)
        return tally

    async def budget(self, model: str, max_tokens: int | None) -> ContextBudget | None:
        """The budget of a request to `model`; None when its window is unknown."""
        return budget_for((await self._capabilities(model)).context_window, max_tokens)

    async def prepare(
        self,
        build: Build,
        conversation: Conversation,
        user_index: int,
        *,
        compact: bool,
        summary_model: str,
    ) -> Prepared:
        """The request `build` makes, fitted; older turns compacted first (by `summary_model`)
        when it would fill most of its budget and `compact` allows it (a turn's first round)."""
        request = build(conversation)
        budget = await self.budget(request.model, request.max_tokens)
        if budget is None:
            return Prepared(request, None)
        tally = self.tally(request.model)
        fitted, report = await asyncio.to_thread(_fit, request, budget, tally)
        wanted = report.dropped_turns or report.tokens > budget.compact_at
        if not (compact and wanted) or (not report.dropped_turns and self._is_held(conversation)):
            return Prepared(fitted, report)
        keep = await asyncio.to_thread(
            _turns_to_keep, conversation, user_index, budget.prompt // KEEP_SHARE, tally
        )
        try:  # a refused summary may stand aside only when the request fits without it
            made = await self.compact(
                conversation,
                user_index,
                "auto",
                keep=keep,
                summary_model=summary_model,
                fallback=bool(report.dropped_turns),
            )
        except SummaryRefused as refused:
            self._held = _start_of(conversation)
            return Prepared(fitted, report, usage=refused.usage, note=str(refused))
        if made is None:
            return Prepared(fitted, report)
        compaction, usage = made
        fitted, report = await asyncio.to_thread(_fit, build(conversation), budget, tally)
        return Prepared(fitted, report, compaction, usage)

    def _is_held(self, conversation: Conversation) -> bool:
        return self._held == _start_of(conversation)

    async def compact(
        self,
        conversation: Conversation,
        end: int,
        trigger: Trigger,
        *,
        keep: int,
        summary_model: str,
        fallback: bool = False,
    ) -> tuple[Compaction, UsageReport | None] | None:
        """Summarise the turns of `conversation` before `end` but its last `keep` (written by
        `summary_model`), and put the summary on it; None when there is nothing to compact. A
        summary that cannot stand for the turns is refused: `SummaryRefused` (nothing
        changes), or with `fallback` (the request would not fit otherwise) the turns'
        openings stand in."""
        earlier = conversation.compaction
        start = earlier.upto if earlier is not None else 0
        point = compaction_point(conversation.messages, start, min(end, len(conversation)), keep)
        if point is None:
            return None
        upto, going = point
        gone = conversation.messages[start:upto]
        previous = earlier.summary if earlier is not None else None
        text, model, usage, note = await self._summarise(summary_model, previous, gone)
        tally = self.tally(summary_model)
        before, after = await asyncio.to_thread(_tokens_saved, tally, previous, gone, text)
        said = "\n".join(message.content for message in gone)
        problem = summary_problem(text, after, before, said) if model is not None else None
        if problem is not None:
            refused = f"the summary from {model} was refused: {problem}"
            log.info("%s", refused)  # the front ends show it (an error or a note)
            if not fallback:
                raise SummaryRefused(f"{refused}; kept the turns", usage)
            text, model = fallback_summary(previous, gone, await self._window(summary_model)), None
            note = f"{refused}; kept the newest turns whole and the older ones' openings"
            before, after = await asyncio.to_thread(_tokens_saved, tally, previous, gone, text)
        compaction = Compaction(
            summary=text,
            upto=upto,
            turns=(earlier.turns if earlier is not None else 0) + going,
            model=model,
            trigger=trigger,
            tokens_before=before,
            tokens_after=after,
            note=note,
        )
        conversation.compaction = compaction
        return compaction, usage

    async def _window(self, model: str) -> int | None:
        """`model`'s context window (None: unknown)."""
        return (await self._capabilities(model)).context_window

    async def _summarise(
        self, model: str, previous: str | None, gone: Sequence[Message]
    ) -> tuple[str, str | None, UsageReport | None, str]:
        """(summary, the model that wrote it, its usage, why no model did)."""
        window = (await self._capabilities(model)).context_window
        shrink = 0
        while True:
            messages, answer_cap = summary_request(previous, gone, window, shrink=shrink)
            request = ModelRequest(model, messages, temperature=0.0, max_tokens=answer_cap)
            try:
                answer = await self._model.complete(request)
                break
            except ProviderError as error:
                if error.kind == "context_too_long" and shrink < SHRINK_TRIES:
                    shrink += 1  # a window smaller than known: give it half as much
                    continue
                log.warning("the summary model %s failed: %s", model, error)
                note = f"the summary model failed ({error.kind}: {error.provider_message})"
                return fallback_summary(previous, gone, window), None, None, note
        return summary_text(answer.text), model, answer.usage, ""  # checked by the caller


def _start_of(conversation: Conversation) -> tuple[int, int]:
    """Which conversation, and where its next summary would start."""
    earlier = conversation.compaction
    return id(conversation), earlier.upto if earlier is not None else 0


def _fit(
    request: ModelRequest, budget: ContextBudget, tally: TokenTally
) -> tuple[ModelRequest, ContextReport]:
    """`request` fitted into `budget` (blocking: counting may ask a tokenizer)."""
    tools = json.dumps([tool.to_dict() for tool in request.tools], ensure_ascii=False)
    fitted = fit_request(
        request.messages, tools if request.tools else "", _current(request), budget, tally
    )
    return replace(request, messages=fitted.messages), fitted.report


def _current(request: ModelRequest) -> int:
    """Where this turn starts in the request: its (last) user message."""
    for index in range(len(request.messages) - 1, 0, -1):
        if request.messages[index].get("role") == "user":
            return index
    return len(request.messages)


def _turns_to_keep(conversation: Conversation, end: int, room: int, tally: TokenTally) -> int:
    """How many of the newest turns before `end` fit in `room` tokens, kept verbatim."""
    messages = conversation.messages[:end]
    counts = tally.count([message.content for message in messages])
    kept = used = 0
    turn = 0
    for index in range(len(messages) - 1, -1, -1):
        turn += counts[index] + MESSAGE_OVERHEAD
        if messages[index].role != "user":
            continue
        if used + turn > room:
            break
        used, turn, kept = used + turn, 0, kept + 1
    return kept


def _tokens_saved(
    tally: TokenTally, previous: str | None, gone: Sequence[Message], summary: str
) -> tuple[int, int]:
    """Tokens of what the summary replaces, and of the summary."""
    texts = [previous or "", *(message.content for message in gone)]
    before = sum(tally.count(texts)) + MESSAGE_OVERHEAD * len(gone)
    return before, tally.count([summary])[0]
