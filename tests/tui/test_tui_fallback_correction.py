"""Correcting a turn to the fallback in the app: the picker marks the fallback as "none of
these", and the router learns a negative example from it (issue 21)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC
from pathlib import Path

import pytest
from textual.widgets import OptionList

from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.routing.router import REASON_BELOW
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.correct import CorrectScreen
from tests.conftest import PackWriter
from tests.support.tui_support import until
from tests.tui.test_tui_corrections import MODES, SIZE, Rig, correcting, say

ASKED = "feeding a pet python snake"
"""The hashing encoder puts it in code (the word "python"); the user meant no mode."""
ASKED_AGAIN = "my pet python snake needs feeding"


@pytest.fixture
def rig(tmp_path: Path, write_pack: PackWriter) -> Iterator[Rig]:
    pack = load_pack(
        profiles_dir=write_pack(
            router={"classifier": "embedding", "fallback": "chat", "below_confidence": 0.5},
            modes=MODES,
        )
    )
    rig = correcting(pack, tmp_path, fallback_is_negative=True)
    yield rig
    rig.log.close()


async def test_none_of_these_in_the_picker_teaches_the_router_to_fall_back(rig: Rig) -> None:
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await say(pilot, ASKED)
        first = app.conversation.records[0].route
        assert first is not None and (first.mode_name, first.decided_by) == ("code", "classifier")

        await pilot.press("ctrl+e")
        await until(pilot, lambda: isinstance(app.screen, CorrectScreen))
        picker = app.screen
        assert isinstance(picker, CorrectScreen)
        lines = [str(o.prompt) for o in picker.query_one("#correct-modes", OptionList).options]
        (fallback_line,) = [line for line in lines if line.split()[1] == "chat"]
        assert "fallback: none of these" in fallback_line
        await pilot.press(str(1 + [n for n, _ in picker.choices].index("chat")))
        await pilot.pause(0.05)
        await say(pilot, ASKED_AGAIN)

        (correction,) = rig.store.corrections()
        assert (correction.text, correction.routed_mode, correction.corrected_mode) == (
            ASKED,
            "code",
            "chat",
        )
        learned = app.conversation.records[1].route
        assert learned is not None
        assert (learned.mode_name, learned.decided_by, learned.reason) == (
            "chat",
            "fallback",
            REASON_BELOW,
        )
        assert learned.decision is not None
        assert "which no mode should take" in (learned.decision.reason or "")
