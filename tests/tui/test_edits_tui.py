"""Modes that change files, in the app (issue 23): the diff confirmation, armed like every
confirmation, hostile file content shown inert, the diff in the chat, and `/undo`.

The app runs the real engine (ScriptedModel, keyword router) in a temporary project, so
"not written" means the file on disk is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, Collapsible, Static

from modes_tui.core.packs.profiles import load_pack
from modes_tui.llm.fake import ScriptedReply
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.confirm import ConfirmToolScreen, DialogConfirmer
from modes_tui.tui.inspector import InspectorScreen
from modes_tui.tui.turn_view import ToolCallView
from tests.conftest import PackWriter
from tests.support.tui_support import RealApp, all_text, plain, real_app, started, until
from tests.tui.test_confirm_arming import TYPED, FakeClock

SIZE = (120, 40)
MAY_DO = "What this mode may do"
FAILING = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
FIX_CALL = ("edit_file", {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"})


@dataclass
class Rig:
    app: RealApp
    root: Path
    clock: FakeClock


@pytest.fixture
def rig(tmp_path: Path, write_pack: PackWriter) -> Iterator[Rig]:
    root = tmp_path / "project"
    root.mkdir()
    (root / "calc.py").write_text(FAILING)
    modes = {
        "chat": {"description": "Everyday chat.", "keywords": ["hello"]},
        "code": {
            "description": "Code.",
            "keywords": ["fix", "title"],
            "tools": ["read_file", "write_file", "edit_file"],
        },
    }
    pack = load_pack(profiles_dir=write_pack(modes=modes))
    clock = FakeClock()

    def on_clock(confirm: Any) -> None:
        assert isinstance(confirm, DialogConfirmer)
        confirm.clock = clock

    app = real_app(pack, root, on_confirm=on_clock)
    yield Rig(app, root, clock)
    app.log.close()


async def send(pilot: Pilot[None], text: str) -> ModesApp:
    app = await started(pilot)
    app.conversation.prompt.value = text
    await pilot.press("enter")
    return app


async def diff_dialog(pilot: Pilot[None]) -> ConfirmToolScreen:
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, ConfirmToolScreen))
    screen = app.screen
    assert isinstance(screen, ConfirmToolScreen)
    return screen


async def test_typing_as_the_diff_dialog_opens_writes_nothing_then_y_applies_the_shown_diff(
    rig: Rig,
) -> None:
    rig.app.model.script(ScriptedReply("Fixing.", tool_calls=[FIX_CALL]), ScriptedReply("Fixed."))
    async with build_app(rig.app.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await send(pilot, "fix calc.py")
        screen = await diff_dialog(pilot)
        await pilot.press(*TYPED, "enter")  # the user kept typing as it opened

        shown = plain(screen.query_one("#confirm-diff", Static))
        assert "-    return a - b" in shown and "+    return a + b" in shown
        may = app.screen_stack[0].query_one("#panel-policy", Static)  # the route panel
        assert may.display and plain(may).startswith(
            "code may run: read_file ask: write_file edit_file · never: .env .env.* **/*.pem"
        )
        assert "change calc.py (+1 -1)" in plain(screen.query_one("#confirm-title", Static))
        assert screen.is_attached and not screen.armed  # no key of the sentence answered it
        assert (rig.root / "calc.py").read_text() == FAILING
        assert app.conversation.prompt.value == TYPED

        rig.clock.pass_arming()
        await until(pilot, lambda: screen.armed)
        # a change is applied, not run: the button and the hint say so
        assert str(screen.query_one("#run", Button).label) == "Apply (y)"
        assert (
            plain(screen.query_one("#answer-hint", Static)).strip()
            == "y applies it · n or Esc refuses"
        )
        await pilot.press("y")
        await until(pilot, lambda: (rig.root / "calc.py").read_text() == FIXED)
        await until(pilot, lambda: "Fixed." in all_text(app.query("AnswerSegment")))
        in_chat = all_text(app.query(ToolCallView))
        assert "change calc.py (+1 -1)" in in_chat and "+    return a + b" in in_chat

        app.conversation.prompt.value = "/why"  # the inspector says what the mode may do
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        [policy] = [c for c in app.screen.query(Collapsible) if c.title == MAY_DO]
        shown = all_text(policy.query(Static))
        assert "edit_file: ask (default)" in shown and "read_file: allow (default)" in shown
        assert "denied: .env, .env.*, **/*.pem" in shown
        await pilot.press("escape")

        app.conversation.prompt.value = "/undo"
        await pilot.press("enter")
        await until(pilot, lambda: (rig.root / "calc.py").read_text() == FAILING)
        await until(pilot, lambda: "restored calc.py" in all_text(app.query("Note, Static")))


async def test_n_refuses_the_write_and_the_file_stays_as_it_was(rig: Rig) -> None:
    rig.app.model.script(ScriptedReply("", tool_calls=[FIX_CALL]), ScriptedReply("As you wish."))
    async with build_app(rig.app.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await send(pilot, "fix calc.py")
        screen = await diff_dialog(pilot)
        rig.clock.pass_arming()
        await until(pilot, lambda: screen.armed)
        await pilot.press("n")
        await until(pilot, lambda: "As you wish." in all_text(app.query("AnswerSegment")))
        assert (rig.root / "calc.py").read_text() == FAILING
        assert "cancelled" in all_text(app.query(ToolCallView))


async def test_the_panel_lists_only_the_tools_the_model_is_offered(rig: Rig) -> None:
    # A model that cannot call tools gets none: the panel must not promise the mode's list.
    from modes_tui.core.model import ModelCapabilities

    rig.app.model.capable_of = {"scripted/demo": ModelCapabilities(tools=False, reasoning=False)}
    rig.app.model.script(ScriptedReply("I can only talk about calc.py."))
    async with build_app(rig.app.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await send(pilot, "fix calc.py")
        await until(pilot, lambda: "only talk" in all_text(app.query("AnswerSegment")))
        may = app.query_one("#panel-policy", Static)
        assert not may.display  # hidden: no tools this turn
        assert [tool.name for tool in rig.app.model.requests[0].tools] == []


async def test_hostile_text_in_the_diff_is_shown_inert(rig: Rig) -> None:
    hostile = "# title\x1b]0;pwned\x07\n\x1b[2J\x1b[31mred\u202eevil\n"
    rig.app.model.script(
        ScriptedReply("", tool_calls=[("write_file", {"path": "calc.py", "content": hostile})]),
        ScriptedReply("ok"),
    )
    async with build_app(rig.app.services, tz=UTC).run_test(size=SIZE) as pilot:
        await send(pilot, "fix the title")
        screen = await diff_dialog(pilot)
        shown = plain(screen.query_one("#confirm-diff", Static))
        for raw in ("\x1b", "\x07", "\u202e"):
            assert raw not in shown
        assert "+# title\\x1b]0;pwned\\x07" in shown
        assert "+\\x1b[2J\\x1b[31mred\\u202eevil" in shown
        assert (rig.root / "calc.py").read_text() == FAILING


async def test_undo_asks_before_overwriting_a_file_changed_since_and_no_keeps_it(
    rig: Rig,
) -> None:
    from modes_tui.tui.confirm import QuestionScreen

    rig.app.model.script(ScriptedReply("", tool_calls=[FIX_CALL]), ScriptedReply("Fixed."))
    async with build_app(rig.app.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await send(pilot, "fix calc.py")
        screen = await diff_dialog(pilot)
        rig.clock.pass_arming()
        await until(pilot, lambda: screen.armed)
        await pilot.press("y")
        await until(pilot, lambda: "Fixed." in all_text(app.query("AnswerSegment")))
        mine = FIXED + "# my own line\n"
        (rig.root / "calc.py").write_text(mine)  # the user edits it in their editor

        app.conversation.prompt.value = "/undo"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
        question = app.screen
        assert "calc.py" in plain(question.query_one("#question-text", Static))
        rig.clock.pass_arming()
        await until(pilot, lambda: getattr(question, "armed", False))
        await pilot.press("n")
        await until(pilot, lambda: "kept calc.py" in all_text(app.query("Note, Static")))
        assert (rig.root / "calc.py").read_text() == mine
