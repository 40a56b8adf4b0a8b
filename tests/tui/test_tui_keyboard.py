"""Everything by keyboard, and help over the conversation, not in it (issue 30, items 4, 5).

Tab moves prompt -> chat -> route panel (the newest decision selected) -> prompt; Enter on a
decision opens the inspector; Esc goes back to the prompt; after a click anywhere, what is
typed lands in the prompt. F1 (or `/help`) opens the help overlay; Esc or F1 closes it, and
the chat is as it was.
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList

from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.help import HelpScreen
from modes_tui.tui.inspector import InspectorScreen
from tests.support.tui_support import ScriptEngine, answer_events, services, until

SIZE = (130, 36)


def screen_text(app: Any) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def two_turns(pilot: Pilot[None]) -> ModesApp:
    app = pilot.app
    assert isinstance(app, ModesApp)
    await until(pilot, lambda: app.conversation.engine is not None)
    for text in ("first question", "second question"):
        app.conversation.prompt.value = text
        await pilot.press("enter")
        await until(pilot, lambda: not app.conversation.turns.running)
    await until(pilot, lambda: len(app.conversation.panel.entries) == 2)
    return app


def engine() -> ScriptEngine:
    return ScriptEngine().script(
        answer_events("one answer", "chat", "first question"),
        answer_events("another answer", "chat", "second question"),
    )


async def test_f1_shows_help_over_the_chat_and_esc_or_f1_takes_it_away() -> None:
    async with build_app(services(engine()), tz=UTC).run_test(size=SIZE) as pilot:
        app = await two_turns(pilot)
        chat_before = len(app.conversation.chat.children)
        for close in ("escape", "f1"):
            await pilot.press("f1")
            await until(pilot, lambda: isinstance(app.screen, HelpScreen))
            await pilot.pause(0.1)
            shown = screen_text(app)
            assert "Help · keys and commands" in shown and "esc or f1 closes" in shown
            assert "shift+tab" in shown and "cycle: auto → each mode → auto" in shown
            await pilot.press(close)
            await until(pilot, lambda: app.screen is app.conversation)
            assert "Help · keys and commands" not in screen_text(app)
        assert len(app.conversation.chat.children) == chat_before  # nothing added to the chat
        assert app.conversation.focused is app.conversation.prompt


async def test_a_word_typed_over_the_help_closes_it_and_lands_in_the_prompt() -> None:
    # the help says "any letter: typed into the prompt, wherever the focus is"; over the
    # help the letters were dropped (and q closed it)
    async with build_app(services(engine()), tz=UTC).run_test(size=SIZE) as pilot:
        app = await two_turns(pilot)
        app.conversation.prompt.value = "tell me "
        app.conversation.prompt.move_cursor((0, 8))
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press(*"quick")
        await until(pilot, lambda: app.screen is app.conversation)
        assert app.conversation.prompt.value == "tell me quick"
        assert app.focused is app.conversation.prompt


async def test_slash_help_opens_the_overlay_too() -> None:
    async with build_app(services(engine()), tz=UTC).run_test(size=SIZE) as pilot:
        app = await two_turns(pilot)
        app.conversation.prompt.value = "/help"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.conversation)
        assert not app.conversation.chat.query("SystemNote")


async def test_tab_walks_prompt_chat_panel_and_enter_opens_the_newest_decision() -> None:
    async with build_app(services(engine()), tz=UTC).run_test(size=SIZE) as pilot:
        app = await two_turns(pilot)
        conversation = app.conversation
        assert app.focused is conversation.prompt
        assert "esc Prompt" not in screen_text(app).splitlines()[-1]  # already there
        await pilot.press("tab")
        assert app.focused is conversation.chat
        await pilot.press("tab")
        options = conversation.panel.query_one(OptionList)
        assert app.focused is options
        assert conversation.panel.highlighted_record() is conversation.records[-1]
        await until(pilot, lambda: "⏎ Inspect" in screen_text(app).splitlines()[-1])
        footer = screen_text(app).splitlines()[-1]
        assert "⏎ Inspect" in footer and "esc Prompt" in footer  # the keys that work here
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await pilot.pause(0.1)
        assert "second question" in screen_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is conversation)
        assert app.focused is conversation.prompt
        await pilot.press("tab", "tab")  # the cursor is where it was
        assert conversation.panel.highlighted_record() is conversation.records[-1]
        await pilot.press("down")  # the older decision, below it
        assert conversation.panel.highlighted_record() is conversation.records[0]
        await pilot.press("escape")
        assert app.focused is conversation.prompt


@pytest.mark.parametrize("where", ["#chat", "#routes", "#header", "#status"])
async def test_keys_typed_after_a_click_reach_the_prompt(where: str) -> None:
    async with build_app(services(engine()), tz=UTC).run_test(size=SIZE) as pilot:
        app = await two_turns(pilot)
        await pilot.click(where)
        await pilot.press(*"hello")
        assert app.conversation.prompt.value == "hello"
        assert app.focused is app.conversation.prompt


async def test_tab_skips_the_route_panel_while_it_is_hidden() -> None:
    async with build_app(services(engine()), tz=UTC).run_test(size=SIZE) as pilot:
        app = await two_turns(pilot)
        await pilot.press("ctrl+b")  # hide it
        await until(pilot, lambda: not app.conversation.panel.display)
        await pilot.press("tab")
        assert app.focused is app.conversation.chat
        await pilot.press("tab")
        assert app.focused is app.conversation.prompt
