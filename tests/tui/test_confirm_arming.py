"""A confirmation needs a deliberate answer (TUI): keys typed while a dialog opens go to
the prompt and never answer it; once armed, it answers as before.

The app runs the real engine (ScriptedModel, keyword router, `run_command` in a temporary
folder), so "did not run" means no file appeared. Each dialog gets a clock the test moves:
it arms when the test says so, never because the machine was slow.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path

import pytest
from textual import events
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Button, Static, TextArea

from modes_tui.core.engine.questions import ANSWER_ARMING_SECONDS, Question
from modes_tui.core.packs.profiles import load_pack
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.arming import UNARMED_HINT, ArmedDialog
from modes_tui.tui.confirm import ConfirmToolScreen, DialogConfirmer, QuestionScreen
from modes_tui.tui.services import AppServices
from tests.support.tui_support import FakeClock, plain, real_app, started, until

SIZE = (120, 40)
TYPED = "yes you may see my yaml file"


@dataclass
class Rig:
    services: AppServices
    model: ScriptedModel
    folder: Path
    clock: FakeClock = field(default_factory=FakeClock)


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    clock = FakeClock()

    def on_clock(confirm: DialogConfirmer) -> None:
        confirm.clock = clock  # the app's own confirmer, on the test's clock

    app = real_app(load_pack("default"), tmp_path, sessions=True, on_confirm=on_clock)  # type: ignore[arg-type]
    yield Rig(app.services, app.model, tmp_path, clock)
    app.log.close()


def touch(rig: Rig) -> Path:
    """Script a turn that asks to create a file; the file is the proof that it ran."""
    rig.model.script(
        ScriptedReply("Creating it.", tool_calls=[("run_command", {"command": "touch ran.txt"})]),
        ScriptedReply("Done."),
    )
    return rig.folder / "ran.txt"


async def in_shell(pilot: Pilot[None]) -> ModesApp:
    app = await started(pilot)
    app.conversation.prompt.value = "/mode shell"  # forced: no question before the tool's
    await pilot.press("enter")
    await until(pilot, lambda: "mode shell" in app.conversation.header.render_text().plain)
    return app


async def command_dialog(pilot: Pilot[None]) -> ModesApp:
    """In the shell, send the message of `touch`'s turn; wait for its command dialog."""
    app = await in_shell(pilot)
    app.conversation.prompt.value = "make the file"
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, ConfirmToolScreen))
    return app


def dialog(app: ModesApp) -> ArmedDialog:
    screen = app.screen
    assert isinstance(screen, ArmedDialog)
    return screen


async def arm(pilot: Pilot[None], rig: Rig) -> ArmedDialog:
    """Let the arming time pass; the dialog shows that it now takes answers."""
    app = pilot.app
    rig.clock.pass_arming()
    await until(pilot, lambda: isinstance(app.screen, ArmedDialog) and app.screen.armed)
    screen = app.screen
    assert isinstance(screen, ArmedDialog)
    assert "y" in plain(screen.query_one("#answer-hint", Static))
    assert not any(button.disabled for button in screen.query(Button))
    return screen


async def test_typing_as_the_command_dialog_opens_runs_nothing_and_keeps_the_text(
    rig: Rig,
) -> None:
    ran = touch(rig)
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await command_dialog(pilot)
        await pilot.press(*TYPED, "enter")  # the user kept typing; Enter included

        screen = dialog(app)
        assert not ran.exists()
        assert screen.is_attached and not screen.armed
        assert plain(screen.query_one("#answer-hint", Static)).strip() == UNARMED_HINT
        assert all(button.disabled for button in screen.query(Button))
        assert app.conversation.prompt.value == TYPED  # in order, nothing lost, not sent

        await arm(pilot, rig)
        await pilot.press("y")
        await until(pilot, lambda: not app.conversation.turns.running and ran.exists())
        assert app.conversation.records[-1].tools[0].outcome == "ok"
        assert app.conversation.prompt.value == TYPED
        assert app.conversation.engine is not None
        sent = [
            m.content for m in app.conversation.engine.conversation.messages if m.role == "user"
        ]
        assert TYPED not in sent  # the early Enter sent nothing


async def test_a_dialog_stays_unarmed_while_the_user_types_on_without_a_pause(rig: Rig) -> None:
    ran = touch(rig)
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await command_dialog(pilot)
        for word in ("yes ", "you ", "may ", "see ", "my ", "yaml ", "file"):
            rig.clock.now += ANSWER_ARMING_SECONDS * 0.8  # a pause shorter than the arming
            await pilot.press(*word)
        # far more than the arming time since it opened, but never that long without a key
        assert not ran.exists() and not dialog(app).armed
        assert app.conversation.prompt.value == TYPED

        await arm(pilot, rig)
        await pilot.press("n")
        await until(pilot, lambda: not app.conversation.turns.running)
        assert not ran.exists() and app.conversation.prompt.value == TYPED


async def test_keys_pressed_with_the_enter_that_opens_the_dialog_do_not_answer_it(
    rig: Rig,
) -> None:
    ran = touch(rig)
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await in_shell(pilot)
        app.conversation.prompt.value = "make the file"
        await pilot.press("enter", "y", "e", "s")  # one burst: send, and "yes" right after
        await until(pilot, lambda: isinstance(app.screen, ConfirmToolScreen))
        await pilot.pause(0.1)
        assert isinstance(app.screen, ConfirmToolScreen) and not ran.exists()
        assert app.conversation.prompt.value == "yes"

        await arm(pilot, rig)
        await pilot.press("n")
        await until(pilot, lambda: not app.conversation.turns.running)
        assert app.conversation.records[-1].tools[0].outcome == "cancelled"
        assert not ran.exists()
        assert app.conversation.prompt.value == "yes"


async def test_a_click_before_arming_is_no_answer_and_one_after_is(rig: Rig) -> None:
    ran = touch(rig)
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await command_dialog(pilot)
        await pilot.click("#run")
        await pilot.pause(0.1)
        assert isinstance(app.screen, ConfirmToolScreen) and not ran.exists()

        await arm(pilot, rig)
        await pilot.click("#run")
        await until(pilot, lambda: not app.conversation.turns.running and ran.exists())


async def test_an_n_typed_as_the_enter_shell_question_opens_does_not_decline_it(
    rig: Rig,
) -> None:
    rig.model.script(ScriptedReply("Try git rebase --abort."))
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        app.conversation.prompt.value = "git rebase went wrong"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
        await pilot.press(*"and in Go?", "escape", "enter")

        screen = dialog(app)
        assert screen.is_attached and not screen.armed
        assert (
            app.conversation.turns.running and not app.conversation.panel.entries
        )  # no route yet: not declined
        assert app.conversation.prompt.value == "and in Go?"

        await arm(pilot, rig)
        await pilot.press("y")
        await until(pilot, lambda: not app.conversation.turns.running)
        route = app.conversation.panel.entries[-1].route
        assert route is not None and (route.mode_name, route.decided_by) == ("shell", "classifier")
        assert app.conversation.prompt.value == "and in Go?"


async def test_a_key_typed_as_the_budget_question_opens_does_not_answer_it(rig: Rig) -> None:
    rig.model.script(ScriptedReply("Paid for."))
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        ledger = app.conversation.engine.costs.ledger  # type: ignore[union-attr]
        ledger.budget = 0.10
        ledger.add(0, [("scripted/demo", 1000, 100, 0.25)])  # already past it
        app.conversation.prompt.value = "hello there"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
        await pilot.press(*"no y")

        assert dialog(app).is_attached and rig.model.requests == []
        assert app.conversation.prompt.value == "no y"
        await arm(pilot, rig)
        await pilot.press("y")
        await until(
            pilot, lambda: not app.conversation.turns.running and len(rig.model.requests) == 1
        )


# --------------------------------------------------------------------------- the keys


class PromptBehind(App[None]):
    """A prompt, and a question pushed over it (the app's layout, reduced)."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__()
        self.clock = clock

    def compose(self) -> ComposeResult:
        yield TextArea(id="prompt")

    def ask(self) -> QuestionScreen:
        prompt = self.query_one("#prompt", TextArea)
        screen = QuestionScreen(
            Question("budget", "Pass?", "Go on?"), clock=self.clock, prompt=prompt
        )
        self.push_screen(screen)
        return screen


async def test_early_keys_edit_the_prompt_as_typed_and_an_early_enter_is_a_line_break() -> None:
    clock = FakeClock()
    app = PromptBehind(clock)
    async with app.run_test() as pilot:
        prompt = app.query_one("#prompt", TextArea)
        prompt.insert("draft")
        screen = app.ask()
        await pilot.pause()
        await pilot.press("space", "a", "b", "backspace", "enter", "left", "tab", "c")
        app.post_message(events.Paste(" pasted"))
        await pilot.pause()
        assert prompt.text == "draft a\nc pasted"
        assert screen.is_attached and not screen.armed
        clock.pass_arming()
        await pilot.press("n")
        await until(pilot, lambda: not screen.is_attached)
        assert prompt.text == "draft a\nc pasted"


async def test_keys_typed_before_the_dialog_opened_never_answer_it_however_late_read() -> None:
    clock = FakeClock()
    app = PromptBehind(clock)
    async with app.run_test() as pilot:
        prompt = app.query_one("#prompt", TextArea)
        typed = [events.Key("y", "y"), events.Key("enter", "\r")]  # stamped as typed: now
        screen = app.ask()
        await pilot.pause()
        clock.pass_arming()  # a busy app reads them only after the arming time
        for key in typed:
            app.post_message(key)
        await pilot.pause(0.1)
        assert screen.is_attached and prompt.text == "y"
