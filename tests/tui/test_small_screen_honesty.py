"""Small-screen and state honesty (issue 30 item 8): the first-start hint never covers the
prompt; cut text ends with "…"; replay follows chat's layout at 80x24; a forced mode says
since when and how to hand it back."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Static
from textual.widgets._toast import Toast

from modes_tui.core.control_setting import ControlReading
from modes_tui.core.paths import app_dirs
from modes_tui.store.control import ControlFile
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.panel import RoutePanel
from modes_tui.tui.replay import ReplayScreen
from modes_tui.tui.status import forced_line, since_label
from tests.support.tui_support import (
    ScriptEngine,
    demo_scripts,
    editor_in,
    plain,
    rerouted,
    services,
    started,
    until,
)
from tests.tui.test_tui_app import FakeSessions, replayed

NOW = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)
HINT = (
    "no config.yaml yet: the embedded offline demo model answers. `modes-tui init` finds "
    "your providers (API keys, Ollama, LM Studio, llama.cpp) and writes one"
)


# --------------------------------------------------------------------------- since when


def test_since_is_said_as_a_person_says_it() -> None:
    def said(delta: timedelta) -> str:
        return since_label((NOW - delta).isoformat(), UTC, NOW)

    assert said(timedelta(hours=1)) == "08:30"
    assert said(timedelta(days=1, hours=-5)) == "yesterday 14:30"
    assert said(timedelta(days=3)) == "Tue 09:30"
    assert said(timedelta(days=30)) == "Nov 4 09:30"
    assert said(timedelta(days=400)) == "2025-10-30 09:30"
    assert since_label("not a time", UTC, NOW) == "not a time"


def test_the_forced_line_says_what_since_when_and_how_to_hand_it_back() -> None:
    yesterday = (NOW - timedelta(days=1, hours=-5)).isoformat()
    reading = ControlReading("code", source="pack", since=yesterday)
    line = forced_line(reading, UTC)
    assert line is not None and line.startswith("forced: code since ")
    assert line.endswith(" — ctrl+g or /mode auto to hand it back")
    assert forced_line(ControlReading("auto")) is None
    assert forced_line(ControlReading("code")) == (
        "forced: code — ctrl+g or /mode auto to hand it back"
    )


def test_the_control_file_keeps_when_a_mode_was_forced(tmp_path: Path) -> None:
    file = ControlFile(tmp_path / "state.json", pack="default")
    assert file.read().since is None  # nothing set: nothing to date
    before = datetime.now(UTC).replace(microsecond=0)
    file.write("code")
    since = file.read().since
    assert since is not None and datetime.fromisoformat(since) >= before
    data = json.loads(file.path.read_text())
    assert data["packs"] == {"default": "code"}
    assert data["since"] == {"packs": {"default": since}}
    # forcing the same mode again keeps the first time: it has been forced since then
    data["since"]["packs"]["default"] = "2026-12-01T10:00:00+00:00"
    file.path.write_text(json.dumps(data))
    file.write("code")
    assert file.read().since == "2026-12-01T10:00:00+00:00"
    file.write("shell")
    assert file.read().since != "2026-12-01T10:00:00+00:00"


def test_an_old_file_or_a_broken_time_still_gives_the_setting(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text('{"mode": "code"}')
    assert ControlFile(path).read() == ControlReading("code", source="file")
    path.write_text('{"mode": "code", "since": {"mode": "last tuesday"}}')
    reading = ControlFile(path).read()
    assert (reading.mode, reading.warning, reading.since) == ("code", None, None)
    path.write_text('{"mode": "code", "since": 12}')
    assert ControlFile(path).read().mode == "code"


async def test_a_mode_forced_yesterday_says_so_in_the_header_and_the_status_line() -> None:
    dirs = app_dirs()
    dirs.control_file.parent.mkdir(parents=True, exist_ok=True)
    yesterday = (datetime.now(UTC) - timedelta(days=1)).replace(hour=14, minute=2, second=0)
    dirs.control_file.write_text(
        json.dumps({"mode": "code", "since": {"mode": yesterday.isoformat()}})
    )
    engine = ScriptEngine().script(*demo_scripts())
    the_services = services(engine)
    the_services.control = ControlFile(dirs.control_file)  # type: ignore[assignment]
    app = build_app(the_services, tz=UTC)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await until(pilot, lambda: not app.conversation.status.has_class("-busy"))
        header = app.conversation.header.render_text().plain
        assert "forced code since yesterday 14:02" in header
        status = plain(app.conversation.status)
        assert status.strip() == (
            "forced: code since yesterday 14:02 — ctrl+g or /mode auto to hand it back"
        )
        await pilot.press("ctrl+g")  # handed back: the line goes
        await until(pilot, lambda: "forced" not in app.conversation.header.render_text().plain)


# --------------------------------------------------------------------------- the screen


async def test_the_first_start_hint_never_covers_the_prompt() -> None:
    app = build_app(services(ScriptEngine(), warnings=[HINT]), tz=UTC)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await started(pilot)
        await until(pilot, lambda: bool(app.screen.query(Toast)))
        await pilot.pause(0.3)
        prompt = app.conversation.prompt.region
        for toast in app.screen.query(Toast):
            assert not toast.region.overlaps(prompt), (toast.region, prompt)


async def test_a_status_too_long_for_the_line_ends_with_an_ellipsis() -> None:
    app = build_app(services(ScriptEngine()), tz=UTC)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        app.conversation.status.idle("a very long status line " * 8)
        await pilot.pause(0.1)
        line = app.conversation.status.render_line(0).text.rstrip()
        assert line.endswith("…"), line
        assert len(line) <= 80


async def test_replay_at_80x24_follows_the_chat_layout() -> None:
    app = build_app(services(ScriptEngine(), sessions=FakeSessions(replayed())), tz=UTC)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        app.conversation.prompt.value = "/replay 20260314-092653-abcd"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.pause(0.2)
        screen = app.screen
        panel = screen.query_one(RoutePanel)
        assert screen.has_class("-narrow")
        assert not panel.display  # hidden, as on the chat screen at this width
        chat = screen.query_one("#replay-chat")
        assert chat.region.width == 80
        await pilot.press("ctrl+b")  # shown over the chat, the chat keeps its width
        await pilot.pause(0.1)
        assert panel.display and panel.has_class("-overlay")
        assert chat.region.width == 80
        assert isinstance(app, ModesApp)
        assert [s for s in screen.query(Static) if s.id == "replay-title"]


# --------------------------------------------------------------------------- looks


def forced_yesterday_app() -> ModesApp:
    dirs = app_dirs()
    dirs.control_file.parent.mkdir(parents=True, exist_ok=True)
    yesterday = (datetime.now(UTC) - timedelta(days=1)).replace(hour=14, minute=2, second=0)
    dirs.control_file.write_text(
        json.dumps(
            {"packs": {"default": "code"}, "since": {"packs": {"default": yesterday.isoformat()}}}
        )
    )
    the_services = services(ScriptEngine())
    the_services.control = ControlFile(dirs.control_file, pack="default")  # type: ignore[assignment]
    return build_app(the_services, tz=UTC)


def test_forced_since_at_80x24_snapshot(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await editor_in(pilot)
        app.conversation.prompt.cursor_blink = False
        app.conversation.status.animated = False
        await started(pilot)
        await until(pilot, lambda: "forced:" in plain(app.conversation.status))
        await pilot.pause(0.2)

    assert snap_compare(forced_yesterday_app(), terminal_size=(80, 24), run_before=run_before)


def test_replay_at_80x24_snapshot(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await editor_in(pilot)
        app.conversation.prompt.cursor_blink = False
        app.conversation.status.animated = False
        await started(pilot)
        app.conversation.prompt.value = "/replay 20260314-092653-abcd"
        await pilot.press("enter")
        await rerouted(pilot)

    app = build_app(services(ScriptEngine(), sessions=FakeSessions(replayed())), tz=UTC)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
