"""A turn's kind decides how it is placed and routed: an order whose parts do not fit its kind
(a retry with a correction plan, a correction without one) is refused before the engine
changes anything, with an error that names the kind, what does not fit, and the rule."""

from __future__ import annotations

import re

import pytest

from modes_tui.core.engine.prepare import TurnOrder
from modes_tui.core.engine.rerun import CorrectionPlan
from modes_tui.core.errors import ImpossibleTurn, ModesError
from modes_tui.core.values.route import Route, RoutedTurn


def a_plan() -> CorrectionPlan:
    target = RoutedTurn(
        1, "why does this loop never end", Route("chat", "classifier", "x"), 0, 0, "chat"
    )
    return CorrectionPlan(target, "code", rerun=True, correction=None)


@pytest.mark.parametrize(
    ("kind", "parts", "problem"),
    [
        ("retry", {"plan": "plan"}, "cannot carry a correction plan (order a 'correction')"),
        ("correction", {}, "needs a correction plan"),
        ("correction", {"plan": "plan", "force": "code"}, "takes no forced mode"),
        ("correction", {"plan": "plan", "text": "hi"}, "takes no text"),
        ("retry", {"text": "hi"}, "takes no text"),
        ("new", {}, "needs the user's text"),
        ("edit", {"text": "hi", "plan": "plan"}, "cannot carry a correction plan"),
        ("rerun", {}, "is not a kind of turn"),
    ],
)
def test_an_impossible_order_is_refused_with_what_does_not_fit(
    kind: str, parts: dict[str, str], problem: str
) -> None:
    arguments: dict[str, object] = {**parts}
    if "plan" in parts:
        arguments["plan"] = a_plan()
    with pytest.raises(ImpossibleTurn, match=re.escape(f"a {kind!r} turn {problem}")) as caught:
        TurnOrder(kind, **arguments)  # type: ignore[arg-type]
    assert isinstance(caught.value, ModesError) and "TurnOrder" in str(caught.value)


@pytest.mark.parametrize(
    "order",
    [
        lambda: TurnOrder("new", "hello"),
        lambda: TurnOrder("edit", "hello", "code"),
        lambda: TurnOrder("retry"),
        lambda: TurnOrder("retry", force="code"),  # a retry keeps the turn's `/MODE text` mode
        lambda: TurnOrder("correction", plan=a_plan()),
    ],
)
def test_every_order_the_engine_makes_is_possible(order: object) -> None:
    assert callable(order)
    assert isinstance(order(), TurnOrder)
