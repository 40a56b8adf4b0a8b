"""Re-routing a recorded session: today's router over its user turns, compared with then.

`reroute(session, router)` runs today's router over the recorded user turns, each with
the history it had at the time, and compares with what was recorded. The recorded mode
is reported as recorded even when today's pack no longer has it (marked missing).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modes_tui.core.evals.scoring import percentile
from modes_tui.core.routing.ports import Classifier
from modes_tui.core.routing.router import Router
from modes_tui.core.values.route import Route
from modes_tui.store.replay import Replay, history_points, replay
from modes_tui.store.session_reader import LoadedSession


@dataclass(frozen=True, slots=True)
class RerouteTurn:
    """One user turn: what was recorded, and what today's router says."""

    turn: int
    """The turn number."""
    text: str
    """What the user typed."""
    recorded_mode: str | None
    """The recorded mode (None: no route recorded, e.g. the `off` setting)."""
    recorded_by: str | None
    """Who decided then: caller, classifier or fallback."""
    recorded_confidence: float | None
    """The recorded confidence."""
    recorded_missing: bool
    """The recorded mode is not in today's pack."""
    new_mode: str
    """Today's decision."""
    new_by: str
    """Who decided today."""
    new_confidence: float | None
    """Today's confidence."""
    changed: bool
    """Today's mode differs from the recorded one."""
    duration_ms: float
    """How long today's decision took (the classifier's time, else the whole call)."""
    route: Route
    """Today's full route."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for `--json`."""
        return {
            "turn": self.turn,
            "text": self.text,
            "recorded": {
                "mode": self.recorded_mode,
                "decided_by": self.recorded_by,
                "confidence": self.recorded_confidence,
                "missing": self.recorded_missing,
            },
            "new": {
                "mode": self.new_mode,
                "decided_by": self.new_by,
                "confidence": self.new_confidence,
            },
            "changed": self.changed,
            "duration_ms": round(self.duration_ms, 3),
            "route": self.route.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class RerouteSummary:
    """How today's router compares with the recorded decisions."""

    turns: int
    """User turns re-routed."""
    agreed: int
    """Turns where today's mode equals the recorded one."""
    gained: Mapping[str, int] = field(default_factory=dict)
    """Mode -> turns it takes today that it did not take then."""
    lost: Mapping[str, int] = field(default_factory=dict)
    """Mode -> turns it took then that go elsewhere today ("(none)" for no mode)."""
    missing_modes: tuple[str, ...] = ()
    """Recorded modes that today's pack does not have."""
    latency_p50_ms: float | None = None
    """Median decision time."""
    latency_p95_ms: float | None = None
    """95th percentile decision time."""

    @property
    def agreement(self) -> float | None:
        """agreed / turns, or None without turns."""
        return self.agreed / self.turns if self.turns else None

    def to_dict(self) -> dict[str, Any]:
        """Plain data for `--json`."""
        return {
            "turns": self.turns,
            "agreed": self.agreed,
            "agreement": self.agreement,
            "gained": dict(self.gained),
            "lost": dict(self.lost),
            "missing_modes": list(self.missing_modes),
            "latency_p50_ms": self.latency_p50_ms,
            "latency_p95_ms": self.latency_p95_ms,
        }


@dataclass(frozen=True, slots=True)
class RerouteReport:
    """Every re-routed turn and the summary."""

    session_id: str
    """The session re-routed."""
    pack: str
    """Today's pack."""
    turns: tuple[RerouteTurn, ...]
    """Per turn, in order."""
    summary: RerouteSummary
    """The totals."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for `--json`."""
        return {
            "session": self.session_id,
            "pack": self.pack,
            "turns": [turn.to_dict() for turn in self.turns],
            "summary": self.summary.to_dict(),
        }


NO_MODE = "(none)"


async def reroute(
    session: LoadedSession | Replay, router: Router, *, classifier: Classifier | None = None
) -> RerouteReport:
    """Route every recorded user turn again, with the history it had, and compare."""
    replayed = session if isinstance(session, Replay) else replay(session)
    loaded = replayed.session
    recorded = {turn.turn: turn for turn in replayed.turns}
    known = set(router.pack.names)
    points = history_points(loaded)

    results: list[RerouteTurn] = []
    for number, text, history in points:
        then = recorded.get(number)
        old_route = then.route if then is not None else None
        old_mode = then.mode if then is not None else None
        started = time.perf_counter()
        route = await router.route(history, classifier=classifier)
        wall = (time.perf_counter() - started) * 1000
        results.append(
            RerouteTurn(
                turn=number,
                text=text,
                recorded_mode=old_mode,
                recorded_by=old_route.decided_by if old_route is not None else None,
                recorded_confidence=old_route.confidence if old_route is not None else None,
                recorded_missing=old_mode is not None and old_mode not in known,
                new_mode=route.mode_name,
                new_by=route.decided_by,
                new_confidence=route.confidence,
                changed=route.mode_name != old_mode,
                duration_ms=route.duration_ms if route.duration_ms is not None else wall,
                route=route,
            )
        )

    changed = [r for r in results if r.changed]
    gained = Counter(r.new_mode for r in changed)
    lost = Counter(r.recorded_mode or NO_MODE for r in changed)
    durations = [r.duration_ms for r in results]
    missing = sorted({r.recorded_mode for r in results if r.recorded_missing and r.recorded_mode})
    summary = RerouteSummary(
        turns=len(results),
        agreed=len(results) - len(changed),
        gained=dict(sorted(gained.items(), key=lambda item: (-item[1], item[0]))),
        lost=dict(sorted(lost.items(), key=lambda item: (-item[1], item[0]))),
        missing_modes=tuple(missing),
        latency_p50_ms=percentile(durations, 50),
        latency_p95_ms=percentile(durations, 95),
    )
    return RerouteReport(loaded.id, router.pack.name, tuple(results), summary)
