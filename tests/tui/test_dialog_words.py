"""Dialogs answer only to deliberate keys (issue 29 item 3, issue 30 item 3).

A dialog the user has been reading for a while is armed; typing on then ("lately", "can")
must not answer it with the `y` or `n` inside the word: the letters go to the prompt, the
dialog waits again and says a question is waiting. A lone y after a quiet moment answers.
Global keys do nothing while a dialog is open. The dialog names what will happen: the
command verbatim, the rule that asked.

These run the real app and engine (ScriptedModel, keyword router, `run_command` in a
temporary folder) with the dialogs' real clock: keys are pressed ~80 ms apart like a typist.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path

import pytest
from textual import events
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Button, Static, TextArea

from modes_tui.core.engine.questions import ANSWER_ARMING_SECONDS, Question, RuleNote, verbatim
from modes_tui.core.model.wire import ToolCall
from modes_tui.core.packs.profiles import Pack, load_pack
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.arming import ANSWER_HOLD_SECONDS, WAITING_HINT, ArmedDialog
from modes_tui.tui.confirm import ConfirmToolScreen, QuestionScreen
from modes_tui.tui.services import AppServices
from tests.conftest import PackWriter
from tests.support.tui_support import FakeClock, all_text, plain, real_app, started, until
from tests.support.tui_support import type_word as typed

SIZE = (120, 40)


@dataclass
class Rig:
    services: AppServices
    model: ScriptedModel
    folder: Path


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    app = real_app(load_pack("default"), tmp_path, sessions=True)
    yield Rig(app.services, app.model, tmp_path)
    app.log.close()


async def type_word(pilot: Pilot[None], word: str) -> None:
    """Type `word` as a typist does (`tui_support.type_word`); handled when every letter is in
    the prompt, or one of them closed the dialog (the tests fail)."""
    app = pilot.app
    assert isinstance(app, ModesApp)
    await typed(
        pilot,
        word,
        lambda: (
            app.conversation.prompt.value.endswith(word) or not isinstance(app.screen, ArmedDialog)
        ),
    )


async def armed(pilot: Pilot[None]) -> ArmedDialog:
    """The dialog on screen, once it takes answers (the user has read it)."""
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, ArmedDialog) and app.screen.armed)
    screen = app.screen
    assert isinstance(screen, ArmedDialog)
    return screen


async def command_dialog(pilot: Pilot[None], rig: Rig, command: str) -> ModesApp:
    """In the shell (forced: no question first), a turn whose model asks to run `command`."""
    rig.model.script(
        ScriptedReply("Running it.", tool_calls=[("run_command", {"command": command})]),
        ScriptedReply("Done."),
    )
    app = await started(pilot)
    app.conversation.prompt.value = "/mode shell"
    await pilot.press("enter")
    await until(pilot, lambda: "mode shell" in app.conversation.header.render_text().plain)
    app.conversation.prompt.value = "make the file"
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, ConfirmToolScreen))
    return app


async def test_lately_typed_into_an_armed_command_dialog_answers_nothing(rig: Rig) -> None:
    ran = rig.folder / "ran.txt"
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await command_dialog(pilot, rig, "touch ran.txt")
        screen = await armed(pilot)  # the user was reading
        await asyncio.sleep(0.3)
        await type_word(pilot, "lately")

        assert screen.is_attached and not ran.exists()
        assert app.conversation.prompt.value == "lately"  # every letter shown there, none lost
        assert plain(screen.query_one("#answer-hint", Static)).strip() == WAITING_HINT
        assert all(button.disabled for button in screen.query(Button))

        await armed(pilot)  # a quiet moment later, a lone y answers
        await pilot.press("y")
        await until(pilot, lambda: not app.conversation.turns.running and ran.exists())
        assert app.conversation.records[-1].tools[0].outcome == "ok"
        assert app.conversation.prompt.value == "lately"


@pytest.mark.parametrize("word", ["you know", "yesterday", "no wait"])
async def test_a_word_that_starts_with_an_answer_letter_answers_nothing(
    rig: Rig, word: str
) -> None:
    # The user read the question for a while, then typed on. The first letter is y or n
    # after a quiet moment, so it looked like an answer; the letters after it, 0.15 s apart
    # (a typist), make it a word. All keys are posted at once, stamped as typed, so a slow
    # test thread cannot turn the word into keys a pause apart.
    ran = rig.folder / "ran.txt"
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await command_dialog(pilot, rig, "touch ran.txt")
        screen = await armed(pilot)
        await asyncio.sleep(0.3)
        first = time.monotonic()
        for index, char in enumerate(word):
            key = events.Key("space" if char == " " else char, char)
            key.time = first + index * 0.15
            app.post_message(key)
        await until(pilot, lambda: app.conversation.prompt.value == word)
        assert plain(screen.query_one("#answer-hint", Static)).strip() == WAITING_HINT
        await asyncio.sleep(ANSWER_HOLD_SECONDS + 0.2)  # past the held letter's time

        assert screen.is_attached and not ran.exists()
        assert app.conversation.prompt.value == word


async def test_a_lone_answer_letter_says_it_is_answering_then_answers(rig: Rig) -> None:
    ran = rig.folder / "ran.txt"
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await command_dialog(pilot, rig, "touch ran.txt")
        screen = await armed(pilot)
        await pilot.press("y")
        assert plain(screen.query_one("#answer-hint", Static)).startswith("y: answering")
        assert screen.is_attached and not ran.exists()  # held, not answered yet
        await until(pilot, lambda: not app.conversation.turns.running and ran.exists())
        assert app.conversation.prompt.value == ""


async def test_can_typed_into_the_enter_shell_question_declines_nothing(rig: Rig) -> None:
    rig.model.script(ScriptedReply("Try git rebase --abort."))
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await started(pilot)
        app.conversation.prompt.value = "git rebase went wrong"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
        screen = await armed(pilot)
        await type_word(pilot, "can")

        assert (
            screen.is_attached and not app.conversation.panel.entries
        )  # no route yet: not declined
        assert app.conversation.prompt.value == "can"
        assert "A question is waiting: y or n" in plain(screen.query_one("#answer-hint", Static))
        assert "Asked by shell's auto_enter: confirm" in plain(
            screen.query_one("#question-rule", Static)
        )

        await armed(pilot)
        await pilot.press("n")
        await until(pilot, lambda: not app.conversation.turns.running)
        route = app.conversation.panel.entries[-1].route
        assert route is not None and route.mode_name != "shell"
        assert app.conversation.prompt.value == "can"


async def test_a_word_typed_fast_all_goes_to_the_prompt_even_with_y_and_n_in_it(
    rig: Rig,
) -> None:
    ran = rig.folder / "ran.txt"
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await command_dialog(pilot, rig, "touch ran.txt")
        screen = await armed(pilot)
        await type_word(pilot, "honestly, any day now")
        assert screen.is_attached and not ran.exists()
        assert app.conversation.prompt.value == "honestly, any day now"


async def test_global_keys_do_nothing_while_a_dialog_is_open(rig: Rig) -> None:
    ran = rig.folder / "ran.txt"
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await command_dialog(pilot, rig, "touch ran.txt")
        screen = await armed(pilot)
        before = app.services.control.read().mode
        keys = ("shift+tab", "ctrl+e", "f2", "f3", "ctrl+g", "ctrl+b", "ctrl+t", "f1", "ctrl+p")
        for key in keys:
            await pilot.press(key)
            await pilot.pause(0.05)
            assert app.screen is screen, key  # no other screen over or instead of it
        assert app.services.control.read().mode == before == "shell"
        assert "mode shell" in app.conversation.header.render_text().plain
        assert screen.is_attached and not ran.exists() and app.conversation.prompt.value == ""

        await armed(pilot)
        await pilot.press("n")
        await until(pilot, lambda: not app.conversation.turns.running)
        assert not ran.exists()
        await pilot.press("ctrl+p")  # closed: the keys work again
        await until(pilot, lambda: app.screen.__class__.__name__ == "CommandPalette")


async def test_the_command_dialog_shows_the_command_verbatim_and_the_rule(rig: Rig) -> None:
    command = 'printf \'%s\\n\' "it\'s \\"quoted\\""\necho "second line" > out.txt\x1b[2J'
    async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await command_dialog(pilot, rig, command)
        screen = app.screen
        assert isinstance(screen, ConfirmToolScreen)
        title = plain(screen.query_one("#confirm-title", Static))
        assert title.strip() == 'Run printf \'%s\\n\' "it\'s \\"quoted\\"" … (+1 line)?'
        assert "run_command" not in title
        body = plain(screen.query_one("#confirm-command", Static))
        assert 'printf \'%s\\n\' "it\'s \\"quoted\\""\n' in body  # no JSON, no escaping
        assert 'echo "second line" > out.txt\\x1b[2J' in body  # the control is visible, inert
        rule = plain(screen.query_one("#confirm-rule", Static)).strip()
        assert rule == "Asked by shell's default for run_command: ask"
        frame = app.screen._compositor.render_full_update().render_segments(app.console)
        assert "\x1b[2J" not in frame
        await armed(pilot)
        await pilot.press("n")
        await until(pilot, lambda: not app.conversation.turns.running)


# --------------------------------------------------------------------------- hand-off


HAND = ("switch_mode", {"mode": "shell", "reason": "this needs a command run"})


def gated_pack(write_pack: PackWriter) -> Pack:
    modes = {
        "chat": {"description": "Everyday chat.", "keywords": ["hello"], "tools": ["switch_mode"]},
        "shell": {
            "description": "Shell.",
            "keywords": ["terminal"],
            "auto_enter": "confirm",
            "tools": ["run_command"],
            "permissions": {"run_command": "allow"},
        },
    }
    return load_pack(
        profiles_dir=write_pack(router={"classifier": "keyword", "fallback": "chat"}, modes=modes)
    )


@pytest.mark.parametrize("answer", ["y", "n"])
async def test_in_the_app_a_hand_off_into_a_confirm_mode_is_asked(
    tmp_path: Path, write_pack: PackWriter, answer: str
) -> None:
    rig = real_app(gated_pack(write_pack), tmp_path)
    rig.model.script(
        ScriptedReply("", tool_calls=[HAND]),
        ScriptedReply("", tool_calls=[("run_command", {"command": "touch ran.txt"})]),
        ScriptedReply("Answered."),
    )
    try:
        async with build_app(rig.services, tz=UTC).run_test(size=SIZE) as pilot:
            app = await started(pilot)
            app.conversation.prompt.value = "hello, list my files"
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, QuestionScreen))
            screen = app.screen
            assert isinstance(screen, QuestionScreen)
            shown = all_text(screen.query(Static))
            assert "Hand this turn to shell?" in shown
            assert "chat wants to hand the rest of this turn to shell: this needs a command" in (
                shown
            )
            assert "Asked by shell's auto_enter: confirm" in shown
            assert not (tmp_path / "ran.txt").exists()

            await armed(pilot)
            await pilot.press(answer)
            await until(pilot, lambda: not app.conversation.turns.running)
            modes = [
                e.route.mode_name for e in app.conversation.panel.entries if e.route is not None
            ]
            if answer == "y":
                assert modes[-2:] == ["chat", "shell"]
                assert (tmp_path / "ran.txt").exists()  # shell's run_command: allow
            else:
                assert modes == ["chat"]
                assert not (tmp_path / "ran.txt").exists()  # chat has no run_command
                tool = app.conversation.records[-1].tools[0]
                assert tool.outcome == "cancelled"
    finally:
        rig.log.close()


# --------------------------------------------------------------------------- on a test clock


class PromptBehind(App[None]):
    """A prompt, and a question pushed over it (the app's layout, reduced)."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__()
        self.clock = clock

    def compose(self) -> ComposeResult:
        yield TextArea(id="prompt")

    def ask(self) -> QuestionScreen:
        prompt = self.query_one("#prompt", TextArea)
        question = Question("budget", "Pass?", "Go on?")
        screen = QuestionScreen(question, clock=self.clock, prompt=prompt)
        self.push_screen(screen)
        return screen


async def test_once_armed_a_letter_unarms_and_the_rest_of_the_word_follows_it() -> None:
    clock = FakeClock()
    app = PromptBehind(clock)
    async with app.run_test() as pilot:
        prompt = app.query_one("#prompt", TextArea)
        screen = app.ask()
        await pilot.pause()
        clock.now += ANSWER_ARMING_SECONDS
        await until(pilot, lambda: screen.armed)
        await pilot.press("c")  # armed, but not an answer key: the user types on
        assert not screen.armed and prompt.text == "c"
        await pilot.press("a", "n")  # no time passed: n is a letter of "can"
        app.post_message(events.Paste(" I?"))
        await pilot.pause()
        assert screen.is_attached and prompt.text == "can I?"
        clock.now += ANSWER_ARMING_SECONDS  # a quiet moment
        await until(pilot, lambda: screen.armed)
        app.post_message(events.Paste("y"))  # a paste is never an answer
        await pilot.pause()
        assert screen.is_attached and not screen.armed and prompt.text == "can I?y"
        clock.now += ANSWER_ARMING_SECONDS
        await until(pilot, lambda: screen.armed)
        await pilot.press("n")
        await until(pilot, lambda: not screen.is_attached)
        assert prompt.text == "can I?y"


@pytest.mark.parametrize(
    ("rule", "line"),
    [
        (
            RuleNote("code", "run_command", "allow", "permissions.run_command"),
            "allowed by code's run_command: allow",
        ),
        (
            RuleNote("code", "write_file", "ask", "permissions.default"),
            "asked by code's permissions default: ask",
        ),
        (
            RuleNote("shell", "run_command", "ask", "default"),
            "asked by shell's default for run_command: ask",
        ),
        (
            RuleNote(None, "github__merge", "ask", "permissions.github__*"),
            "asked by no mode's github__*: ask",
        ),
    ],
)
def test_a_rule_is_named_as_the_pack_spells_it(rule: RuleNote, line: str) -> None:
    assert rule.line() == line


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ('echo "it\'s"\n\tls -la', 'echo "it\'s"\n\tls -la'),  # quotes, newline, tab: as typed
        ("ls\x1b[2J; rm x\r\n", "ls\\x1b[2J; rm x\\r\n"),  # controls visible, inert
        ("cat \u202egnp.exe", "cat \\u202egnp.exe"),  # a bidi override cannot reorder it
        ("r\u200bm -rf /", "r\\u200bm -rf /"),  # nor a zero-width space hide a letter
    ],
)
def test_a_command_is_shown_verbatim_with_only_terminal_controls_escaped(
    command: str, shown: str
) -> None:
    assert verbatim(command) == shown


@pytest.mark.parametrize(
    ("call", "title"),
    [
        (ToolCall("1", "read_file", {"path": "notes/todo.md"}), "Read notes/todo.md?"),
        (
            ToolCall("2", "search_files", {"pattern": "TODO", "path": "src"}),
            "Search src for TODO?",
        ),
        (ToolCall("3", "github__merge", {"number": 7}), "Let the model call github__merge?"),
    ],
)
async def test_a_question_about_another_tool_names_what_it_does(call: ToolCall, title: str) -> None:
    rule = RuleNote("code", call.name, "ask", f"permissions.{call.name}")
    screen = ConfirmToolScreen(call, "", None, rule)
    async with App[None]().run_test() as pilot:
        pilot.app.push_screen(screen)
        await pilot.pause(0.1)
        assert plain(screen.query_one("#confirm-title", Static)).strip() == title
        assert plain(screen.query_one("#confirm-rule", Static)).strip() == (
            f"Asked by code's {call.name}: ask"
        )
        if call.name == "github__merge":  # the arguments, as JSON, since nothing else says it
            assert '"number": 7' in str(screen.query_one("#confirm-arguments", Static).content.code)
