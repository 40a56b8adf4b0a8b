"""Markdown lists with one widget per item.

Textual's Markdown draws every list item as four widgets: a row holding the bullet and a
column holding the item's paragraph. Answers are full of short lists, and every relayout (a
resize, the route panel shown or hidden, a new line streamed) arranges each of those widgets
again. An item that is a single paragraph (the usual case) is drawn here as that one
paragraph, indented by the bullet's width, with the bullet painted into the indent of its
first line: the same cells as Textual draws, from one widget instead of four. Items holding
anything else (two paragraphs, a nested list, a code block) keep Textual's layout.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import suppress

from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.geometry import Offset, Region
from textual.selection import Selection
from textual.strip import Strip
from textual.widgets._markdown import (
    Markdown,
    MarkdownBlock,
    MarkdownBullet,
    MarkdownBulletList,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownOrderedListItem,
    MarkdownParagraph,
)


class ListItemParagraph(MarkdownParagraph):
    """A list item that is one paragraph: its text indented by the bullet, the bullet drawn
    into the first line's indent (in the color Textual gives bullets)."""

    COMPONENT_CLASSES = MarkdownParagraph.COMPONENT_CLASSES | {"list-item--bullet"}
    DEFAULT_CSS = """
    ListItemParagraph > .list-item--bullet {
        color: $text-primary;
    }
    ListItemParagraph:light > .list-item--bullet {
        color: $text-secondary;
    }
    """

    def __init__(self, paragraph: MarkdownParagraph, symbol: str) -> None:
        markdown = paragraph._markdown
        super().__init__(markdown, paragraph._token, paragraph.source_range)
        self.symbol = symbol
        """The bullet or number, with the space after it."""
        self._inline_token = paragraph._inline_token
        self.set_content(paragraph._content)
        self.styles.padding = (0, 0, 0, len(symbol))

    def render_lines(self, crop: Region) -> list[Strip]:
        strips = super().render_lines(crop)
        width = len(self.symbol)
        if crop.y == 0 and strips and crop.x < width:
            _, background = self.background_colors
            style = Style(bgcolor=background.rich_color) + self.get_component_rich_style(
                "list-item--bullet", partial=True
            )
            bullet = Strip([Segment(self.symbol, style)]).crop(crop.x, min(crop.right, width))
            # The rest of the line has been through the app's line filters (no color, dim
            # when the app is in the background); the bullet goes through them too.
            for line_filter in self.get_line_filters():
                bullet = bullet.apply_filter(line_filter, background)
            strips[0] = Strip.join([bullet, strips[0].crop(width - crop.x)])
        return strips

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        found = super().get_selection(selection)
        if found is None or selection.start not in (None, Offset(0, 0)):
            return found
        text, ending = found
        return f"{self.symbol}{text}", ending


def _items(blocks: list[MarkdownBlock], symbols: Iterator[str]) -> ComposeResult:
    for block in blocks:
        if not isinstance(block, MarkdownListItem):
            continue
        symbol = next(symbols)
        inner = block._blocks
        if len(inner) == 1 and type(inner[0]) is MarkdownParagraph:
            yield ListItemParagraph(inner[0], symbol)
        else:
            bullet = MarkdownBullet()
            bullet.symbol = symbol
            yield Horizontal(bullet, Vertical(*inner))


class BulletList(MarkdownBulletList):
    """A bullet list, one widget per single-paragraph item."""

    def compose(self) -> ComposeResult:
        symbols = (b.bullet for b in self._blocks if isinstance(b, MarkdownListItem))
        yield from _items(self._blocks, symbols)
        self._blocks.clear()


class OrderedList(MarkdownOrderedList):
    """A numbered list, one widget per single-paragraph item (numbered and aligned as
    Textual does)."""

    def compose(self) -> ComposeResult:
        start = 1
        if self._blocks and isinstance(self._blocks[0], MarkdownOrderedListItem):
            with suppress(ValueError):
                start = int(self._blocks[0].bullet)
        numbered = [
            (number, block)
            for number, block in enumerate(self._blocks, start)
            if isinstance(block, MarkdownListItem)
        ]
        if numbered:
            size = max(len(f"{number}. ") for number, _ in numbered)
            symbols = (f"{number}. ".rjust(size + 1) for number, _ in numbered)
            yield from _items(self._blocks, symbols)
        self._blocks.clear()


BLOCKS: dict[str, type[MarkdownBlock]] = {
    **Markdown.BLOCKS,
    "bullet_list_open": BulletList,
    "ordered_list_open": OrderedList,
}
"""Textual's Markdown blocks, with these lists."""
