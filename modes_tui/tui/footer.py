"""The footer: the keys that fit, each shown whole.

Textual's footer lays every shown binding in one row and lets the command palette key
(docked right) cover whatever does not fit, so a narrow terminal shows half a key
("f3 co"). This one keeps the keys in order and leaves out the ones that would not fit
whole; `ctrl+p` lists every action and `/help` every key.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

PALETTE_CELLS = 13
"""Room for the palette key on the right: `▏^p palette ` and a cell to spare."""


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
        self._width = 0

    def compose(self) -> ComposeResult:
        room = self.size.width - PALETTE_CELLS
        for widget in super().compose():
            if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                room -= key_cells(widget)
                if room < 0:
                    continue
            yield widget

    def on_resize(self) -> None:
        if self.size.width != self._width:
            self._width = self.size.width
            self.refresh(recompose=True)
