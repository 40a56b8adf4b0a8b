"""Command palette entries: "Force mode: X" for each mode, auto and off, and every action
of the conversation screen."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Protocol, cast

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

from modes_tui.core.control_setting import AUTO, OFF


class ModeSwitcher(Protocol):
    """What the palette needs from the conversation."""

    def mode_names(self) -> list[str]:
        """The modes that can be forced."""
        ...

    def set_setting(self, setting: str) -> bool:
        """Write the control file."""
        ...


class ModeCommands(Provider):
    """Force a mode, let the router pick, or turn modes off."""

    def _entries(self) -> list[tuple[str, str, str]]:
        app = cast("ModeSwitcher", cast("ActionSource", self.app).conversation)
        entries = [
            (f"Force mode: {name}", name, f"Every turn goes to {name} until you change it")
            for name in app.mode_names()
        ]
        entries.append(("Modes: auto (the router picks)", AUTO, "Let the router pick each turn"))
        entries.append(("Modes: off (no mode)", OFF, "Base prompt and default model only"))
        return entries

    async def discover(self) -> Hits:
        app = cast("ModeSwitcher", cast("ActionSource", self.app).conversation)
        for title, setting, help_text in self._entries():
            yield DiscoveryHit(title, partial(app.set_setting, setting), help=help_text)

    async def search(self, query: str) -> Hits:
        app = cast("ModeSwitcher", cast("ActionSource", self.app).conversation)
        matcher = self.matcher(query)
        for title, setting, help_text in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(title),
                    partial(app.set_setting, setting),
                    text=title,
                    help=help_text,
                )


class Conversation(Protocol):
    """What the action list needs from the conversation screen."""

    def action_toggle_panel(self) -> None: ...
    def action_why(self) -> None: ...
    def action_copy_answer(self) -> None: ...
    def action_retry(self) -> None: ...
    def action_cancel_turn(self) -> None: ...
    def action_cycle_mode(self) -> None: ...
    def run_command_later(self, name: str) -> None: ...

    def palette_actions(self) -> list[tuple[str, str, Callable[[], object]]]:
        """(title, help, run) for every action of the conversation."""
        ...


class ActionSource(Protocol):
    """What the action list needs from the app."""

    @property
    def conversation(self) -> Conversation:
        """The conversation screen (under any other screen)."""
        ...


def conversation_actions(
    conversation: Conversation, bindings: Sequence[object]
) -> list[tuple[str, str, Callable[[], object]]]:
    """Every action of the conversation, titled with its key from `bindings`: (title, help,
    run), so nothing hides behind a key alone."""
    keys = {b.action: b.key for b in bindings if isinstance(b, Binding)}

    def key(action: str) -> str:
        found = keys.get(action)
        return f" ({found})" if found else ""

    c, command = conversation, conversation.run_command_later
    return [
        ("Show or hide the route panel" + key("toggle_panel"), "", c.action_toggle_panel),
        ("Why? The inspector for the last turn" + key("why"), "", c.action_why),
        ("Copy the last answer" + key("copy_answer"), "", c.action_copy_answer),
        ("Retry the failed or cancelled turn" + key("retry"), "", c.action_retry),
        ("Cancel the running turn (esc)", "", c.action_cancel_turn),
        ("Cycle modes" + key("cycle_mode"), "auto, then each mode", c.action_cycle_mode),
        ("List the modes (/modes)", "", partial(command, "/modes")),
        ("Recorded sessions (/sessions)", "", partial(command, "/sessions")),
        ("Export the conversation (/export)", "", partial(command, "/export")),
        ("Clear the conversation (/clear)", "", partial(command, "/clear")),
        ("Help: keys and commands" + key("help"), "", partial(command, "/help")),
        ("Quit (/quit, ctrl+q)", "", partial(command, "/quit")),
    ]


class ActionCommands(Provider):
    """Every action of the chat screen, with its key, so nothing hides behind a key alone."""

    def _actions(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = cast("ActionSource", self.app)
        return app.conversation.palette_actions()

    async def discover(self) -> Hits:
        for title, help_text, run in self._actions():
            yield DiscoveryHit(title, run, help=help_text or None)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, run in self._actions():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), run, text=title, help=help_text or None)
