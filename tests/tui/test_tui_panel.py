"""The route panel on its own: what it lists, and that what it keeps for speed stays right."""

from __future__ import annotations

from datetime import UTC

from textual.app import App, ComposeResult
from textual.pilot import Pilot

from modes_tui.core.history.transcript import TurnTranscript
from modes_tui.tui.panel import RoutePanel
from tests.support.tui_support import route

MODES = ("chat", "code", "shell")


class PanelApp(App[None]):
    """Just the panel, 50 columns wide as in the app."""

    def compose(self) -> ComposeResult:
        yield RoutePanel(id="routes", tz=UTC)

    @property
    def panel(self) -> RoutePanel:
        return self.query_one(RoutePanel)


def records(count: int) -> list[TurnTranscript]:
    made = []
    for number in range(1, count + 1):
        record = TurnTranscript(number, f"question {number}")
        record.route = route(MODES[number % 3])
        made.append(record)
    return made


def shown_lines(panel: RoutePanel) -> list[str]:
    """The list's lines as drawn on the screen, top to bottom."""
    options = panel.options
    return [options.render_line(y).text.rstrip() for y in range(options.size.height)]


def card_head(panel: RoutePanel, number: int) -> str:
    """The first line of turn `number`'s card."""
    return next(line for line in shown_lines(panel) if line.startswith(f"#{number} "))


async def settle(pilot: Pilot[None]) -> None:
    await pilot.pause()
    await pilot.pause()


async def test_an_empty_panel_says_so_and_the_list_comes_with_the_first_decision() -> None:
    async with PanelApp().run_test(size=(60, 30)) as pilot:
        panel = pilot.app.panel
        assert not panel.query("#decisions")  # nothing to list: no list on the first frame
        assert panel.query_one("#panel-empty").display
        assert panel.highlighted_record() is None  # ctrl+e before any turn: nothing picked
        assert not panel.query("#decisions")
        panel.set_records(records(1))
        await settle(pilot)
        assert panel.options.option_count == 1
        assert not panel.query_one("#panel-empty").display
        assert shown_lines(panel)[0].startswith("#1 code")


async def test_hiding_and_showing_the_panel_keeps_every_card_and_the_cursor() -> None:
    async with PanelApp().run_test(size=(60, 30)) as pilot:
        panel = pilot.app.panel
        panel.set_records(records(40))
        await settle(pilot)
        panel.options.focus()
        panel.options.highlighted = 3
        await settle(pilot)
        before = shown_lines(panel)
        height = panel.options.virtual_size.height
        for _ in range(2):
            panel.display = False
            await settle(pilot)
            panel.display = True
            await settle(pilot)
        assert panel.options.highlighted == 3
        assert panel.options.virtual_size.height == height
        assert shown_lines(panel) == before
        panel.options.focus()  # hiding took the focus away; the cursor stayed
        await settle(pilot)
        assert panel.highlighted_record() is panel.entries[-4].record


async def test_cards_are_wrapped_again_when_the_panel_width_changes() -> None:
    async with PanelApp().run_test(size=(60, 30)) as pilot:
        panel = pilot.app.panel
        panel.set_records(records(40))
        await settle(pilot)
        wide = panel.options.virtual_size.height
        panel.styles.width = 24  # the bars and reasons no longer fit on one line each
        await settle(pilot)
        narrow = panel.options.virtual_size.height
        assert narrow > wide
        assert all(len(line) <= 24 for line in shown_lines(panel))
        panel.styles.width = 50
        await settle(pilot)
        assert panel.options.virtual_size.height == wide


async def test_a_new_decision_adds_its_card_on_top_and_keeps_the_others() -> None:
    async with PanelApp().run_test(size=(60, 30)) as pilot:
        panel = pilot.app.panel
        made = records(3)
        panel.set_records(made)
        await settle(pilot)
        older = list(panel.options.options)
        newest = TurnTranscript(4, "question 4")
        panel.decided(newest)  # routing: no decision yet
        await settle(pilot)
        assert shown_lines(panel)[0].startswith("#4 routing…")
        newest.route = route("shell")
        panel.decided(newest)
        await settle(pilot)
        assert panel.options.option_count == 4
        assert shown_lines(panel)[0].startswith("#4 shell")
        # The three older cards are the ones already drawn, not drawn again.
        assert all(a is b for a, b in zip(panel.options.options[1:], older, strict=True))


async def test_a_card_is_drawn_again_when_its_turn_changes() -> None:
    async with PanelApp().run_test(size=(60, 30)) as pilot:
        panel = pilot.app.panel
        made = records(2)
        panel.set_records(made)
        await settle(pilot)
        assert "edited" not in card_head(panel, 1)
        made[0].superseded_by = 2  # turn 1 was edited and sent again as turn 2
        panel.refresh_record(made[0])
        await settle(pilot)
        assert "edited → #2" in card_head(panel, 1)
        panel.set_records(made)  # and a later rebuild keeps the new card
        await settle(pilot)
        assert "edited → #2" in card_head(panel, 1)


async def drawn_reason(reason: str) -> list[str]:
    """The lines the panel draws for a decision with `reason`: its `  reason:` line and the
    indented lines that continue it."""
    record = TurnTranscript(1, "a question")
    record.route = route("chat", reason=reason)
    async with PanelApp().run_test(size=(60, 30)) as pilot:
        panel = pilot.app.panel
        panel.set_records([record])
        await settle(pilot)
        lines = shown_lines(panel)
    start = next(i for i, line in enumerate(lines) if line.startswith("  reason: "))
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith("    "):
            break
        block.append(line)
    return block


async def test_a_long_reason_wraps_under_its_label_not_back_to_the_cards_edge() -> None:
    reason = (
        "like the example 'What's the capital of Australia?' (0.53), and the words of a long "
        "reason go on past one line of the panel"
    )
    block = await drawn_reason(reason)
    assert len(block) >= 3  # the reason takes several lines, each indented under its label
    assert " ".join(line.strip() for line in block) == f"reason: {reason}"
    assert all(len(line) <= 46 for line in block)


async def test_a_reason_in_wide_characters_wraps_by_cells_and_loses_none() -> None:
    from rich.cells import cell_len

    asked = "把构建文件夹清理干净然后重新编译整个项目并运行所有测试"
    reason = f"like your correction '{asked}' -> shell (0.91)"
    block = await drawn_reason(reason)
    assert len(block) == 3
    assert all(cell_len(line) <= 46 for line in block)
    assert "".join(line.strip() for line in block).replace(" ", "") == (
        f"reason: {reason}".replace(" ", "")
    )
