"""A forced mode belongs to its pack: one setting per pack in the control file.

`{"mode": ..., "packs": {"support": "returns"}}`: a pack's entry wins, the file-wide `mode`
(a file from before settings were per pack) applies to packs without one. A window on
another pack is not affected, a piped REPL's `/mode` lasts one run, and the header and
`modes-tui mode` say where the setting in force comes from.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC
from pathlib import Path

import pytest

from modes_tui.cli import main
from modes_tui.core.control_setting import ControlReading
from modes_tui.core.errors import UnknownMode
from modes_tui.core.paths import Dirs, app_dirs
from modes_tui.llm.fake import ScriptedReply
from modes_tui.store.control import ControlFile, RunOnlySetting
from modes_tui.tui.app import ModesApp, build_app
from tests.support.cli_support import run_cli
from tests.support.pack_windows import SIZE, header, say, window
from tests.support.tui_support import started, until

DEFAULT = ("chat", "code", "reason", "shell", "write")
SUPPORT = ("escalate", "help", "orders", "returns")


def settings_in(path: Path) -> object:
    """The control file's settings, without the times they were made (`since`)."""
    data = json.loads(path.read_text())
    data.pop("since", None)
    return data


@pytest.fixture
def dirs() -> Dirs:
    return app_dirs()


def files(path: Path) -> tuple[ControlFile, ControlFile]:
    """The same control file as a default-pack window and a support-pack window see it."""
    return (
        ControlFile(path, modes=lambda: DEFAULT, pack="default"),
        ControlFile(path, modes=lambda: SUPPORT, pack="support"),
    )


# --------------------------------------------------------------------------- the file


def test_a_pack_setting_leaves_the_other_packs_alone(tmp_path: Path) -> None:
    default, support = files(tmp_path / "state.json")
    assert support.write("returns") == ControlReading("returns", source="pack")
    assert settings_in(support.path) == {"packs": {"support": "returns"}}
    assert default.read() == ControlReading("auto")  # no warning, nothing set for it
    default.write("code")
    assert settings_in(default.path) == {"packs": {"support": "returns", "default": "code"}}
    assert support.read() == ControlReading("returns", source="pack")
    assert default.read() == ControlReading("code", source="pack")


def test_an_old_single_setting_file_still_applies_to_every_pack(tmp_path: Path) -> None:
    default, support = files(tmp_path / "state.json")
    default.path.write_text('{"mode": "code"}\n')  # as modes-tui wrote it before
    assert default.read() == ControlReading("code", source="file")
    reading = support.read()  # as before: a name the pack lacks is auto, with the fix
    assert reading.mode == "auto"
    assert "mode 'code' is not in the active pack" in (reading.warning or "")
    assert "`modes-tui mode auto --pack support`" in (reading.warning or "")
    support.write("returns")  # the pack's own entry wins; the old setting is kept
    assert settings_in(default.path) == {
        "mode": "code",
        "packs": {"support": "returns"},
    }
    assert support.read() == ControlReading("returns", source="pack")
    assert default.read() == ControlReading("code", source="file")
    default.path.write_text('{"mode": "off"}')
    assert support.read() == ControlReading("off", source="file")


def test_a_bad_pack_entry_names_its_field_and_the_fix(tmp_path: Path) -> None:
    default, support = files(tmp_path / "state.json")
    default.path.write_text('{"packs": {"support": "code", "default": 3}}')
    reading = support.read()
    assert reading.mode == "auto" and reading.warning is not None
    assert "mode 'code' ('packs.support') is not in the active pack (auto, off, escalate" in (
        reading.warning
    )
    assert "'packs.default' is a JSON number, expected a string" in (default.read().warning or "")
    support.write("help")  # a write repairs its own entry and drops what cannot be kept
    assert settings_in(support.path) == {"packs": {"support": "help"}}


async def test_the_watcher_reports_only_its_own_packs_changes(tmp_path: Path) -> None:
    default, support = files(tmp_path / "state.json")
    default.poll_seconds = 0.02
    seen: asyncio.Queue[ControlReading] = asyncio.Queue()

    async def watch() -> None:
        async for reading in default.watch():
            await seen.put(reading)

    task = asyncio.create_task(watch())
    await asyncio.sleep(0.05)
    support.write("returns")
    support.write("orders")
    await asyncio.sleep(0.2)
    assert seen.empty()  # another pack's setting changed: nothing to show here
    default.write("shell")
    assert await asyncio.wait_for(seen.get(), 5) == ControlReading("shell", source="pack")
    task.cancel()


def test_a_run_only_setting_never_writes_the_file(tmp_path: Path) -> None:
    default, _ = files(tmp_path / "state.json")
    default.write("code")
    run = RunOnlySetting(default)
    assert run.read() == ControlReading("code", source="pack")  # the file's, until set
    assert run.write("shell") == ControlReading("shell", source="run")
    assert run.read().where == "this run only"
    with pytest.raises(UnknownMode):
        run.write("returns")
    assert settings_in(default.path) == {"packs": {"default": "code"}}


# --------------------------------------------------------------------------- the windows


async def test_forcing_a_mode_in_a_support_window_leaves_a_default_window_alone(
    tmp_path: Path,
) -> None:
    left, right = window("default", tmp_path), window("support", tmp_path)
    left.model.script(ScriptedReply("Hello."))
    try:
        async with (
            build_app(left.services, tz=UTC).run_test(size=SIZE) as default_pilot,
            build_app(right.services, tz=UTC).run_test(size=SIZE) as support_pilot,
        ):
            default_app, support_app = default_pilot.app, support_pilot.app
            assert isinstance(default_app, ModesApp) and isinstance(support_app, ModesApp)
            await until(default_pilot, lambda: default_app.conversation.engine is not None)
            await until(support_pilot, lambda: support_app.conversation.engine is not None)
            before = header(default_app)
            assert "setting auto" in before
            await say(support_pilot, "/mode returns")
            # the header also says since when (a write keeps the time)
            assert re.search(
                r"setting forced returns since \d\d:\d\d \(this pack\)", header(support_app)
            )
            # the default window's watcher polls every 0.2 s: give it several looks
            await default_pilot.pause(0.8)
            assert header(default_app) == before
            assert default_app.conversation.panel.warning is None
            await say(default_pilot, "hello there")
            record = default_app.conversation.records[-1]
            assert record.route is not None and record.route.decided_by == "classifier"
            assert record.warnings == ()  # no warning about 'returns'
            assert (record.setting, header(default_app).count("returns")) == ("auto", 0)
    finally:
        left.log.close()
        right.log.close()


async def test_the_header_says_where_the_setting_comes_from(tmp_path: Path) -> None:
    win = window("default", tmp_path)
    try:
        async with build_app(win.services, tz=UTC).run_test(size=SIZE) as pilot:
            app = await started(pilot)
            win.control.path.parent.mkdir(parents=True, exist_ok=True)
            win.control.path.write_text('{"mode": "code"}')  # an old file, from outside
            await until(pilot, lambda: "setting forced code (all packs)" in header(app))
            await say(pilot, "/mode shell")
            assert re.search(r"setting forced shell since \d\d:\d\d \(this pack\)", header(app))
            assert settings_in(win.control.path) == {
                "mode": "code",
                "packs": {"default": "shell"},
            }
    finally:
        win.log.close()


# --------------------------------------------------------------------------- the REPL and CLI


def test_mode_in_a_piped_repl_lasts_for_that_run_only(modes_home: Path) -> None:
    args = ("--model", "scripted/echo", "chat", "--plain", "--classifier", "keyword")
    first = run_cli("/mode shell\nhello there\n", *args, home=modes_home)
    assert first.returncode == 0, first.stderr
    assert "mode setting: shell for this run only" in first.stdout
    assert "[shell · by caller · forced]" in first.stdout
    assert not any(modes_home.rglob("state.json"))
    second = run_cli("hello there\n", *args, home=modes_home)
    routes = [line for line in second.stdout.splitlines() if line.startswith("[")]
    assert routes == [routes[0]] and routes[0].startswith("[chat · by classifier")


def test_mode_for_a_pack_sets_and_shows_that_pack_only(
    dirs: Dirs, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mode", "--pack", "support", "returns"]) == 0
    assert capsys.readouterr().out == (
        f"mode: returns for pack support (written to {dirs.control_file})\n"
        "  every turn goes to returns; `modes-tui mode auto --pack support` hands it back "
        "to the router\n"
    )
    assert main(["mode", "--pack", "support"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"mode: returns (this pack's setting, from {dirs.control_file})\n")
    assert "pack: support (" in out
    assert main(["mode"]) == 0  # the default pack: untouched, and no warning
    out = capsys.readouterr().out
    assert out.startswith(
        f"mode: auto (default: {dirs.control_file} has no setting for pack default)\n"
    )
    assert "warning" not in out
    assert main(["mode", "--pack", "support", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["mode"], data["scope"], data["pack"]) == ("returns", "pack", "support")


def test_mode_names_the_pack_and_its_modes_for_a_name_it_lacks(
    dirs: Dirs, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mode", "returns"]) == 1
    assert capsys.readouterr().err == (
        "modes-tui: unknown mode 'returns' in pack default; "
        "choose one of: auto, off, chat, code, reason, shell, write\n"
    )
    assert not dirs.control_file.exists()


def test_mode_reads_an_old_single_setting_file(
    dirs: Dirs, capsys: pytest.CaptureFixture[str]
) -> None:
    dirs.config.mkdir(parents=True)
    dirs.control_file.write_text('{"mode": "code"}')
    assert main(["mode"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"mode: code (the setting of all packs, from {dirs.control_file}; ")
    assert "warning" not in out
