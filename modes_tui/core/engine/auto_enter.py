"""The `auto_enter: confirm` policy: ask before the router moves a turn into such a mode.

Only the router's choice is questioned: a mode the user forced, or the mode the conversation
is already in, is entered without asking. A no, a broken dialog, or nobody to ask (a script)
sends the turn to the fallback mode, and the route says why.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from modes_tui.core.engine.ports import Asker
from modes_tui.core.engine.questions import Question
from modes_tui.core.packs.profiles import Pack
from modes_tui.core.routing.router import Route

__all__ = ["confirm_entry"]

log = logging.getLogger("modes_tui.engine")


async def confirm_entry(
    route: Route, pack: Pack, asker: Asker | None, current_mode: str | None
) -> Route:
    """Ask before the router (not the user) moves the conversation into a confirm-first mode."""
    profile = pack.get(route.mode_name)
    if (
        profile is None
        or profile.auto_enter != "confirm"
        or route.forced
        or route.mode_name == current_mode
    ):
        return route
    question = Question(
        "enter_mode",
        f"Enter {profile.name}?",
        f"The router wants to answer in {profile.name} ({route.reason or 'no reason given'}). "
        f"{profile.name} asks before it is entered. Answer there?",
    )
    allowed = False
    if asker is not None:
        try:
            allowed = bool(await asker.ask(question))
        except Exception:  # a broken dialog keeps the turn out of the mode
            log.exception("asking to enter %s failed; treated as no", profile.name)
    if allowed:
        return route
    fallback = pack.router.fallback
    return replace(
        route,
        mode_name=fallback,
        decided_by="fallback",
        reason=f"Entering {profile.name} declined (auto_enter: confirm)"
        if asker is not None
        else f"Entering {profile.name} needs a yes, and nobody can answer here",
        runner_up=profile.name,
    )
