"""A confirmation needs a deliberate answer (REPL): what was typed before the question is
never its answer; it is named and comes back in the next prompt. In a pipe nobody can
answer, so a typed-ahead "yes" is a message like any other line and nothing runs.

The terminal tests run `python -m modes_tui chat --plain` in a pseudo-terminal with
`--model scripted/command`, which asks to run the message as a shell command: a file
appearing in the working folder is the proof that a command ran.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from modes_tui.core.engine.questions import Question
from modes_tui.core.model.wire import ToolCall
from modes_tui.repl.questions import PromptConfirmer, SetAside, as_typed
from tests.support.cli_support import run_cli
from tests.support.pty_support import Terminal, terminal
from tests.support.repl_support import answer_when_asked, within

COMMAND_CHAT = ["--model", "scripted/command", "chat", "--plain", "--classifier", "keyword"]
NOTE = "typed before the question, so not its answer"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


def in_shell(screen: Terminal) -> int:
    """Force the shell mode (no question before the tool's); the offset after its prompt."""
    at = screen.expect("›")
    screen.type("/mode shell\r")
    at = screen.expect("mode setting: shell", after=at)
    return screen.expect("›", after=at)


def test_yes_typed_with_the_message_does_not_answer_the_question(
    modes_home: Path, folder: Path
) -> None:
    with terminal(*COMMAND_CHAT, home=modes_home, cwd=folder) as screen:
        at = in_shell(screen)
        screen.type("touch ran.txt\ryes\r")  # one burst: the message, then "yes" at once
        at = screen.expect(NOTE + ': "yes"', after=at)
        at = screen.expect("[y/N]", after=at)
        assert not (folder / "ran.txt").exists()
        screen.type("n\r")
        at = screen.expect("run_command: cancelled", after=at)
        screen.expect("› yes", after=at)  # the typed-ahead text is the next message's draft
    assert not (folder / "ran.txt").exists()


def test_yes_typed_while_the_answer_streams_does_not_answer_and_a_later_y_does(
    modes_home: Path, folder: Path
) -> None:
    with terminal(*COMMAND_CHAT, home=modes_home, cwd=folder) as screen:
        at = in_shell(screen)
        # a long comment keeps the answer streaming ~3 s after "I will": "yes" is typed
        # well before the question opens even when this test is descheduled for a while
        screen.type("touch ran.txt  # " + "." * 300 + "\r")
        at = screen.expect("(scripted model) I will", after=at)  # still streaming
        screen.type("yes\r")  # waits in the terminal driver, not in any prompt
        at = screen.expect(NOTE + ': "yes"', after=at)
        at = screen.expect("[y/N]", after=at)
        assert not (folder / "ran.txt").exists()
        screen.type("y\r")
        screen.expect("The command answered", after=at)
    assert (folder / "ran.txt").exists()


def test_in_a_pipe_a_yes_line_is_a_message_and_the_command_is_refused(
    modes_home: Path, folder: Path
) -> None:
    ran = folder / "ran.txt"
    result = run_cli(f"/mode shell\ntouch {ran}\nyes\n", *COMMAND_CHAT, home=modes_home)
    assert result.returncode == 0, result.stderr
    assert "refused run_command: no terminal to confirm it" in result.stderr
    assert "I will run `yes` if you say yes." in result.stdout  # a message, not an answer
    assert not ran.exists()
    assert result.stderr.count("refused run_command") == 2


# --------------------------------------------------------------------------- the question


CALL = ToolCall("1", "run_command", {"command": "ls"})


@pytest.mark.parametrize(
    ("early", "deliberate", "expected"),
    [("y\r", "n\r", False), ("yes\r", "n\r", False), ("n\r", "y\r", True), ("\r", "y\r", True)],
)
async def test_keys_waiting_before_the_question_are_set_aside_not_answered(
    early: str, deliberate: str, expected: bool
) -> None:
    kept = SetAside()
    with create_pipe_input() as pipe:
        pipe.send_text(early)
        confirmer = PromptConfirmer(input=pipe, output=DummyOutput(), kept=kept, arming=0)
        asked = asyncio.create_task(confirmer.confirm(CALL, None))
        await answer_when_asked(confirmer, pipe, deliberate)
        assert await within(asked) is expected  # the deliberate answer, not the early key
    assert kept.take() == as_typed(early)


async def test_keys_typed_in_the_arming_time_are_set_aside_too() -> None:
    kept = SetAside()
    with create_pipe_input() as pipe:
        confirmer = PromptConfirmer(input=pipe, output=DummyOutput(), kept=kept, arming=0.2)
        asked = asyncio.create_task(confirmer.ask(Question("budget", "Budget", "Go on?")))
        await asyncio.sleep(0.05)  # the question is on screen, not yet armed
        pipe.send_text("y\r")
        await answer_when_asked(confirmer, pipe, "\r")  # Enter alone: the default, no
        assert await within(asked) is False
    assert kept.take() == "y"


async def test_the_question_waits_for_a_pause_in_typing() -> None:
    kept = SetAside()
    with create_pipe_input() as pipe:
        confirmer = PromptConfirmer(input=pipe, output=DummyOutput(), kept=kept, arming=0.2)
        asked = asyncio.create_task(confirmer.confirm(CALL, None))
        for keys in ("yes you ", "may see ", "my yaml\r"):  # a key every 0.15 s: no pause
            await asyncio.sleep(0.15)
            pipe.send_text(keys)
        await answer_when_asked(confirmer, pipe, "n\r")
        assert await within(asked) is False
    assert kept.take() == "yes you may see my yaml"


async def test_text_that_is_not_y_or_n_is_kept_and_the_question_asked_again() -> None:
    kept = SetAside()
    with create_pipe_input() as pipe:
        confirmer = PromptConfirmer(input=pipe, output=DummyOutput(), kept=kept, arming=0)
        asked = asyncio.create_task(confirmer.confirm(CALL, None))
        await answer_when_asked(confirmer, pipe, "you may see my yaml file\r")
        await answer_when_asked(confirmer, pipe, "yes\r", prompt=2)
        assert await within(asked) is True
    assert kept.take() == "you may see my yaml file"


@pytest.mark.parametrize(
    ("keys", "text"),
    [
        ("yes\r", "yes"),
        ("and in Go?\n", "and in Go?"),
        ("ab\x7fc\x1b[Dd\r\rmore", "acd\n\nmore"),  # backspace, an arrow key, two lines
        ("\x1b]0;title\x07hi\x03", "hi"),  # an escape sequence and a control are no text
        ("\r\n", ""),
    ],
)
def test_raw_keys_become_the_text_they_typed(keys: str, text: str) -> None:
    assert as_typed(keys) == text
