"""A window of the app on one pack, over the real engine, the real control file and a session
log in the test's MODES_TUI_HOME: what the one-shot and per-pack setting tests drive."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from modes_tui.core.packs.profiles import load_pack
from modes_tui.tui.app import ModesApp
from tests.support.tui_support import RealApp, real_app, until

SIZE = (120, 40)


Window = RealApp


def window(pack_name: str, cwd: Path) -> Window:
    """A window on `pack_name` as `modes-tui --pack NAME` builds it (keyword classifier,
    scripted model); close `log` when done."""
    return real_app(load_pack(pack_name), cwd, per_pack=True)


async def say(pilot: Pilot[None], text: str) -> None:
    """Type `text` into the prompt and send it; wait for the turn when it starts one."""
    app = pilot.app
    assert isinstance(app, ModesApp)
    count = len(app.conversation.records)
    app.conversation.prompt.value = text
    await pilot.press("enter")
    await pilot.pause(0.05)
    if len(app.conversation.records) > count or app.conversation.turns.running:
        await until(
            pilot,
            lambda: len(app.conversation.records) > count and not app.conversation.turns.running,
        )


def header(app: ModesApp) -> str:
    return app.conversation.header.render_text().plain
