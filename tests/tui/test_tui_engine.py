"""The app over the real engine: ScriptedModel answers, the keyword classifier routes, the
control file and the session log are the store's. What the user sees, end to end."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC
from pathlib import Path

import pytest
from textual.pilot import Pilot

from modes_tui.core.errors import ProviderError
from modes_tui.core.packs.profiles import load_pack
from modes_tui.llm.fake import ScriptedReply
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.confirm import ConfirmToolScreen
from modes_tui.tui.inspector import InspectorScreen
from modes_tui.tui.replay import ReplayScreen
from modes_tui.tui.turn_view import AnswerSegment, ToolCallView, TurnNote
from tests.support.tui_support import (
    RealApp,
    all_text,
    answer_dialog,
    plain,
    real_app,
    started,
    until,
)

SIZE = (120, 40)


Rig = RealApp


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    rig = real_app(load_pack("default"), tmp_path, sessions=True)
    yield rig
    rig.log.close()


async def say(pilot: Pilot[None], text: str, *, wait: bool = True) -> None:
    app = pilot.app
    assert isinstance(app, ModesApp)
    count = len(app.conversation.records)
    app.conversation.prompt.value = text
    await pilot.press("enter")
    if text.startswith("/"):
        await pilot.pause(0.05)
    elif wait:
        await until(
            pilot,
            lambda: len(app.conversation.records) > count and not app.conversation.turns.running,
        )


async def enter_shell(pilot: Pilot[None], app: ModesApp, *, answer: str) -> None:
    """Answer the question the shell mode asks before the router enters it; wait for the turn."""
    from modes_tui.tui.confirm import QuestionScreen

    await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
    await answer_dialog(pilot, answer)
    await until(pilot, lambda: not app.conversation.turns.running)


async def test_the_router_asks_before_entering_shell_and_a_no_keeps_the_turn_in_chat(
    rig: Rig,
) -> None:
    from modes_tui.tui.confirm import QuestionScreen

    rig.model.script(ScriptedReply("Here is how, in words."))
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        await say(pilot, "git rebase went wrong", wait=False)
        await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
        question = app.screen
        assert isinstance(question, QuestionScreen)
        assert plain(question.query_one("#question-title")).strip() == "Enter shell?"
        await answer_dialog(pilot, "n")
        await until(pilot, lambda: not app.conversation.turns.running)
        entry = app.conversation.panel.entries[-1]
        assert entry.route is not None
        assert (entry.route.mode_name, entry.route.decided_by) == ("chat", "fallback")
        assert entry.route.reason == "Entering shell declined (auto_enter: confirm)"
        assert "mode chat" in header(app)
        assert "Entering shell declined" in panel_text(app)


def header(app: ModesApp) -> str:
    return app.conversation.header.render_text().plain


def panel_text(app: ModesApp) -> str:
    return "\n".join(
        str(app.conversation.panel.options.get_option_at_index(i).prompt) for i in range(1)
    )


async def test_a_message_is_routed_streamed_and_shown_in_the_panel(rig: Rig) -> None:
    rig.model.script(ScriptedReply("Run it under `gdb` and type `bt`.\n\n- build with -g\n"))
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        await say(pilot, "my python script segfaults")
        segment = app.conversation.chat.query_one(AnswerSegment)
        assert segment.source.startswith("Run it under `gdb`")
        assert "→ code" in all_text(app.conversation.chat.query(".route"))
        entry = app.conversation.panel.entries[-1]
        assert entry.route is not None and entry.route.mode_name == "code"
        assert entry.route.decided_by == "classifier"
        assert "#1 code" in panel_text(app) and "keywords:" in panel_text(app)
        assert "mode code" in header(app)
        assert len(rig.model.requests) == 1


async def test_forcing_by_key_and_by_command_reaches_the_engine(rig: Rig) -> None:
    rig.model.script(ScriptedReply("Drafted."), ScriptedReply("Computed."))
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        await pilot.press("f6")  # write: fifth mode of the default pack
        await until(pilot, lambda: "forced write" in header(app))
        assert rig.control.read().mode == "write"
        await say(pilot, "my python script segfaults")
        route = app.conversation.panel.entries[-1].route
        assert route is not None and route.mode_name == "write" and route.decided_by == "caller"
        assert "forced" in panel_text(app)
        await say(pilot, "/mode reason")
        await until(pilot, lambda: "forced reason" in header(app))
        await say(pilot, "hello there")
        route = app.conversation.panel.entries[-1].route
        assert route is not None and route.mode_name == "reason"
        await pilot.press("shift+tab")  # reason -> shell
        await until(pilot, lambda: "forced shell" in header(app))
        assert rig.control.read().mode == "shell"


async def test_an_external_control_file_edit_changes_header_and_next_turn(rig: Rig) -> None:
    rig.model.script(ScriptedReply("Off we go."))
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        rig.control.path.parent.mkdir(parents=True, exist_ok=True)
        rig.control.path.write_text('{"mode": "off"}\n')  # another process
        await until(pilot, lambda: "setting off" in header(app))
        await say(pilot, "my python script segfaults")
        assert app.conversation.records[-1].route is not None
        assert app.conversation.records[-1].mode is None  # no mode: base prompt only
        assert "setting off" in header(app)


async def test_escape_cancels_a_streaming_answer_and_keeps_the_partial_text(rig: Rig) -> None:
    rig.model.script(ScriptedReply("word " * 200, chunk_size=5, delay=0.02))
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        await say(pilot, "tell me a long story", wait=False)
        await until(
            pilot,
            lambda: (
                bool(app.conversation.records) and len(app.conversation.records[-1].answer) > 20
            ),
        )
        await pilot.press("escape")
        await until(pilot, lambda: app.conversation.records[-1].status == "cancelled")
        await until(pilot, lambda: not app.conversation.turns.running)
        record = app.conversation.records[-1]
        assert 0 < len(record.answer) < len("word " * 200)
        assert "cancelled" in plain(app.conversation.chat.query_one(".note-text"))
        assert app.conversation.chat.query_one(AnswerSegment).source.startswith(
            record.answer.strip()[:20]
        )


@pytest.mark.parametrize("accept", [True, False])
async def test_a_command_needs_confirmation(rig: Rig, accept: bool) -> None:
    rig.model.script(
        ScriptedReply("Let me check.", tool_calls=[("run_command", {"command": "echo hi"})]),
        ScriptedReply("Done."),
    )
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        await say(pilot, "/mode shell")
        await say(pilot, "say hi in the terminal", wait=False)
        await until(pilot, lambda: isinstance(app.screen, ConfirmToolScreen))
        assert plain(app.screen.query_one("#confirm-title")).strip() == "Run echo hi?"
        await answer_dialog(pilot, "y" if accept else "n")
        await until(
            pilot, lambda: bool(app.conversation.records) and not app.conversation.turns.running
        )
        activity = app.conversation.records[-1].tools[0]
        shown = plain(app.conversation.chat.query_one(ToolCallView))
        if accept:
            assert activity.outcome == "ok" and "hi" in activity.result
            assert "ok" in shown
        else:
            assert activity.outcome in ("cancelled", "blocked")
            assert activity.outcome in shown
        assert app.conversation.records[-1].answer.endswith("Done.")


async def test_the_inspector_shows_the_exact_request(rig: Rig) -> None:
    rig.model.script(ScriptedReply("First."), ScriptedReply("Second."))
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        await say(pilot, "hello there")
        await say(pilot, "my python script segfaults")
        await say(pilot, "/why")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        screen = app.screen
        titles = "\n".join(c.title for c in screen.query("Collapsible"))
        assert "System prompt: base prompt + code mode instructions" in titles
        assert "Tools: 5" in titles  # code reads (3 tools) and changes files (2, after a yes)
        assert "History window: 3 messages" in titles
        request = rig.model.requests[-1]
        system = str(request.messages[0]["content"])
        assert system[:60] in all_text(screen.query("Static"))


async def test_a_provider_error_shows_with_retry_and_retry_answers(rig: Rig) -> None:
    rig.model.script(
        ScriptedReply(error=ProviderError("rate_limit", "slow down", hint="wait a minute")),
        ScriptedReply("Here you go."),
    )
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        await say(pilot, "hello there")
        assert app.conversation.records[-1].status == "failed"
        note = app.conversation.chat.query_one(TurnNote)
        assert "slow down" in plain(note.query_one(".note-text"))
        assert "wait a minute" in plain(note.query_one(".note-text"))
        await pilot.press("ctrl+r")
        await until(
            pilot,
            lambda: (
                app.conversation.records[-1].status == "finished"
                and not app.conversation.turns.running
            ),
        )
        assert app.conversation.chat.query_one(AnswerSegment).source == "Here you go."
        assert not app.conversation.chat.query(TurnNote)
        assert len(app.conversation.records) == 1 and len(app.conversation.panel.entries) == 2


async def test_the_recorded_session_replays_without_calling_the_model(rig: Rig) -> None:
    rig.model.script(ScriptedReply("Use a list."), ScriptedReply("Try `git stash`."))
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        await say(pilot, "my python script segfaults")
        await say(pilot, "git rebase went wrong", wait=False)
        await enter_shell(pilot, app, answer="y")
        calls = len(rig.model.requests)
        await say(pilot, f"/replay {rig.log.id}")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        screen = app.screen
        await until(pilot, lambda: "turns agree" in plain(screen.query_one("#replay-title")))
        sources = [segment.source for segment in screen.query(AnswerSegment)]
        assert sources == ["Use a list.", "Try `git stash`."]
        assert "2/2 turns agree" in plain(screen.query_one("#replay-title"))
        assert len(rig.model.requests) == calls
        await pilot.press("escape")
        await say(pilot, "/export")
        exported = list(Path(rig.services.sessions.export_dir).glob("modes-tui-*.md"))  # type: ignore[union-attr]
        assert exported and "Try `git stash`." in exported[0].read_text()


async def test_the_header_shows_the_session_cost_after_a_turn(rig: Rig) -> None:
    rig.model.script(ScriptedReply("Fine."))
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        assert app.conversation.engine is not None
        assert "cost" not in header(app)  # nothing spent, no budget: no cost to show
        ledger = app.conversation.engine.costs.ledger  # type: ignore[attr-defined]
        ledger.budget = 5.0
        ledger.add(0, [("scripted/demo", 1000, 100, 0.25)])  # an earlier, priced turn
        await say(pilot, "hello there")
        assert "│ cost $0.25 · budget $5.00" in header(app)


async def test_a_turn_past_the_budget_asks_in_a_dialog_and_a_no_keeps_the_message(
    rig: Rig,
) -> None:
    from modes_tui.tui.confirm import QuestionScreen

    rig.model.script(ScriptedReply("Paid for."))
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        ledger = app.conversation.engine.costs.ledger  # type: ignore[union-attr]
        ledger.budget = 0.10
        ledger.add(0, [("scripted/demo", 1000, 100, 0.25)])  # already past it
        await say(pilot, "hello there", wait=False)
        await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
        assert "past its budget of $0.10: $0.25 spent so far" in plain(
            app.screen.query_one("#question-text")
        )
        await answer_dialog(pilot, "n")
        await until(pilot, lambda: not app.conversation.turns.running)
        assert "not sent: this turn" in plain(app.conversation.status)
        assert rig.model.requests == []
        assert app.conversation.engine.conversation.messages[-1].content == "hello there"  # type: ignore[union-attr]

        await say(pilot, "hello again", wait=False)
        await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
        await answer_dialog(pilot, "y")
        await until(
            pilot, lambda: not app.conversation.turns.running and len(rig.model.requests) == 1
        )
        assert "│ cost $0.25 · budget $0.10" in header(app)


async def test_an_answer_with_no_text_is_said_so_under_the_turn(rig: Rig) -> None:
    # A base model can end its answer at once: the turn says so instead of ending blank.
    rig.model.script(ScriptedReply("\n\n"), ScriptedReply("Paris."))
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        await started(pilot)
        await say(pilot, "capital of France?")
        await say(pilot, "and again?")
        assert isinstance(pilot.app, ModesApp)
        shown = all_text(pilot.app.conversation.chat.query("EndingNote, AnswerSegment"))
        assert shown.count("the model's answer has no text") == 1
        assert shown.index("the model's answer has no text") < shown.index("Paris.")
