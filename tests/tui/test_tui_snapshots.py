"""SVG snapshots of the main screen, the route panel, the inspector and the replay screen.

Deterministic: scripted event streams with fixed route times, UTC on screen, fixed size.
Update with `pytest tests/test_tui_snapshots.py --snapshot-update` after checking the looks.
"""

from __future__ import annotations

import asyncio
from datetime import UTC
from typing import Any

from textual.pilot import Pilot

from modes_tui.frontend.lines import Send
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.turn_queue import Sent
from tests.support.tui_support import (
    DEMO_MESSAGES,
    ScriptEngine,
    demo_scripts,
    editor_in,
    rerouted,
    services,
    tool_card_script,
)
from tests.tui.test_tui_app import FakeSessions, replayed

SIZE = (130, 42)


def demo_app(**extra: Any) -> ModesApp:
    engine = ScriptEngine().script(*demo_scripts())
    return build_app(services(engine, **extra), tz=UTC)


async def settle(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, ModesApp)
    await editor_in(pilot)
    app.conversation.prompt.cursor_blink = False  # a blinking cursor would make the picture flaky
    app.conversation.status.animated = False
    for _ in range(200):
        if app.conversation.engine is not None and not app.conversation.turns.running:
            break
        await asyncio.sleep(0.02)
    await pilot.pause(0.1)


async def converse(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, ModesApp)
    await settle(pilot)
    for message in DEMO_MESSAGES:
        app.conversation.prompt.value = message
        await pilot.press("enter")
        await pilot.pause(0.05)
        await settle(pilot)
    await pilot.pause(0.2)


def test_main_screen_mid_conversation(snap_compare: Any) -> None:
    assert snap_compare(demo_app(), terminal_size=SIZE, run_before=converse)


def test_main_screen_at_150x45(snap_compare: Any) -> None:
    assert snap_compare(demo_app(), terminal_size=(150, 45), run_before=converse)


def test_main_screen_at_80x24_with_the_route_strip(snap_compare: Any) -> None:
    assert snap_compare(demo_app(), terminal_size=(80, 24), run_before=converse)


def test_route_panel_over_the_chat_at_80x24(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await converse(pilot)
        await pilot.press("ctrl+b")
        await pilot.pause(0.2)

    assert snap_compare(demo_app(), terminal_size=(80, 24), run_before=run_before)


def test_multi_line_prompt_and_waiting_messages_at_150x45(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await settle(pilot)
        for line in ("and how do I test it?", "also: a second thought\nthat spans two lines"):
            await app.conversation.pending.add(Sent(line, Send(line)))
        app.conversation.prompt.value = (
            'Traceback (most recent call last):\n  File "parse.py", line 3\nNameError: x'
        )
        await pilot.pause(0.2)

    assert snap_compare(demo_app(), terminal_size=(150, 45), run_before=run_before)


def test_route_panel_with_a_forced_mode(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await converse(pilot)
        await pilot.press("f4")  # force `reason`
        app = pilot.app
        assert isinstance(app, ModesApp)
        app.conversation.panel.options.focus()
        app.conversation.panel.options.highlighted = 0
        await pilot.pause(0.1)

    assert snap_compare(demo_app(), terminal_size=SIZE, run_before=run_before)


def test_inspector(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await converse(pilot)
        app = pilot.app
        assert isinstance(app, ModesApp)
        app.conversation.panel.options.focus()
        app.conversation.panel.options.highlighted = 1  # the code turn, with tools and two rounds
        await pilot.press("enter")
        await pilot.pause(0.3)

    assert snap_compare(demo_app(), terminal_size=SIZE, run_before=run_before)


def test_replay_screen(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        app = pilot.app
        assert isinstance(app, ModesApp)
        app.conversation.prompt.value = "/replay 20260314-092653-abcd"
        await pilot.press("enter")
        await rerouted(pilot)

    app = demo_app(sessions=FakeSessions(replayed()))
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_help_overlay(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await converse(pilot)
        await pilot.press("f1")
        await pilot.pause(0.3)

    assert snap_compare(demo_app(), terminal_size=SIZE, run_before=run_before)


def test_tab_to_the_route_panel_selects_the_newest_decision(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await converse(pilot)
        await pilot.press("tab", "tab")
        await pilot.pause(0.2)

    assert snap_compare(demo_app(), terminal_size=SIZE, run_before=run_before)


def test_a_command_and_its_output_in_a_tool_card(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await settle(pilot)
        app.conversation.prompt.value = "which tests are there?"
        await pilot.press("enter")
        await pilot.pause(0.05)
        await settle(pilot)
        await pilot.pause(0.2)

    engine = ScriptEngine().script(tool_card_script())
    app = build_app(services(engine), tz=UTC)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
