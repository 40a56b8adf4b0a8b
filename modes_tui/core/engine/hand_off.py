"""A hand-off inside a turn: `HandOffGuard` lets a `switch_mode` call (the tool:
`core.edits.handoff`) through only as the policy allows; after it, the next rounds are the
named mode's (`hand_over`), under a route `decided_by: model` (`hand_off_route`).

A hand-off is a move the user did not make, like the router's pick: a target with
`auto_enter: confirm` is entered only after the user says yes (`auto_enter.hand_off_question`).
A no, a broken dialog, or nobody to ask (a pipe) cancels the call: the model reads why, and
the turn goes on in the mode it was in. Once handed over, the target's own policy decides
every tool call from its first (the guards read the mode of the turn's current setup).

The new route (`decided_by: model`, the model's reason) is recorded and yielded like the
turn's first, then the mode change, then the new mode's setup replaces the turn's: its
instructions, tools and model answer the rest of the turn.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Collection
from dataclasses import replace

from modes_tui.core.edits.handoff import SWITCH_MODE
from modes_tui.core.edits.policy import Policy
from modes_tui.core.engine.auto_enter import ask_entry, hand_off_question
from modes_tui.core.engine.context import TurnContext
from modes_tui.core.engine.ports import Asker
from modes_tui.core.engine.state import TurnState
from modes_tui.core.engine.verdicts import Block, Cancel, PendingCall, Verdict
from modes_tui.core.errors import cut_repr
from modes_tui.core.history.events import ModeChanged, RouteDecided, TurnEvent
from modes_tui.core.history.records import RouteRecord
from modes_tui.core.model.wire import ToolCall
from modes_tui.core.values.route import Route

__all__ = ["REASON_CHARS", "HandOffGuard", "hand_off_route", "hand_over"]

REASON_CHARS = 300
"""A model's reason is cut to this many characters (it is shown in the panel)."""


async def hand_over(
    ctx: TurnContext, turn: TurnState, call: ToolCall
) -> AsyncGenerator[TurnEvent, None]:
    """Route the rest of the turn to the mode `call` (a `switch_mode`) names."""
    state = ctx.state
    handed = hand_off_route(
        state.routes[-1], str(call.arguments.get("mode")), str(call.arguments.get("reason"))
    )
    state.routes.append(handed)
    ctx.recorder.write(RouteRecord(state.turn, handed, turn.setting, ()))
    yield RouteDecided(handed, turn.setting, ())
    previous, state.mode = state.mode, handed.mode_name
    turn.mode = handed.mode_name
    yield ModeChanged(previous, handed.mode_name)
    turn.setup = await ctx.stopper.step(ctx.setups.resolve(ctx.config, turn.mode))


class HandOffGuard:
    """Lets `switch_mode` through only once per turn, to a mode the policy allows, and into
    an `auto_enter: confirm` mode only with the user's yes."""

    def __init__(
        self,
        modes: Callable[[], Collection[str]],
        policy: Callable[[str | None], Policy],
        *,
        asks_first: Callable[[str], bool] = lambda _mode: False,
        asker: Asker | None = None,
    ) -> None:
        self.modes = modes
        """The modes the router may choose now (available, not `auto_enter: never`)."""
        self.policy = policy
        """A mode's policy (its `hand_off:` list)."""
        self.asks_first = asks_first
        """Whether a mode has `auto_enter: confirm` (the user is asked before it is entered)."""
        self.asker = asker
        """Who answers that question (None: nobody can, as in a pipe: the hand-off is declined)."""

    async def check(self, pending: PendingCall) -> Verdict | None:
        if pending.call.name != SWITCH_MODE:
            return None
        target = str(pending.call.arguments.get("mode", ""))
        problem = self._problem(pending, target)
        if problem is not None:
            return Block(f"{problem}; answer in this mode instead", type="hand_off_refused")
        if not self.asks_first(target) or self._denied(pending):
            return None  # a denied switch_mode is the policy guard's to refuse, unasked
        reason = str(pending.call.arguments.get("reason", ""))
        question = hand_off_question(pending.mode, target, reason)
        if await ask_entry(self.asker, question):
            return None
        stay = f"answer in {pending.mode} instead" if pending.mode else "answer here instead"
        if self.asker is None:
            return Cancel(
                f"{target} is entered only with the user's yes (auto_enter: confirm) and "
                f"nobody can answer here, so the turn stays in {pending.mode or 'this mode'}; "
                f"do not retry the hand-off, {stay}"
            )
        return Cancel(
            f"the user declined to hand this turn to {target}; do not retry the hand-off, {stay}"
        )

    def _denied(self, pending: PendingCall) -> bool:
        """Whether the answering mode's policy denies `switch_mode` (nobody is asked then)."""
        return self.policy(pending.mode).rule(SWITCH_MODE, asks=False).permission == "deny"

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
