"""Prices for the engine: the ledger's baseline, the budget check, and fallback notes.

The baseline is the `strong` role's model ("saved vs always strong"), or, when it has no
known price, the most expensive model any mode of the pack uses.

Prices come from the chat model's `capabilities(model).price` (configured prices first, then
litellm's bundled price list); asking may import litellm, so it runs off the event loop and
each answer is kept.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable
from typing import Any

from modes_tui.core.config.models import ModelChoice, ModelPrice
from modes_tui.core.errors import ProviderError
from modes_tui.core.history.ledger import CostLedger, baseline, money
from modes_tui.core.model.ports import ChatModel
from modes_tui.core.model.wire import ModelRequest

log = logging.getLogger("modes_tui.costs")


def fallback_note(failed: str, error: ProviderError, answering: str) -> str:
    """What the panel and the session say when a fallback model takes over."""
    kind = error.kind.replace("_", " ")
    return f"answered by {answering}: {failed} failed ({kind}: {error.provider_message[:160]})"


class TurnCosts:
    """The ledger of one engine, and the prices it needs."""

    def __init__(self, model: ChatModel, ledger: CostLedger) -> None:
        self.model = model
        """The chat model adapter (it knows each model's price)."""
        self.ledger = ledger
        """Per-turn costs, the session total, the baseline and the budget."""
        self._prices: dict[str, ModelPrice | None] = {}
        self._baseline_for: tuple[str, ...] | None = None

    async def price(self, model: str) -> ModelPrice | None:
        """USD per token of `model`, or None when unknown."""
        if model in self._prices:
            return self._prices[model]
        found: ModelPrice | None = None
        try:
            found = (await asyncio.to_thread(self.model.capabilities, model)).price
        except Exception:  # an unknown price is just unknown
            log.exception("capabilities(%s) failed", model)
        self._prices[model] = found
        return found

    async def set_baseline(self, models: Iterable[str], strong: ModelChoice | None = None) -> None:
        """Make the "always" of "saved vs always X" (once per set of models): the `strong`
        role's model when it has a price (roles exist to save against it), else the most
        expensive of `models`."""
        chosen = tuple(sorted(set(models)))
        key = (*chosen, *(strong.path if strong is not None else ()))
        if self._baseline_for == key:
            return
        self._baseline_for = key
        if strong is not None and (price := await self.price(strong.name)) is not None:
            self.ledger.baseline_model, self.ledger.baseline_price = strong.name, price
            self.ledger.baseline_role = strong.role
            return
        for model in chosen:
            await self.price(model)
        name, found = baseline(chosen, lambda model: self._prices.get(model))
        self.ledger.baseline_model, self.ledger.baseline_price = name, found
        self.ledger.baseline_role = None

    async def check_budget(
        self, model: str, request: ModelRequest, asker: Any = None
    ) -> str | None:
        """None when the turn may run; else why it may not (the user was asked if possible)."""
        if self.ledger.budget is None:
            return None
        price = await self.price(model)
        chars = len(json.dumps([dict(m) for m in request.messages], ensure_ascii=False))
        check = self.ledger.check(price, chars, request.max_tokens)
        if check is None or not check.would_pass:
            return None
        if asker is not None:
            from modes_tui.core.engine.questions import Question

            question = Question("budget", "Pass the budget?", check.question(model))
            try:
                if await asker.ask(question):
                    return None
            except Exception:  # a broken dialog keeps the money
                log.exception("asking about the budget failed; treated as no")
            return check.refusal(model) + "; you said no"
        return check.refusal(model) + "; nobody can confirm here (no terminal)"


__all__ = ["TurnCosts", "fallback_note", "money"]
