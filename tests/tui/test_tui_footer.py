"""The footer: it follows the keys that apply, and mounts them again only when they change."""

from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.pilot import Pilot
from textual.widgets import Input
from textual.widgets._footer import FooterKey

from modes_tui.tui.footer import KeysFooter


class Editor(Input):
    """A field with a key of its own, shown in the footer while it has the focus."""

    BINDINGS: ClassVar = [Binding("ctrl+y", "yank", "Yank")]

    def action_yank(self) -> None:
        pass


class FooterApp(App[None]):
    BINDINGS: ClassVar = [Binding("ctrl+b", "routes", "Routes"), Binding("f1", "help", "Help")]

    def compose(self) -> ComposeResult:
        yield Input(id="one")
        yield Input(id="two")
        yield Editor(id="editor")
        yield KeysFooter()

    def action_routes(self) -> None:
        pass

    def action_help(self) -> None:
        pass


def keys(app: App[None]) -> list[FooterKey]:
    return [k for k in app.query(FooterKey) if not k.has_class("-command-palette")]


def descriptions(app: App[None]) -> list[str]:
    return [k.description for k in keys(app)]


async def settle(pilot: Pilot[None]) -> None:
    for _ in range(3):
        await pilot.pause()


async def test_moving_the_focus_between_fields_with_the_same_keys_keeps_the_footer() -> None:
    async with FooterApp().run_test(size=(100, 10)) as pilot:
        app = pilot.app
        app.query_one("#one").focus()
        await settle(pilot)
        assert descriptions(app) == ["Routes", "Help"]
        before = keys(app)
        app.query_one("#two").focus()
        await settle(pilot)
        after = keys(app)
        assert descriptions(app) == ["Routes", "Help"]
        assert all(a is b for a, b in zip(after, before, strict=True))  # not mounted again


async def test_the_footer_follows_keys_that_come_and_go_with_the_focus() -> None:
    async with FooterApp().run_test(size=(100, 10)) as pilot:
        app = pilot.app
        app.query_one("#one").focus()
        await settle(pilot)
        app.query_one("#editor").focus()
        await settle(pilot)
        assert "Yank" in descriptions(app)
        app.query_one("#two").focus()
        await settle(pilot)
        assert descriptions(app) == ["Routes", "Help"]


async def test_announcements_queued_at_start_mount_the_keys_once() -> None:
    """Several "bindings may have changed" announcements before the first recompose has
    run (as at start) still mount the row of keys only once."""
    async with FooterApp().run_test(size=(100, 10)) as pilot:
        app = pilot.app
        await settle(pilot)
        footer = app.query_one(KeysFooter)
        first = keys(app)
        for _ in range(3):
            footer.call_after_refresh(footer.recompose)  # what Textual's footer queues
        await settle(pilot)
        assert descriptions(app) == ["Routes", "Help"]
        assert all(a is b for a, b in zip(keys(app), first, strict=True))


async def test_the_app_mounts_its_footer_after_the_first_frame_in_the_bars_place() -> None:
    """The conversation draws an empty bar where the footer goes and swaps in the footer
    after the first frame: once started there is one footer, at the bottom line, listing
    the conversation's keys, and no bar left behind."""
    from modes_tui.tui.app import build_app
    from tests.support.tui_support import services, until

    async with build_app(services()).run_test(size=(120, 30)) as pilot:
        app = pilot.app
        await until(pilot, lambda: bool(app.query(FooterKey)))
        footers = list(app.screen.query(KeysFooter))
        assert len(footers) == 1 and footers[0].region.y == 29
        assert not app.screen.query("#footer-bar")
        assert "Routes" in descriptions(app) and "Why?" in descriptions(app)
