"""Routing evaluation: score routes against an eval file's cases, fit the threshold.

The cases come from `cases.read_eval_file`; `report.py` formats the results.

How a route is judged:
- a case expecting mode M is right when the route's mode is M, whoever decided it (a chat
  case that fell back to the fallback mode chat got what it needed);
- a case expecting null is right when the route fell back.

Metrics: accuracy; in-scope accuracy (cases with a mode); macro-F1 over the modes seen in
the file or in the routes; per-mode precision and recall (on the route's final mode; a
null case that fell back counts for no mode); fallback precision (routes that fell back
and should have) and recall (null cases that fell back); a confusion matrix (rows:
expected, columns: the mode chosen by the classifier, or `fallback`); p50/p95 latency.

Routes are computed once with the threshold off, then every threshold is applied to those
raw routes, exactly as the router's outcome table would (threshold rules come before
stickiness), so `fit_threshold` costs no extra classification.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from modes_tui.core.evals.cases import EvalCase
from modes_tui.core.packs.profiles import Pack
from modes_tui.core.routing.calibration import (
    ReliabilityBin,
    expected_calibration_error,
    reliability,
)
from modes_tui.core.routing.ports import Classifier
from modes_tui.core.routing.router import Router, routed_alone
from modes_tui.core.values.doubt import doubt
from modes_tui.core.values.route import Route

FALLBACK = "fallback"
"""The confusion-matrix column of routes that fell back."""
NONE = "(none)"
"""The confusion-matrix row of cases that expect a fallback."""
FIT_GRID = tuple(round(step * 0.05, 2) for step in range(20))
"""Thresholds `fit_threshold` tries by default: 0.00, 0.05, ..., 0.95."""


# --------------------------------------------------------------------------- outcomes


@dataclass(frozen=True, slots=True)
class Outcome:
    """A case and the route the router gave it with the threshold off."""

    case: EvalCase
    """The eval line."""
    route: Route
    """The raw route (no confidence threshold applied)."""

    @property
    def confidence(self) -> float | None:
        """The classifier's confidence, if it scored one."""
        return self.route.confidence


@dataclass(frozen=True, slots=True)
class Judged:
    """One outcome under one threshold."""

    expected: str | None
    """The expected mode, None for an expected fallback."""
    mode: str
    """The mode that takes the turn."""
    fell_back: bool
    """The route fell back (for any reason)."""
    chosen: str
    """The confusion-matrix column: the classifier's mode, or `fallback`."""
    correct: bool
    """Whether the case got what it expected."""
    duration_ms: float | None
    """Decision time."""


def judge(outcome: Outcome, threshold: float | None, fallback: str) -> Judged:
    """Apply `threshold` to a raw route, as the router's outcome table would."""
    route = outcome.route
    fell_back = route.decided_by == "fallback"
    mode = route.mode_name
    if route.decided_by == "classifier" and threshold is not None:
        confidence = route.confidence
        if confidence is None or confidence < threshold:
            fell_back, mode = True, fallback
    expected = outcome.case.mode
    correct = fell_back if expected is None else mode == expected
    return Judged(
        expected, mode, fell_back, FALLBACK if fell_back else mode, correct, route.duration_ms
    )


# --------------------------------------------------------------------------- metrics


@dataclass(frozen=True, slots=True)
class ModeScore:
    """Precision and recall of one mode (or of the fallback)."""

    precision: float | None
    """Right among those routed here; None when nothing was."""
    recall: float | None
    """Routed here among those expected here; None when none were expected."""
    support: int
    """Cases that expected it."""
    routed: int
    """Routes that went to it."""

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall (0 when either is missing or 0)."""
        p, r = self.precision or 0.0, self.recall or 0.0
        return 0.0 if p + r == 0 else 2 * p * r / (p + r)

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "precision": _round(self.precision),
            "recall": _round(self.recall),
            "f1": _round(self.f1),
            "support": self.support,
            "routed": self.routed,
        }


@dataclass(frozen=True, slots=True)
class EvalReport:
    """Every number `modes-tui eval` prints."""

    cases: int
    """Lines evaluated."""
    correct: int
    """Cases that got what they expected."""
    threshold: float | None
    """The below_confidence the routes were judged with."""
    in_scope: int
    """Cases that expect a mode."""
    in_scope_correct: int
    """Of those, how many got it."""
    per_mode: Mapping[str, ModeScore]
    """Per mode, in the pack's order."""
    fallback: ModeScore
    """Fallback precision and recall."""
    confusion: Mapping[str, Mapping[str, int]]
    """expected (or `(none)`) -> chosen (mode or `fallback`) -> count."""
    latency_p50_ms: float | None
    """Median decision time."""
    latency_p95_ms: float | None
    """95th percentile decision time."""
    errors: int = 0
    """Routes that fell back because the classifier failed."""
    columns: tuple[str, ...] = field(default=())
    """The confusion matrix's columns, in order."""
    reliability: tuple[ReliabilityBin, ...] = ()
    """Routes binned by the classifier's confidence, with the share that were right."""
    follow_ups: int = 0
    """Cases that expect the mode of the previous turn (`EvalCase.kind`)."""
    follow_ups_correct: int = 0
    """Of those, how many stayed in it."""
    switches: int = 0
    """Cases with a previous mode that expect another outcome."""
    switches_correct: int = 0
    """Of those, how many got it."""

    @property
    def follow_up_accuracy(self) -> float | None:
        """Accuracy on follow-ups; None when the file has none."""
        return self.follow_ups_correct / self.follow_ups if self.follow_ups else None

    @property
    def switch_accuracy(self) -> float | None:
        """Accuracy on switches; None when the file has none."""
        return self.switches_correct / self.switches if self.switches else None

    @property
    def ece(self) -> float | None:
        """Expected calibration error of the classifier's confidence (None: none scored)."""
        return expected_calibration_error(self.reliability)

    @property
    def accuracy(self) -> float:
        """correct / cases."""
        return self.correct / self.cases if self.cases else 0.0

    @property
    def in_scope_accuracy(self) -> float | None:
        """Accuracy on cases that expect a mode."""
        return self.in_scope_correct / self.in_scope if self.in_scope else None

    @property
    def macro_f1(self) -> float:
        """Mean F1 over the modes that were expected or routed to."""
        scores = [s.f1 for s in self.per_mode.values() if s.support or s.routed]
        return sum(scores) / len(scores) if scores else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain data for `--json`."""
        return {
            "cases": self.cases,
            "correct": self.correct,
            "accuracy": _round(self.accuracy),
            "in_scope_accuracy": _round(self.in_scope_accuracy),
            "macro_f1": _round(self.macro_f1),
            "below_confidence": self.threshold,
            "per_mode": {name: score.to_dict() for name, score in self.per_mode.items()},
            "fallback": self.fallback.to_dict(),
            "confusion": {row: dict(cols) for row, cols in self.confusion.items()},
            "latency_ms": {"p50": _round(self.latency_p50_ms), "p95": _round(self.latency_p95_ms)},
            "classifier_errors": self.errors,
            "conversation": {
                "follow_ups": self.follow_ups,
                "follow_up_accuracy": _round(self.follow_up_accuracy),
                "switches": self.switches,
                "switch_accuracy": _round(self.switch_accuracy),
            },
            "calibration": {
                "ece": _round(self.ece),
                "reliability": [row.to_dict() for row in self.reliability],
            },
        }


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100), linear between the two nearest ranks."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


SURE = 0.9
"""A wrong route at this confidence or more is counted apart (`wrong_sure`)."""


def case_rows(
    outcomes: Sequence[Outcome], threshold: float | None, fallback: str
) -> list[dict[str, Any]]:
    """One row per case for `eval --json`: text, expected, routed, confidence, correct,
    unsure, group (when the line gives one) and the line number."""
    rows = []
    for outcome in outcomes:
        judged = judge(outcome, threshold, fallback)
        case, route = outcome.case, outcome.route
        row: dict[str, Any] = {
            "line": case.line,
            "text": case.text,
            "expected": case.mode,
            "routed": judged.mode,
            "fell_back": judged.fell_back,
            "confidence": _round(route.confidence),
            "correct": judged.correct,
            "unsure": route.unsure is not None,
        }
        if case.kind is not None:
            row["kind"] = case.kind
        if case.group is not None:
            row["group"] = case.group
        rows.append(row)
    return rows


def wrong_sure(outcomes: Sequence[Outcome], sure: float = SURE) -> int:
    """Routes whose classifier's mode was wrong at confidence >= `sure`."""
    return sum(
        1
        for o in outcomes
        if o.route.decided_by == "classifier"
        and (o.route.confidence or 0.0) >= sure
        and o.route.mode_name != o.case.mode
    )


def evaluate(
    outcomes: Sequence[Outcome],
    modes: Sequence[str],
    fallback: str,
    threshold: float | None,
) -> EvalReport:
    """Score raw routes against their cases under `threshold`."""
    judged = [judge(outcome, threshold, fallback) for outcome in outcomes]
    names = list(modes)
    for j in judged:  # a mode the pack lost since the file was written still shows up
        for name in (j.expected, j.mode):
            if name is not None and name not in names and name != fallback:
                names.append(name)
    per_mode: dict[str, ModeScore] = {}
    for name in names:
        support = sum(1 for j in judged if j.expected == name)
        # A null case that rightly fell back is not the fallback mode's false positive.
        routed = [j for j in judged if j.mode == name and not (j.expected is None and j.fell_back)]
        hits = sum(1 for j in routed if j.expected == name)
        per_mode[name] = ModeScore(
            hits / len(routed) if routed else None,
            hits / support if support else None,
            support,
            len(routed),
        )
    fell = [j for j in judged if j.fell_back]
    nulls = [j for j in judged if j.expected is None]
    right_fallbacks = sum(1 for j in fell if j.expected is None)
    fallback_score = ModeScore(
        right_fallbacks / len(fell) if fell else None,
        right_fallbacks / len(nulls) if nulls else None,
        len(nulls),
        len(fell),
    )
    columns = [*names, FALLBACK]
    confusion: dict[str, dict[str, int]] = {}
    for row in [*names, NONE]:
        confusion[row] = {column: 0 for column in columns}
    for j in judged:
        confusion[NONE if j.expected is None else j.expected][j.chosen] += 1
    confusion = {row: cols for row, cols in confusion.items() if sum(cols.values()) or row in modes}
    durations = [j.duration_ms for j in judged if j.duration_ms is not None]
    # Calibration reads the classifier's own call (threshold off): is its mode the one the
    # case expects? A case that expects a fallback has no right mode, so it counts as wrong.
    scored = [
        (o.route.confidence, o.route.mode_name == o.case.mode)
        for o in outcomes
        if o.route.decided_by == "classifier" and o.route.confidence is not None
    ]
    in_scope = [j for j in judged if j.expected is not None]
    kinds = [(o.case.kind, j.correct) for o, j in zip(outcomes, judged, strict=True)]
    follow_ups = [ok for kind, ok in kinds if kind == "follow-up"]
    switches = [ok for kind, ok in kinds if kind == "switch"]
    return EvalReport(
        cases=len(judged),
        correct=sum(j.correct for j in judged),
        threshold=threshold,
        in_scope=len(in_scope),
        in_scope_correct=sum(j.correct for j in in_scope),
        per_mode=per_mode,
        fallback=fallback_score,
        confusion=confusion,
        latency_p50_ms=percentile(durations, 50),
        latency_p95_ms=percentile(durations, 95),
        errors=sum(1 for o in outcomes if o.route.error is not None),
        columns=tuple(columns),
        reliability=reliability([c for c, _ in scored], [ok for _, ok in scored]) if scored else (),
        follow_ups=len(follow_ups),
        follow_ups_correct=sum(follow_ups),
        switches=len(switches),
        switches_correct=sum(switches),
    )


# --------------------------------------------------------------------------- fitting


@dataclass(frozen=True, slots=True)
class FitRow:
    """What one threshold would give on the file."""

    threshold: float
    """The below_confidence tried."""
    in_scope_accuracy: float | None
    """Accuracy on cases that expect a mode."""
    fallback_recall: float | None
    """Share of null cases that fell back."""
    fallback_precision: float | None
    """Share of fallbacks that were null cases."""
    accuracy: float
    """Accuracy on every case."""

    @property
    def balance(self) -> float:
        """Harmonic mean of in-scope accuracy and fallback recall (or in-scope accuracy
        alone when the file has no null cases)."""
        a = self.in_scope_accuracy
        r = self.fallback_recall
        if a is None:
            return r or 0.0
        if r is None:
            return a
        return 0.0 if a + r == 0 else 2 * a * r / (a + r)

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "below_confidence": self.threshold,
            "in_scope_accuracy": _round(self.in_scope_accuracy),
            "fallback_recall": _round(self.fallback_recall),
            "fallback_precision": _round(self.fallback_precision),
            "accuracy": _round(self.accuracy),
            "balance": _round(self.balance),
        }


@dataclass(frozen=True, slots=True)
class Fit:
    """The threshold search: every row tried and the pick."""

    rows: tuple[FitRow, ...]
    """One per threshold, ascending."""
    best: FitRow
    """Highest balance; ties go to higher accuracy, then the lower threshold."""
    has_null_cases: bool
    """Whether the file could measure fallback recall at all."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "rows": [row.to_dict() for row in self.rows],
            "best": self.best.to_dict(),
            "has_null_cases": self.has_null_cases,
        }


def fit_threshold(
    outcomes: Sequence[Outcome],
    modes: Sequence[str],
    fallback: str,
    thresholds: Iterable[float] = FIT_GRID,
) -> Fit:
    """Try each threshold on the raw routes; pick the one that best balances in-scope
    accuracy against fallback recall (their harmonic mean)."""
    rows = []
    for threshold in sorted(set(thresholds)):
        report = evaluate(outcomes, modes, fallback, threshold)
        rows.append(
            FitRow(
                threshold,
                report.in_scope_accuracy,
                report.fallback.recall,
                report.fallback.precision,
                report.accuracy,
            )
        )
    if not rows:
        raise ValueError("fit_threshold needs at least one threshold")
    best = max(
        rows, key=lambda row: (round(row.balance, 9), round(row.accuracy, 9), -row.threshold)
    )
    has_nulls = any(outcome.case.mode is None for outcome in outcomes)
    return Fit(tuple(rows), best, has_nulls)


# --------------------------------------------------------------------------- running


ProgressHook = Callable[[int, int], None]


async def route_cases(
    pack: Pack,
    classifier: Classifier,
    cases: Sequence[EvalCase],
    on_progress: ProgressHook | None = None,
) -> list[Outcome]:
    """Route every case with the pack's router, threshold off (see `judge`)."""
    raw = replace(pack, router=replace(pack.router, below_confidence=None))
    router = Router(raw, classifier)
    outcomes = []
    for done, case in enumerate(cases, start=1):
        route = await router.route(case.conversation(), **case.route_options())
        outcomes.append(Outcome(case, _as_asked(route, pack.router.below_confidence, pack)))
        if on_progress is not None:
            on_progress(done, len(cases))
    return outcomes


def _as_asked(route: Route, threshold: float | None, pack: Pack) -> Route:
    """`route` with the doubt the app would show. Routed with the threshold off, a pick below
    the threshold is a fallback in the app: its doubt is the fallback's (`values.doubt`),
    asked about when the pick nearly made it and never when it fell far below."""
    confidence = route.confidence
    if route.decided_by != "classifier" or threshold is None or confidence is None:
        return route
    if confidence >= threshold:
        return route
    config = pack.router
    own = routed_alone(route, threshold, pack.names)
    route = route if own is None else own  # as the router routes it with the threshold on
    # the classifier's pick after the conversation step: the threshold comes before
    # stickiness, so a route stickiness kept still falls back and asks about that pick
    decision = route.decision
    unsure = doubt(
        decision.mode_name if decision is not None and decision.mode_name else route.mode_name,
        route.confidence,
        decision.probabilities if decision is not None else None,
        ask_below=config.ask_below,
        ask_margin=config.ask_margin,
        runs=config.fallback if own is None else own.mode_name,
        fell_below=threshold if own is None else None,
    )
    return replace(route, unsure=unsure)
