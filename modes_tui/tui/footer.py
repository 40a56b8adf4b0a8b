"""The footer: the keys that fit, each shown whole.

Textual's footer lays every shown binding in one row and lets the command palette key
(docked right) cover whatever does not fit, so a narrow terminal shows half a key
("f3 co"). This one keeps the keys in order and leaves out the ones that would not fit
whole; `ctrl+p` lists every action and `/help` every key.

It also mounts its keys again only when they change: Textual's footer does it on every
announcement that the bindings may have changed (each focus move, each `refresh_bindings`),
and mounting a row of keys costs a few milliseconds each time, before the first frame too.

The footer is not in the first frame: the conversation composes an empty bar in its place
(`#footer-bar`) and mounts the footer right after that frame (`take_place`). Textual lists a
footer's keys only once the screen's bindings are ready, after that frame, so the first
frame showed the bar empty anyway; this module, Textual's footer and their CSS (about 2 ms
of the start, `bench/tui_startup.py`) now wait with the keys.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

PALETTE_CELLS = 13
"""Room for the palette key on the right: `▏^p palette ` and a cell to spare."""


FooterKeys = tuple[tuple[str, str, str, bool, str], ...]
"""What the footer shows of each binding: key, description, action, enabled, tooltip."""


def shown_keys(screen: Screen[object]) -> FooterKeys:
    """The bindings of `screen` that a footer shows, as it would show them."""
    return tuple(
        (binding.key, binding.description, binding.action, enabled, tooltip)
        for (_, binding, enabled, tooltip) in screen.active_bindings.values()
        if binding.show
    )


def key_cells(key: FooterKey) -> int:
    """Cells a compact footer key takes: the key, a space, the description, a margin."""
    description = f" {key.description}" if key.description else ""
    return len(key.key_display) + len(description) + 1


class KeysFooter(Footer):
    """A compact footer that never shows a key cut in half."""

    DEFAULT_CSS = """
    KeysFooter.-compact FooterKey.-command-palette { padding-right: 1; }
    """

    def __init__(self) -> None:
        super().__init__(compact=True)
        self._fits: list[int] = []
        """Cells of each key composed, in order, to tell when a resize changes what fits."""
        self._shown = 0
        """How many of them fit when composed."""
        self._composed: FooterKeys | None = None
        """The bindings the keys were composed from (None before the first time)."""

    def bindings_changed(self, screen: Screen[object]) -> None:
        if (
            self._composed is not None
            and self.is_attached
            and screen is self.screen
            and shown_keys(screen) == self._composed
        ):
            return  # the same keys: nothing to mount again
        super().bindings_changed(screen)

    async def recompose(self) -> None:
        # Textual queues a recompose per announcement; at start three are queued before the
        # first is done, so the check in `bindings_changed` alone lets them all through.
        if (
            self._composed is not None
            and self.is_attached
            and shown_keys(self.screen) == self._composed
            and self._fitting(self.size.width) == self._shown
        ):
            return
        await super().recompose()

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._composed = shown_keys(self.screen)
        room = self.size.width - PALETTE_CELLS
        self._fits, self._shown = [], 0
        for widget in super().compose():
            if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                cells = key_cells(widget)
                self._fits.append(cells)
                room -= cells
                if room < 0:
                    continue
                self._shown += 1
            yield widget

    def _fitting(self, width: int) -> int:
        room, count = width - PALETTE_CELLS, 0
        for cells in self._fits:
            room -= cells
            if room < 0:
                break
            count += 1
        return count

    def on_resize(self) -> None:
        # Recompose only when another number of keys fits (a resize to the same keys is free).
        if self._fits and self._fitting(self.size.width) != self._shown:
            self.refresh(recompose=True)


async def take_place(screen: Screen[Any], bar: Widget) -> None:
    """Mount a `KeysFooter` on `screen` in place of `bar`, in one frame (never two bars,
    never none), and announce the bindings it missed while it was not there."""
    with screen.app.batch_update():
        await screen.mount(KeysFooter(), before=bar)
        await bar.remove()
    screen.refresh_bindings()
