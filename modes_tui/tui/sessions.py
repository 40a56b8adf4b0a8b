"""Recorded sessions for the app: the store's logs, replay and re-route, as the screens need them.

No textual here; `Runtime.tui_services` builds a `StoreSessions` and hands it to the app.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from modes_tui.core.history.transcript import Reroute
from modes_tui.core.paths import Dirs
from modes_tui.core.routing.router import Router
from modes_tui.core.terminal_text import terminal_safe
from modes_tui.store.export import session_markdown, write_export
from modes_tui.store.replay import replay
from modes_tui.store.reroute import RerouteReport, reroute
from modes_tui.store.session_reader import load_session
from modes_tui.store.sessions import list_sessions
from modes_tui.tui.services import (
    ReplayedSession,
    RerouteResult,
    SessionSummary,
)


class StoreSessions:
    """The `SessionCatalog` over the session logs in `dirs`."""

    def __init__(
        self, dirs: Dirs, router: Callable[[], Router], *, export_dir: Path | None = None
    ) -> None:
        self.dirs = dirs
        self._router = router
        self.export_dir = export_dir if export_dir is not None else Path.cwd()
        """Where `/export` writes (the working directory by default)."""

    def list(self) -> Sequence[SessionSummary]:
        return [
            SessionSummary(
                id=s.id,
                title=terminal_safe(s.title or (f"(unreadable: {s.problem})" if s.problem else "")),
                created=s.created or "",
                turns=s.turns,
                pack=s.pack or "",
            )
            for s in list_sessions(self.dirs)
        ]

    def load(self, session_id: str) -> ReplayedSession:
        session = load_session(session_id, self.dirs)
        replayed = replay(session)
        return ReplayedSession(
            id=session.id,
            title=terminal_safe(session.title),
            turns=replayed.turns,
            warnings=[terminal_safe(str(problem)) for problem in replayed.problems],
        )

    def reroute(self, session_id: str) -> RerouteResult:
        session = load_session(session_id, self.dirs)
        router = self._router()
        report = asyncio.run(reroute(session, router))
        return reroute_result(report)

    def export(self, session_id: str) -> Path:
        session = load_session(session_id, self.dirs)
        target = self.export_dir / f"modes-tui-{session.id}.md"
        write_export(target, session_markdown(replay(session)))
        return target


def reroute_result(report: RerouteReport) -> RerouteResult:
    """The store's report as per-turn marks and one summary line."""
    by_turn = {}
    for turn in report.turns:
        note = ""
        if turn.recorded_missing:
            note = f"{turn.recorded_mode} is not in pack {report.pack} any more"
        by_turn[turn.turn] = Reroute(turn.route, turn.changed, note)
    summary = report.summary
    if summary.agreement is None:
        return RerouteResult(by_turn, "no user turns to re-route")
    parts = [f"{summary.agreed}/{summary.turns} turns agree ({summary.agreement:.0%})"]
    if summary.gained:
        parts.append("gained " + ", ".join(f"{m} +{n}" for m, n in summary.gained.items()))
    if summary.lost:
        parts.append("lost " + ", ".join(f"{m} −{n}" for m, n in summary.lost.items()))
    if summary.latency_p50_ms is not None:
        parts.append(f"routing p50 {summary.latency_p50_ms:.1f} ms")
    return RerouteResult(by_turn, " · ".join(parts))
