"""Command palette entries: "Force mode: X" for each mode, auto and off, and every action
of the chat screen."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from modes_tui.core.config.control import AUTO, OFF


class ModeSwitcher(Protocol):
    """What the palette needs from the app."""

    def mode_names(self) -> list[str]:
        """The modes that can be forced."""
        ...

    def set_setting(self, setting: str) -> bool:
        """Write the control file."""
        ...


class ModeCommands(Provider):
    """Force a mode, let the router pick, or turn modes off."""

    def _entries(self) -> list[tuple[str, str, str]]:
        app = cast(ModeSwitcher, self.app)
        entries = [
            (f"Force mode: {name}", name, f"Every turn goes to {name} until you change it")
            for name in app.mode_names()
        ]
        entries.append(("Modes: auto (the router picks)", AUTO, "Let the router pick each turn"))
        entries.append(("Modes: off (no mode)", OFF, "Base prompt and default model only"))
        return entries

    async def discover(self) -> Hits:
        app = cast(ModeSwitcher, self.app)
        for title, setting, help_text in self._entries():
            yield DiscoveryHit(title, partial(app.set_setting, setting), help=help_text)

    async def search(self, query: str) -> Hits:
        app = cast(ModeSwitcher, self.app)
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


class ActionSource(Protocol):
    """What the action list needs from the app."""

    def palette_actions(self) -> list[tuple[str, str, Callable[[], object]]]:
        """(title, help, run) for every action of the chat screen."""
        ...


class ActionCommands(Provider):
    """Every action of the chat screen, with its key, so nothing hides behind a key alone."""

    async def discover(self) -> Hits:
        app = cast(ActionSource, self.app)
        for title, help_text, run in app.palette_actions():
            yield DiscoveryHit(title, run, help=help_text or None)

    async def search(self, query: str) -> Hits:
        app = cast(ActionSource, self.app)
        matcher = self.matcher(query)
        for title, help_text, run in app.palette_actions():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), run, text=title, help=help_text or None)
