"""The plain REPL: pipes, JSON lines, the prompt-toolkit prompt, completion, cancel."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from modes_tui.core.engine.engine import Engine
from modes_tui.core.packs.profiles import load_pack
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.repl import (
    Printer,
    ReplContext,
    ask,
    run_interactive,
    run_lines,
    slash_completer,
)
from modes_tui.runtime import build_engine
from tests.support.cli_support import run_cli, run_piped_chat
from tests.support.engine_support import engine_config
from tests.support.repl_support import answer_when_asked, within

REPO = Path(__file__).resolve().parents[2]


def engine_with(model: ScriptedModel) -> Engine:
    pack = load_pack("default")
    return build_engine(
        engine_config(default_model="scripted/echo"), pack=pack, classifier="keyword", model=model
    )


def context_for(engine: Engine, history: Path | None = None) -> ReplContext:
    names = ("chat", "code", "reason", "shell", "write")
    settings: dict[str, str] = {}

    def set_mode(value: str) -> str:
        settings["mode"] = value
        return f"mode setting: {value}"

    return ReplContext(
        engine=engine,
        mode_names=lambda: names,
        describe_modes=lambda: "\n".join(names),
        set_mode=set_mode,
        history_file=history,
    )


def test_piped_stdin_prints_a_route_line_and_an_answer_per_message(modes_home: Path) -> None:
    result = run_piped_chat("hi\nhow do I undo my last git commit?\n", home=modes_home)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    routes = [line for line in lines if line.startswith("[")]
    assert routes[0].startswith("[chat · by ")
    # shell asks before the router enters it (auto_enter: confirm); a pipe cannot answer
    assert routes[1].startswith("[chat · by fallback")
    assert routes[1].endswith("Entering shell needs a yes, and nobody can answer here")
    assert " in shell · " in routes[1]  # the confidence shown is the router's in shell
    assert sum("You said: hi" in line for line in lines) == 1
    assert "how do I undo my last git commit?" in result.stdout


def test_json_prints_one_event_per_line(modes_home: Path) -> None:
    result = run_piped_chat("hello\n", "--json", home=modes_home)
    events = [json.loads(line) for line in result.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "route_decided" and types[-1] == "turn_finished"
    assert "text_delta" in types and "request_built" in types


def test_piped_sessions_are_recorded(modes_home: Path) -> None:
    run_piped_chat("first message\n", home=modes_home)
    listing = run_cli("", "sessions", "--json", home=modes_home)
    sessions = json.loads(listing.stdout)
    assert len(sessions) == 1 and sessions[0]["title"] == "first message"


def test_a_bad_option_is_a_usage_error(modes_home: Path) -> None:
    result = run_cli("", "chat", "--plain", "--bogus", home=modes_home)
    assert result.returncode == 2 and "unrecognized arguments: --bogus" in result.stderr


def test_an_unknown_pack_fails_with_the_known_ones(modes_home: Path) -> None:
    result = run_cli("hi\n", "--pack", "nope", "chat", "--plain", home=modes_home)
    assert result.returncode == 1 and "known packs: default, support" in result.stderr


async def test_slash_commands_in_a_pipe() -> None:
    out = io.StringIO()
    context = context_for(engine_with(ScriptedModel()))
    await run_lines(
        ["/help\n", "/mode code\n", "/mode\n", "/frob\n", "/why\n"], context, Printer(out)
    )
    text = out.getvalue()
    assert "/clear" in text and "mode setting: code" in text
    assert "usage: /mode NAME | auto | off" in text
    assert "unknown command /frob; /help lists the commands" in text
    assert "no turn yet" in text


async def test_an_answer_with_no_text_is_said_so_not_left_blank() -> None:
    # A base model can end its answer at once (or with blank lines only): the user sees a note,
    # not a route line and silence that reads like a hang or a lost answer.
    out = io.StringIO()
    model = ScriptedModel().script(ScriptedReply("\n\n"), ScriptedReply("Paris."))
    context = context_for(engine_with(model))
    await run_lines(["capital of France?\n", "and again?\n"], context, Printer(out))
    text = out.getvalue()
    assert text.count("(the model's answer has no text)") == 1
    assert text.index("(the model's answer has no text)") < text.index("Paris.")


async def test_the_prompt_answers_and_keeps_history(tmp_path: Path) -> None:
    out = io.StringIO()
    history = tmp_path / "state" / "input_history"
    context = context_for(
        engine_with(ScriptedModel().script(ScriptedReply("Hello back."))), history
    )
    with create_pipe_input() as pipe:
        pipe.send_text("hi there\r")
        pipe.send_text("\x04")  # Ctrl+D leaves
        code = await run_interactive(context, Printer(out), input=pipe, output=DummyOutput())
    assert code == 0
    assert "[chat · by" in out.getvalue() and "Hello back." in out.getvalue()
    assert "hi there" in history.read_text()


async def test_a_pasted_or_ctrl_j_multi_line_text_is_one_message() -> None:
    out = io.StringIO()
    model = ScriptedModel().script(ScriptedReply("one"), ScriptedReply("two"))
    engine = engine_with(model)
    context = context_for(engine)
    with create_pipe_input() as pipe:
        # A bracketed paste of three lines, then Enter; then two lines joined by Ctrl+J.
        pipe.send_text("\x1b[200~Traceback:\r\n  File x.py\r\nNameError: y\x1b[201~\r")
        pipe.send_text("first line\nsecond line\r")
        pipe.send_text("\x04")
        code = await run_interactive(context, Printer(out), input=pipe, output=DummyOutput())
    assert code == 0
    users = [m.content for m in engine.conversation if m.role == "user"]
    assert users == ["Traceback:\n  File x.py\nNameError: y", "first line\nsecond line"]
    assert out.getvalue().count("[chat · by") + out.getvalue().count("[code · by") == 2


async def test_ctrl_c_twice_at_the_prompt_leaves() -> None:
    out = io.StringIO()
    context = context_for(engine_with(ScriptedModel()))
    with create_pipe_input() as pipe:
        pipe.send_text("\x03")
        pipe.send_text("\x03")
        code = await run_interactive(context, Printer(out), input=pipe, output=DummyOutput())
    assert code == 0 and "(Ctrl+C again to leave)" in out.getvalue()


async def test_ctrl_c_during_a_turn_cancels_it_and_keeps_the_partial_answer() -> None:
    out = io.StringIO()
    engine = engine_with(
        ScriptedModel().script(ScriptedReply("word " * 200, chunk_size=5, delay=0.01))
    )
    context = context_for(engine)
    task = asyncio.create_task(ask("tell me a story", context, Printer(out)))
    while "word" not in out.getvalue():
        await asyncio.sleep(0.01)
    os.kill(os.getpid(), signal.SIGINT)
    await asyncio.wait_for(task, 10)
    assert "(cancelled; the partial answer is kept)" in out.getvalue()
    last = engine.conversation.messages[-1]
    assert last.cancelled and last.content.startswith("word")


def completions(text: str) -> list[str]:
    context = context_for(engine_with(ScriptedModel()))
    return [c.text for c in slash_completer(context).get_completions(Document(text), None)]


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("/mo", ["/mode", "/modes"]),
        ("/mode c", ["chat", "code"]),
        ("/mode a", ["auto"]),
        ("hello", []),
    ],
)
def test_completion_of_commands_and_mode_names(typed: str, expected: list[Any]) -> None:
    assert completions(typed) == expected


@pytest.mark.local
def test_the_embedded_default_answers_two_piped_messages_offline(modes_home: Path) -> None:
    # Structure comes from the engine's own events (--json), never from parsing the model's
    # words: what the model says depends on sampling and on the prompt, which holds the cwd.
    result = run_cli(
        "hi\nhow do I undo my last git commit?\n", "chat", "--plain", "--json", home=modes_home
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    routes = [e["route"] for e in events if e["type"] == "route_decided"]
    assert [r["mode_name"] for r in routes] == ["chat", "chat"]  # one route per message
    # git belongs to the shell mode, which asks first (auto_enter: confirm): a pipe cannot answer
    assert routes[1]["runner_up"] == "shell" and routes[1]["decided_by"] == "fallback"
    assert routes[1]["reason"].endswith("Entering shell needs a yes, and nobody can answer here")
    answers = [e["message"]["content"] for e in events if e["type"] == "turn_finished"]
    assert len(answers) == 2 and all(answer.strip() for answer in answers)
    assert not any("Mode changed" in answer for answer in answers)
    assert "llama" not in result.stderr.lower()  # native logs stay out of the terminal


def test_a_failed_turn_in_a_pipe_exits_1_with_the_error_on_stderr(modes_home: Path) -> None:
    result = run_cli(
        "hi\n",
        "--model",
        "nosuchprovider-xyz/model",
        "chat",
        "--plain",
        "--classifier",
        "keyword",
        home=modes_home,
    )
    assert result.returncode == 1
    assert "error: " in result.stderr and "hint: " in result.stderr
    assert "error: " not in result.stdout
    assert result.stdout.startswith("[chat · by")  # the route line still reaches stdout


@pytest.mark.parametrize("key", ["\x03", "\x04"])
async def test_ctrl_c_or_ctrl_d_at_the_confirmation_question_declines(key: str) -> None:
    from modes_tui.core.model.wire import ToolCall
    from modes_tui.repl.questions import PromptConfirmer

    with create_pipe_input() as pipe:
        confirmer = PromptConfirmer(input=pipe, output=DummyOutput(), arming=0)
        asked = asyncio.create_task(
            confirmer.confirm(ToolCall("1", "run_command", {"command": "ls"}), None)
        )
        await answer_when_asked(confirmer, pipe, key)
        assert await within(asked) is False


async def test_yes_at_the_confirmation_question_runs() -> None:
    from modes_tui.core.model.wire import ToolCall
    from modes_tui.repl.questions import PromptConfirmer

    with create_pipe_input() as pipe:
        confirmer = PromptConfirmer(input=pipe, output=DummyOutput(), arming=0)
        asked = asyncio.create_task(
            confirmer.confirm(ToolCall("1", "run_command", {"command": "ls"}), None)
        )
        await answer_when_asked(confirmer, pipe, "y\r")
        assert await within(asked) is True


def test_a_repl_that_received_no_message_leaves_no_session(modes_home: Path) -> None:
    result = run_piped_chat("\n/help\n", home=modes_home)
    assert result.returncode == 0, result.stderr
    assert json.loads(run_cli("", "sessions", "--json", home=modes_home).stdout) == []


async def prepared_while(
    script: Callable[[Any, io.StringIO, list[str]], Awaitable[None]],
) -> list[str]:
    """What the REPL handed to `engine.prepare` while `script(pipe, out, prepared)` typed (the
    script leaves the REPL at its end)."""
    out = io.StringIO()
    engine = engine_with(ScriptedModel().script(ScriptedReply("Done.")))
    prepared: list[str] = []
    engine.prepare = prepared.append  # type: ignore[method-assign]
    with create_pipe_input() as pipe:
        running = asyncio.create_task(
            run_interactive(context_for(engine), Printer(out), input=pipe, output=DummyOutput())
        )
        await script(pipe, out, prepared)
        assert await running == 0
    return prepared


async def test_what_is_typed_is_prepared_for_its_route_after_a_pause_but_not_a_command() -> None:
    """As in the app: after a pause in typing the text goes to `engine.prepare` (off the
    event loop), so the route after Enter finds it encoded; a command is not routed."""

    async def script(pipe: Any, out: io.StringIO, prepared: list[str]) -> None:
        pipe.send_text("restart the docker container")
        await eventually(lambda: bool(prepared))
        pipe.send_text("\r")
        await eventually(lambda: "Done." in out.getvalue())
        pipe.send_text("/mode shell")
        await asyncio.sleep(0.5)
        pipe.send_text("\x15\x04")  # Ctrl+U clears the line, Ctrl+D leaves

    assert await prepared_while(script) == ["restart the docker container"]


async def test_a_line_sent_before_the_pause_is_not_prepared_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """prompt-toolkit keeps the sent text in the buffer until the next prompt: Enter within
    the pause must not hand the sent line to `prepare` while its own turn runs. A pause of
    zero stands for a loaded machine, where the prompt's own teardown after Enter outlasts
    the pause (CI caught this once at 0.15 s)."""
    monkeypatch.setattr("modes_tui.repl.prompt.DRAFT_PAUSE", 0.0)

    async def script(pipe: Any, out: io.StringIO, prepared: list[str]) -> None:
        pipe.send_text("restart the docker container\r")  # typed and sent at once
        await eventually(lambda: "Done." in out.getvalue())
        await asyncio.sleep(0.5)
        pipe.send_text("\x04")

    assert await prepared_while(script) == []


async def test_a_bracketed_paste_is_prepared_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in the app: pasted text arrives whole and is prepared without waiting for a pause
    (here a minute, so only the paste can have been prepared)."""
    monkeypatch.setattr("modes_tui.repl.prompt.DRAFT_PAUSE", 60.0)

    async def script(pipe: Any, out: io.StringIO, prepared: list[str]) -> None:
        pipe.send_text("\x1b[200~summarise this: the build broke twice\x1b[201~")
        await eventually(lambda: bool(prepared))
        pipe.send_text("\x15\x04")

    assert await prepared_while(script) == ["summarise this: the build broke twice"]


async def test_a_paste_shorter_than_the_line_sent_before_it_is_prepared_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """prompt-toolkit empties the buffer for the next prompt without a change event: the
    paste is measured from the new prompt's text, not from the line sent before it."""
    monkeypatch.setattr("modes_tui.repl.prompt.DRAFT_PAUSE", 60.0)

    async def script(pipe: Any, out: io.StringIO, prepared: list[str]) -> None:
        pipe.send_text("how do I restart the docker container named web-frontend\r")
        await eventually(lambda: "Done." in out.getvalue())
        pipe.send_text("\x1b[200~git log --oneline | head\x1b[201~")
        await eventually(lambda: bool(prepared))
        pipe.send_text("\x15\x04")

    assert await prepared_while(script) == ["git log --oneline | head"]


async def eventually(check: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)
