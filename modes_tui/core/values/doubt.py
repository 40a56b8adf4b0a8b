"""Doubt: when the router is unsure, the route says so, with its pick and the runner-up.

A route is unsure when the classifier's confidence in its pick is below router.yaml's
`ask_below` (default 0.5), or when the runner-up's confidence is within `ask_margin`
(default 0.1) of the pick's, or when the pick fell below the fallback threshold
(`below_confidence`) by less than `ask_margin`: the turn would go to the fallback, and the
user decides between it and the pick. (Without that third rule a pack whose threshold
sits above `ask_below`, like the default pack at 0.7, never asked: a pick at 0.68 fell back
in silence, and 8 of the 19 lines of its eval files at 0.6-0.7 were such wrong routes.)

Confidences per mode are read as the router reads them in the conversation step: each mode's probability scaled by the share of the top probability the
decision's confidence kept. The app asks before the turn runs; a pipe or the plain REPL
runs the pick and prints `Unsure.line()` ("unsure: code 0.46 or shell 0.41").

This module works on plain values, so the router (which owns `Route`) imports it, not the
other way round.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from modes_tui.core.values.numbers import two_places

ASK_BELOW = 0.5
"""Default `ask_below`: a pick under this confidence is unsure."""
ASK_MARGIN = 0.1
"""Default `ask_margin`: a runner-up this close to the pick makes the route unsure."""

Why = Literal["low", "close", "threshold"]


@dataclass(frozen=True, slots=True)
class Unsure:
    """The router's doubt about one route: what it picked and what else it nearly picked."""

    pick: str
    """The mode the route runs."""
    pick_confidence: float | None
    """Its confidence (None for a fallback that took the turn for want of a sure mode)."""
    runner_up: str
    """The other candidate."""
    runner_up_confidence: float | None
    """Its confidence."""
    why: Why = "low"
    """low (the pick is below ask_below), close (the runner-up is within ask_margin) or
    threshold (the pick fell just below the fallback threshold; the fallback is `pick`)."""

    def line(self) -> str:
        """`unsure: code 0.46 or shell 0.41`, for a pipe, the REPL and the log."""
        return f"unsure: {_named(self.pick, self.pick_confidence)} or " + _named(
            self.runner_up, self.runner_up_confidence
        )

    def roles(self) -> tuple[str, str]:
        """What `pick` and `runner_up` are to the user, for the dialog and the editor: the
        router's pick and its runner-up, or (a pick just under the threshold) the fallback
        and the router's pick."""
        if self.why == "threshold":
            return "the fallback", "the router's pick"
        return "the router's pick", "runner-up"

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "pick": self.pick,
            "pick_confidence": self.pick_confidence,
            "runner_up": self.runner_up,
            "runner_up_confidence": self.runner_up_confidence,
            "why": self.why,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Unsure:
        """The inverse of to_dict."""
        return cls(
            str(data.get("pick") or ""),
            _number(data.get("pick_confidence")),
            str(data.get("runner_up") or ""),
            _number(data.get("runner_up_confidence")),
            _why(data.get("why")),
        )


def _why(value: object) -> Why:
    if value == "close":
        return "close"
    return "threshold" if value == "threshold" else "low"


def _named(mode: str, confidence: float | None) -> str:
    return mode if confidence is None else f"{mode} {two_places(confidence)}"


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def confidences(
    mode: str, confidence: float, probabilities: Mapping[str, float] | None
) -> dict[str, float]:
    """The confidence a route to each mode would have (see the module docstring)."""
    probabilities = probabilities or {}
    top = probabilities.get(mode, 0.0)
    if top <= 0:
        return {mode: confidence}
    gate = confidence / top
    return {name: min(1.0, p * gate) for name, p in probabilities.items()}


def doubt(
    chosen: str,
    confidence: float | None,
    probabilities: Mapping[str, float] | None,
    *,
    ask_below: float | None,
    ask_margin: float | None,
    runs: str | None = None,
    fell_below: float | None = None,
) -> Unsure | None:
    """The route's doubt, or None when it is sure enough (or nothing was scored).

    `chosen` is the classifier's mode (after the conversation), `runs` the mode that takes
    the turn when it is another (a fallback below the threshold, or a mode stickiness kept);
    `fell_below` the threshold a fallback fell below.
    """
    if confidence is None:
        return None
    if fell_below is not None:
        # a fallback is a doubt only when the pick nearly made the threshold; far below it
        # ("asdfghjkl", a question no mode covers) the fallback is the router being sure
        if ask_margin is None or confidence < fell_below - ask_margin:
            return None
        if runs is not None and runs != chosen:
            return Unsure(runs, None, chosen, round(confidence, 4), "threshold")
        # the pick is the fallback itself: only the rules below (a close runner-up) ask
    scores = confidences(chosen, confidence, probabilities)
    others = sorted(
        ((n, c) for n, c in scores.items() if n != chosen and c > 0), key=lambda i: (-i[1], i[0])
    )
    low = ask_below is not None and confidence < ask_below
    close = bool(others) and ask_margin is not None and confidence - others[0][1] < ask_margin
    if not (low or close):
        return None
    why: Why = "low" if low else "close"
    if (
        runs is not None and runs != chosen
    ):  # the turn runs elsewhere; the classifier's pick is the other candidate
        return Unsure(runs, scores.get(runs), chosen, round(confidence, 4), why)
    if not others:
        return None
    name, value = others[0]
    return Unsure(chosen, round(confidence, 4), name, round(value, 4), why)
