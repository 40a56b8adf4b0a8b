"""Doubt, asked: when the router is unsure, the user picks the mode before the turn runs.

The route carries `unsure` (`core.values.doubt`: the pick below `ask_below`, or the
runner-up within `ask_margin`). When whoever answers the engine's questions can also choose
a mode (`ports.Chooser`: the app's doubt dialog), the pick and the runner-up are put to the
user through it; a choice other than the pick takes the turn and is recorded as a
correction of it, exactly as `/wrong` would record it (`rerun.TurnCorrections.chosen`), so
the router learns. Taking the pick records nothing: the router was right. Nobody to ask
(the REPL, a pipe), or a dialog that broke: the pick runs and the route keeps its doubt
(the REPL prints the `unsure:` line).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from modes_tui.core.engine.ports import Asker, Chooser
from modes_tui.core.engine.questions import ModeChoice
from modes_tui.core.packs.profiles import Pack
from modes_tui.core.routing.router import Router
from modes_tui.core.values.route import Route

__all__ = ["CHOSEN_REASON", "ask_doubt", "chosen_route"]

log = logging.getLogger("modes_tui.engine")

CHOSEN_REASON = "Chosen by you: the router was unsure ({line})"
"""The reason on the route of a turn whose mode the user chose in the doubt dialog."""


async def ask_doubt(route: Route, message: str, pack: Pack, asker: Asker | None) -> str | None:
    """The mode the user takes for an unsure route; None when nobody was asked (the route
    is sure, forced, or nobody here can choose), or the answer was no mode."""
    unsure = route.unsure
    if unsure is None or route.forced or unsure.pick != route.mode_name:
        return None
    if not isinstance(asker, Chooser):
        return None
    modes = tuple(p.name for p in pack.available())
    choice = ModeChoice(unsure, message, route.reason or "", modes)
    try:
        chosen = await asker.choose(choice)
    except Exception:  # a broken dialog runs the pick, as a pipe would
        log.exception("asking which mode failed; the router's pick runs")
        return None
    if chosen is None or chosen not in modes:
        return None
    return chosen


def chosen_route(router: Router, route: Route, chosen: str) -> Route:
    """The route of a turn the user gave to `chosen`: decided by the caller, the doubt kept."""
    assert route.unsure is not None  # only an unsure route is asked about
    reason = CHOSEN_REASON.format(line=route.unsure.line())
    return replace(router.force(chosen), reason=reason, unsure=route.unsure)
