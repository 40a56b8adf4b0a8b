"""The cost ledger: what each turn cost, the session's total, and what routing saved.

"Saved" compares the session with one that sent every call to the *baseline*: the `strong`
role's model (core.config.models), else the most expensive model any mode of the pack uses;
the same token counts priced at the baseline's price, minus what was actually paid. Prices
come from the model adapter (configured prices first, then litellm's bundled price list); a
call whose price is unknown counts as unknown, never as free.

The budget (`budget:` setting, USD per session) is checked before each turn against an
estimate of that turn: the request's characters / 4 as prompt tokens, plus the answer cap
(or the mean answer length so far, or 256 tokens) as completion tokens, at the turn's price.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modes_tui.core.config.models import ModelPrice
from modes_tui.core.config.settings import SettingReader

PriceLookup = Callable[[str], "ModelPrice | None"]
CHARS_PER_TOKEN = 4
"""A rough, provider-neutral token estimate for the budget check (never for billing)."""
DEFAULT_ANSWER_TOKENS = 256


def check_budget(value: Any, *, where: str, fix: str) -> float | None:
    """The `budget` setting: a positive number of USD, or None (no budget)."""
    if value is None:
        return None
    return SettingReader(where, fix=fix).number(
        "budget", value, "a price in USD greater than 0, e.g. 2.50", 0, above=True, finite=True
    )


def budget_from_text(text: str) -> Any:
    """`MODES_TUI_BUDGET=2.5` as a number (check_budget names a bad one)."""
    if not text or text.lower() in {"none", "off"}:
        return None
    try:
        return float(text)
    except ValueError:
        return text


@dataclass(frozen=True, slots=True)
class TurnCost:
    """What one turn cost, and what the baseline model would have cost for the same tokens."""

    turn: int
    """The user turn (1-based)."""
    models: tuple[str, ...]
    """The models called in this turn, in order."""
    prompt_tokens: int
    """Prompt tokens over every call of the turn."""
    completion_tokens: int
    """Completion tokens over every call of the turn."""
    cost: float | None
    """USD paid; None when any call's price is unknown."""
    baseline_cost: float | None
    """USD the baseline model would have cost; None without a baseline price."""

    def to_dict(self) -> dict[str, Any]:
        """Plain values for the session log."""
        return {
            "turn": self.turn,
            "models": list(self.models),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
            "baseline_cost": self.baseline_cost,
        }


@dataclass(frozen=True, slots=True)
class BudgetCheck:
    """Whether the next turn may pass the budget, with the numbers to show."""

    budget: float
    """The configured budget (USD per session)."""
    spent: float
    """What the session has cost so far."""
    estimate: float
    """The estimated cost of the next turn."""

    @property
    def would_pass(self) -> bool:
        """Spent plus the estimate is more than the budget."""
        return self.spent + self.estimate > self.budget

    def question(self, model: str) -> str:
        """The question to ask the user."""
        return (
            f"This turn ({model}, about {money(self.estimate)}) would take the session past its "
            f"budget of {money(self.budget)}: {money(self.spent)} spent so far. Send it anyway?"
        )

    def refusal(self, model: str) -> str:
        """The message when nobody can or did say yes."""
        return (
            f"not sent: this turn ({model}, about {money(self.estimate)}) would pass the "
            f"session budget of {money(self.budget)} ({money(self.spent)} spent)"
        )


@dataclass
class CostLedger:
    """Costs of one session, turn by turn."""

    baseline_model: str | None = None
    """The most expensive model of the pack's modes (what "always" means)."""
    baseline_price: ModelPrice | None = None
    """Its price per token."""
    baseline_role: str | None = None
    """The role it is (`strong`); None when it is the priciest model in use."""
    budget: float | None = None
    """USD per session; None: no budget."""
    turns: list[TurnCost] = field(default_factory=list)
    """Every turn that called a model, oldest first."""

    @property
    def total(self) -> float:
        """USD spent in the session over calls with a known price."""
        return sum(turn.cost for turn in self.turns if turn.cost is not None)

    @property
    def complete(self) -> bool:
        """Every call's price was known."""
        return all(turn.cost is not None for turn in self.turns)

    @property
    def baseline_total(self) -> float | None:
        """USD the session would have cost on the baseline model."""
        if self.baseline_price is None:
            return None
        return sum(t.baseline_cost for t in self.turns if t.baseline_cost is not None)

    @property
    def saved(self) -> float | None:
        """Baseline total minus the total; None without a baseline or with unknown prices."""
        baseline = self.baseline_total
        if baseline is None or not self.complete:
            return None
        return baseline - self.total

    def add(
        self, turn: int, calls: Iterable[tuple[str, int, int, float | None]]
    ) -> TurnCost | None:
        """Record a turn's calls (model, prompt tokens, completion tokens, cost)."""
        calls = list(calls)
        if not calls:
            return None
        costs = [cost for _, _, _, cost in calls]
        prompt = sum(p for _, p, _, _ in calls)
        completion = sum(c for _, _, c, _ in calls)
        entry = TurnCost(
            turn=turn,
            models=tuple(dict.fromkeys(model for model, _, _, _ in calls)),
            prompt_tokens=prompt,
            completion_tokens=completion,
            cost=None if None in costs else sum(c for c in costs if c is not None),
            baseline_cost=(
                self.baseline_price.cost(prompt, completion)
                if self.baseline_price is not None
                else None
            ),
        )
        self.turns.append(entry)
        return entry

    def check(
        self, price: ModelPrice | None, prompt_chars: int, answer_cap: int | None
    ) -> BudgetCheck | None:
        """The budget check for a turn about to run; None without a budget."""
        if self.budget is None:
            return None
        if answer_cap is None:
            answered = [t.completion_tokens for t in self.turns]
            answer_cap = round(sum(answered) / len(answered)) if answered else DEFAULT_ANSWER_TOKENS
        estimate = price.cost(prompt_chars // CHARS_PER_TOKEN, answer_cap) if price else 0.0
        return BudgetCheck(self.budget, self.total, estimate)

    @property
    def baseline_label(self) -> str | None:
        """`strong (gpt-4.1)` for a role, else the baseline model's name."""
        if self.baseline_role and self.baseline_model:
            return f"{self.baseline_role} ({self.baseline_model})"
        return self.baseline_model

    def header(self) -> str:
        """`$0.0123 · saved $0.41 vs always gpt-4.1` (the TUI's header, the REPL's /cost)."""
        text = money(self.total) + ("" if self.complete else " + unknown")
        saved = self.saved
        if saved is not None and self.baseline_model:
            text += f" · saved {money(saved)} vs always {self.baseline_label}"
        if self.budget is not None:
            text += f" · budget {money(self.budget)}"
        return text


def money(value: float) -> str:
    """USD with enough digits for fractions of a cent."""
    if value == 0:
        return "$0"
    if abs(value) >= 1:
        return f"${value:,.2f}"
    digits = 4 if abs(value) >= 0.01 else 6
    text = f"{value:.{digits}f}".rstrip("0")
    whole, _, cents = text.partition(".")
    return f"${whole}.{cents:0<2}"  # at least cents: $0.50, not $0.5


def baseline(models: Iterable[str], prices: PriceLookup) -> tuple[str | None, ModelPrice | None]:
    """The most expensive of `models` (by input + output price per token), with its price."""
    best: tuple[str | None, ModelPrice | None] = (None, None)
    for model in sorted(set(models)):
        price = prices(model)
        if price is None:
            continue
        current = best[1]
        if current is None or price.input + price.output > current.input + current.output:
            best = (model, price)
    return best


def session_costs(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Totals of a session log's `cost` entries: for `modes-tui sessions --cost`."""
    total = 0.0
    base = 0.0
    unknown = 0
    turns = 0
    baseline_model: str | None = None
    for record in records:
        entry = record.get("cost")
        if record.get("type") not in {"assistant", "ui_event"} or not isinstance(entry, Mapping):
            continue
        turns += 1
        cost = entry.get("cost")
        if isinstance(cost, int | float):
            total += cost
        else:
            unknown += 1
        baseline_cost = entry.get("baseline_cost")
        if isinstance(baseline_cost, int | float):
            base += baseline_cost
            baseline_model = entry.get("baseline_model") or baseline_model
    saved = base - total if baseline_model and not unknown else None
    return {
        "costed_turns": turns,
        "cost": total,
        "unknown_turns": unknown,
        "baseline_model": baseline_model,
        "baseline_cost": base if baseline_model else None,
        "saved": saved,
    }
