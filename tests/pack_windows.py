"""A window of the app on one pack, over the real engine, the real control file and a session
log in the test's MODES_TUI_HOME: what the one-shot and per-pack setting tests drive."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.pilot import Pilot

from modes_tui.core.engine import Engine
from modes_tui.core.paths import app_dirs
from modes_tui.core.profiles import load_pack
from modes_tui.llm.fake import ScriptedModel
from modes_tui.runtime import build_engine
from modes_tui.store.control import ControlFile
from modes_tui.store.session_log import SessionLog
from modes_tui.tui.app import ModesApp
from modes_tui.tui.services import AppServices, Confirmer
from tests.tui_support import until

SIZE = (120, 40)


@dataclass
class Window:
    """One window's parts, kept for assertions."""

    services: AppServices
    model: ScriptedModel
    control: ControlFile
    log: SessionLog


def window(pack_name: str, cwd: Path) -> Window:
    """A window on `pack_name` as `modes-tui --pack NAME` builds it (keyword classifier,
    scripted model); close `log` when done."""
    pack = load_pack(pack_name)
    dirs = app_dirs()
    control = ControlFile(dirs.control_file, modes=lambda: pack.names, pack=pack.name)
    model = ScriptedModel()
    log = SessionLog.create(dirs, pack=pack.name, model="scripted/demo")

    def engine(confirm: Confirmer) -> Engine:
        return build_engine(
            pack=pack,
            model_id="scripted/demo",
            classifier="keyword",
            session=log,
            control=control,
            confirm=confirm,
            dirs=dirs,
            cwd=cwd,
            offline=True,
            model=model,
        )

    services = AppServices(
        pack=pack,
        model="scripted/demo",
        control=control,
        build_engine=engine,
        session_id=lambda: log.id,
    )
    return Window(services, model, control, log)


async def say(pilot: Pilot[None], text: str) -> None:
    """Type `text` into the prompt and send it; wait for the turn when it starts one."""
    app = pilot.app
    assert isinstance(app, ModesApp)
    count = len(app.records)
    app.prompt.value = text
    await pilot.press("enter")
    await pilot.pause(0.05)
    if len(app.records) > count or app._turn_running:
        await until(pilot, lambda: len(app.records) > count and not app._turn_running)


def header(app: ModesApp) -> str:
    return app.header.render_text().plain
