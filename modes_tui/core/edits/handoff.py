"""Hand-off: the answering mode's model gives the rest of the turn to another mode.

A pack offers it by listing `switch_mode` in a profile's `tools:`; `hand_off:` in that
profile names the modes it may hand to (absent: any other mode the router may choose).
`core.engine.hand_off.HandOffGuard` refuses a hand-off to the mode itself, to a mode that does not exist, is
unavailable or only forced (`auto_enter: never`), to one the profile does not list, and a
second hand-off in one turn; the tool itself only says yes. The engine then routes the rest
of the turn to the new mode: a route with `decided_by: model` and the model's reason
(`core.engine.hand_off.hand_off_route`), shown in the panel as a hand-off, which the user may accept as a
correction in one key (the router then learns that such a message belongs there).
"""

from __future__ import annotations

from modes_tui.core.tools.registry import Tool, tool

__all__ = ["SWITCH_MODE", "switch_mode_tool"]

SWITCH_MODE = "switch_mode"


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
