"""The `auto_enter: confirm` policy: ask before a move the user did not make enters such a
mode: the router's pick (`confirm_entry`) or another mode's hand-off (`hand_off_question`,
asked by `core.engine.hand_off.HandOffGuard`).

Only those are questioned: a mode the user forced, or the mode the conversation is already
in, is entered without asking. For the router's pick a no, a broken dialog, or nobody to ask
(a script) sends the turn to the fallback mode, and the route says why; a declined hand-off
leaves the turn in the mode it was in.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from modes_tui.core.engine.ports import Asker
from modes_tui.core.engine.questions import Question
from modes_tui.core.packs.profiles import Pack
from modes_tui.core.values.route import Route

__all__ = ["ask_entry", "confirm_entry", "hand_off_question"]

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
        f"The router wants to answer this message in {profile.name}: "
        f"{route.reason or 'no reason given'}.\n"
        f"{profile.name} is entered only with your yes ({profile.name}'s auto_enter: confirm). "
        f"No answers in {pack.router.fallback} instead.",
        rule=f"{profile.name}'s auto_enter: confirm",
    )
    if await ask_entry(asker, question):
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


def hand_off_question(current: str | None, target: str, reason: str) -> Question:
    """The question before a hand-off from `current` enters `target` (`auto_enter: confirm`)."""
    source = current or "this turn's mode"
    why = " ".join(reason.split())[:300] or "no reason given"
    return Question(
        "enter_mode",
        f"Hand this turn to {target}?",
        f"{source} wants to hand the rest of this turn to {target}: {why}.\n"
        f"{target} is entered only with your yes ({target}'s auto_enter: confirm). "
        f"No keeps the turn in {source}.",
        rule=f"{target}'s auto_enter: confirm",
    )


async def ask_entry(asker: Asker | None, question: Question) -> bool:
    """The user's yes to entering a mode; no when nobody can answer or the dialog broke."""
    if asker is None:
        return False
    try:
        return bool(await asker.ask(question))
    except Exception:  # a broken dialog keeps the turn out of the mode
        log.exception("asking %r failed; treated as no", question.title)
        return False
