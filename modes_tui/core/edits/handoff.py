"""Hand-off: the answering mode's model gives the rest of the turn to another mode.

A pack offers it by listing `switch_mode` in a profile's `tools:`; `hand_off:` in that
profile names the modes it may hand to (absent: any other mode the router may choose).
`HandOffGuard` refuses a hand-off to the mode itself, to a mode that does not exist, is
unavailable or only forced (`auto_enter: never`), to one the profile does not list, and a
second hand-off in one turn; the tool itself only says yes. The engine then routes the rest
of the turn to the new mode: a route with `decided_by: model` and the model's reason
(`hand_off_route`), shown in the panel as a hand-off, which the user may accept as a
correction in one key (the router then learns that such a message belongs there).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace
from typing import TYPE_CHECKING

from modes_tui.core.edits.policy import Policy
from modes_tui.core.engine.guards import Block, PendingCall, Verdict
from modes_tui.core.errors import cut_repr
from modes_tui.core.tools.registry import Tool, tool

if TYPE_CHECKING:
    from modes_tui.core.routing.router import Route

__all__ = ["SWITCH_MODE", "HandOffGuard", "hand_off_route", "switch_mode_tool"]

SWITCH_MODE = "switch_mode"
REASON_CHARS = 300
"""A model's reason is cut to this many characters (it is shown in the panel)."""


def switch_mode_tool() -> Tool:
    """The `switch_mode` tool (the engine does the switching after it returns)."""

    @tool(name=SWITCH_MODE)
    def switch_mode(mode: str, reason: str) -> str:
        """Hand the rest of this turn to another mode that suits the request better.

        Use it once, early, when the request clearly belongs to another mode (for example
        code to change while you may only chat). That mode then answers the user.

        Args:
            mode: The mode to hand the turn to.
            reason: One sentence the user sees: why that mode fits better.
        """
        return f"handed over: mode {mode} answers the rest of this turn"

    return switch_mode


class HandOffGuard:
    """Lets `switch_mode` through only once per turn, to a mode the policy allows."""

    def __init__(
        self,
        modes: Callable[[], Collection[str]],
        policy: Callable[[str | None], Policy],
    ) -> None:
        self.modes = modes
        """The modes the router may choose now (available, not `auto_enter: never`)."""
        self.policy = policy
        """A mode's policy (its `hand_off:` list)."""

    def check(self, pending: PendingCall) -> Verdict | None:
        if pending.call.name != SWITCH_MODE:
            return None
        target = str(pending.call.arguments.get("mode", ""))
        problem = self._problem(pending, target)
        if problem is None:
            return None
        return Block(f"{problem}; answer in this mode instead", type="hand_off_refused")

    def _problem(self, pending: PendingCall, target: str) -> str | None:
        if any(call.name == SWITCH_MODE for call in pending.earlier):
            return "this turn was already handed over once"
        if target == pending.mode:
            return f"this turn is already in {cut_repr(target)}"
        modes = self.modes()
        if target not in modes:
            return f"there is no mode {cut_repr(target)} to hand to (modes: {', '.join(modes)})"
        allowed = self.policy(pending.mode).hand_off
        if allowed is not None and target not in allowed:
            return f"this mode may hand over only to {', '.join(allowed) or 'no mode'}"
        return None


def hand_off_route(route: Route, target: str, reason: str) -> Route:
    """The route of the rest of a turn that `route`'s mode handed to `target`."""
    reason = " ".join(reason.split())[:REASON_CHARS] or "no reason given"
    return replace(
        route,
        mode_name=target,
        decided_by="model",
        reason=reason,
        decision=None,
        duration_ms=None,
        classifier=None,
        error=None,
        runner_up=None,
        sticky=False,
        stages=(),
        one_shot=False,
        follow_up=None,
        alone=None,
    )
