"""Lists drawn one widget per item look exactly like Textual's own Markdown lists."""

from __future__ import annotations

import re

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Markdown

from modes_tui.tui.markdown_lists import BLOCKS, ListItemParagraph

DOCUMENT = """\
Steps:

- check the **obvious** cause with `git status` first
- then look at the edge cases, which take a long line that has to wrap around at least once \
or twice in a narrow column, with *emphasis* near the end
- done

9. nine
10. ten, also long enough to wrap in the narrow column that the test gives this document
11. eleven

- an item with a nested list
  - inner one
  - inner two
- an item with two paragraphs

  the second paragraph
- an item with code:

  ```python
  print("hi")
  ```
"""


class OneWidgetItems(Markdown):
    BLOCKS = BLOCKS


class Page(App[None]):
    def __init__(self, markdown: type[Markdown], theme: str) -> None:
        super().__init__()
        self._markdown = markdown
        self._theme_name = theme

    def compose(self) -> ComposeResult:
        yield self._markdown(DOCUMENT)

    def on_mount(self) -> None:
        self.theme = self._theme_name


async def screenshot(markdown: type[Markdown], size: tuple[int, int], theme: str) -> str:
    """The screen as SVG: every cell's character, colors and attributes."""
    app = Page(markdown, theme)
    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.1)
        svg = app.export_screenshot()
    return re.sub(r"terminal-\d+", "terminal", svg)  # each export has its own id


@pytest.mark.parametrize("size", [(44, 40), (90, 30)])
@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_lists_draw_the_same_cells_as_textuals(size: tuple[int, int], theme: str) -> None:
    assert await screenshot(OneWidgetItems, size, theme) == await screenshot(Markdown, size, theme)


async def test_without_color_the_bullets_lose_theirs_as_textuals_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    ours = await screenshot(OneWidgetItems, (60, 40), "textual-dark")
    assert ours == await screenshot(Markdown, (60, 40), "textual-dark")


async def test_copying_a_list_keeps_its_bullets_and_numbers() -> None:
    texts = []
    for markdown in (OneWidgetItems, Markdown):
        app = Page(markdown, "textual-dark")
        async with app.run_test(size=(90, 40)) as pilot:
            await pilot.pause(0.1)
            app.query_one(markdown).text_select_all()
            await pilot.pause()
            texts.append(app.screen.get_selected_text() or "")
    ours, textuals = texts
    assert "• check the obvious cause" in ours.replace("  ", " ")
    assert "9. nine" in ours
    assert [line.split() for line in ours.splitlines() if line.strip()] == [
        line.split() for line in textuals.splitlines() if line.strip()
    ]


async def test_single_paragraph_items_are_one_widget_and_others_keep_textuals_layout() -> None:
    app = Page(OneWidgetItems, "textual-dark")
    async with app.run_test(size=(60, 40)) as pilot:
        await pilot.pause(0.1)
        flat = [item.symbol for item in app.query(ListItemParagraph)]
        # three bullets, three numbers (aligned as Textual does), the two inner bullets;
        # the items with two paragraphs, a nested list or code keep bullet + column.
        assert flat[:6] == ["• ", "• ", "• ", "  9. ", " 10. ", " 11. "]
        assert len(flat) == 8
        assert len(app.query("MarkdownBullet")) == 3
