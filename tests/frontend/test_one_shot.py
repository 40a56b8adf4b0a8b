"""`/MODE text`: one message answered in MODE, decided by the caller; nothing stays forced.

The parse lives in the one command table (`modes_tui.frontend.commands`); the app and the REPL both
send the message with `force=MODE`, and the route says `one_shot` in the panel, the REPL
line, the session log and its replay. The control file is never touched.
"""

from __future__ import annotations

import io
import json
from datetime import UTC
from pathlib import Path

import pytest
from prompt_toolkit.document import Document

from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.core.values.route import Route
from modes_tui.frontend.commands import (
    Command,
    CommandError,
    OneShot,
    complete,
    mode_settings,
)
from modes_tui.frontend.lines import read_line as parse_command
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.repl import Printer, run_lines, slash_completer
from modes_tui.store.replay import replay
from modes_tui.store.session_reader import load_session
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.services import AppServices
from tests.repl.test_repl import context_for, engine_with
from tests.support.cli_support import run_piped_chat
from tests.support.pack_windows import SIZE, header, say, window
from tests.support.tui_support import started, until

DEFAULT = mode_settings(["chat", "code", "reason", "shell", "write"])
SUPPORT = mode_settings(["escalate", "help", "orders", "returns"])


# --------------------------------------------------------------------------- the parse


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("/code why is this slow", OneShot("code", "why is this slow")),
        ("/Code  why is this slow ", OneShot("code", "why is this slow")),
        ("/write a haiku\nabout tea", OneShot("write", "a haiku\nabout tea")),
        ("/mode code", Command("/mode", "code")),  # the command, not a mode called mode
    ],
)
def test_a_mode_name_after_the_slash_is_a_one_shot(line: str, expected: object) -> None:
    assert parse_command(line, DEFAULT) == expected


def test_commands_win_over_a_mode_of_the_same_name() -> None:
    # the support pack has a mode called `help`: `/help ...` stays the command
    with pytest.raises(CommandError, match="/help takes no argument"):
        parse_command("/help where is my parcel", SUPPORT)
    assert parse_command("/help", SUPPORT) == Command("/help")
    assert parse_command("/mode help", SUPPORT) == Command("/mode", "help")  # still forces
    assert parse_command("/returns it arrived broken", SUPPORT) == OneShot(
        "returns", "it arrived broken"
    )


def test_a_one_shot_without_a_message_is_an_error_that_says_what_to_type() -> None:
    with pytest.raises(CommandError) as caught:
        parse_command("/code", DEFAULT)
    assert str(caught.value) == (
        "type a message after /code: `/code why is this slow` answers that one message in "
        "code; `/mode code` forces code for what follows"
    )


def test_unknown_words_and_other_packs_modes_stay_unknown_commands() -> None:
    with pytest.raises(CommandError, match="unknown command /foo"):
        parse_command("/foo some text", DEFAULT)
    with pytest.raises(CommandError, match="unknown command /returns"):
        parse_command("/returns it broke", DEFAULT)  # a support mode in a default window
    with pytest.raises(CommandError, match="unknown command /auto"):
        parse_command("/auto hello", DEFAULT)  # auto and off are settings, not modes


def test_completion_offers_the_modes_after_the_commands() -> None:
    assert complete("/cod", DEFAULT) == "/code"
    assert complete("/wri", DEFAULT) == "/write"
    assert complete("/mo", DEFAULT) == "/mode"  # commands first
    assert complete("/ret", SUPPORT) == "/returns"
    assert complete("/ret", DEFAULT) is None


def test_the_repl_completer_offers_the_modes() -> None:
    completer = slash_completer(context_for(engine_with(ScriptedModel())))
    found = {c.text: c.display_meta_text for c in completer.get_completions(Document("/c"), None)}
    assert found["/code"] == "answer this one message in code"
    assert "/clear" in found  # the commands are still there
    assert not list(completer.get_completions(Document("/code wh"), None))


# --------------------------------------------------------------------------- the app


async def test_a_one_shot_answers_in_its_mode_and_the_next_message_routes_again(
    tmp_path: Path,
) -> None:
    win = window("default", tmp_path)
    win.model.script(ScriptedReply("Drafted."), ScriptedReply("Hello."))
    try:
        async with build_app(win.services, tz=UTC).run_test(size=SIZE) as pilot:
            app = await started(pilot)
            # the keyword classifier would send this to code: write means the caller decided
            await say(pilot, "/write my python script segfaults")
            first = app.conversation.records[-1].route
            assert isinstance(first, Route)
            assert (first.mode_name, first.decided_by, first.reason) == (
                "write",
                "caller",
                "Mode requested by caller",
            )
            assert first.one_shot and first.classifier is None and first.decision is None
            assert app.conversation.records[-1].user_text == "my python script segfaults"
            option = app.conversation.panel.entries[-1].option
            assert option is not None and "one-shot" in str(option.prompt)
            assert "setting auto" in header(app)
            await say(pilot, "hello there")
            second = app.conversation.records[-1].route
            assert second is not None and second.decided_by == "classifier"
            assert not second.one_shot
            assert [r.messages[-1]["content"] for r in win.model.requests] == [
                "my python script segfaults",
                "hello there",
            ]
            assert not win.control.path.exists()  # the control file was never written
    finally:
        win.log.close()


async def test_a_one_shot_sent_while_a_turn_runs_waits_and_keeps_its_mode(
    tmp_path: Path,
) -> None:
    win = window("default", tmp_path)
    win.model.script(ScriptedReply("word " * 200, chunk_size=5, delay=0.02), ScriptedReply("ok"))
    try:
        async with build_app(win.services, tz=UTC).run_test(size=SIZE) as pilot:
            app = await started(pilot)
            app.conversation.prompt.value = "hello there"
            await pilot.press("enter")
            await until(
                pilot,
                lambda: (
                    bool(app.conversation.records) and len(app.conversation.records[-1].answer) > 20
                ),
            )
            assert app.conversation.turns.running
            app.conversation.prompt.value = "/code and why is it slow"
            await pilot.press("enter")
            assert app.conversation.pending.texts == ["/code and why is it slow"]
            await until(
                pilot,
                lambda: len(app.conversation.records) == 2 and not app.conversation.turns.running,
                20,
            )
            route = app.conversation.records[-1].route
            assert route is not None and (route.mode_name, route.one_shot) == ("code", True)
            assert app.conversation.records[-1].user_text == "and why is it slow"
    finally:
        win.log.close()


async def test_typing_a_mode_name_completes_it_and_a_bare_one_is_refused(
    tmp_path: Path,
) -> None:
    win = window("default", tmp_path)
    try:
        async with build_app(win.services, tz=UTC).run_test(size=SIZE) as pilot:
            app = await started(pilot)
            await pilot.press(*"/cod")
            await pilot.press("tab")
            assert app.conversation.prompt.value == "/code"
            await pilot.press("enter")
            await pilot.pause(0.05)
            assert "type a message after /code" in str(app.conversation.status.render())
            assert app.conversation.prompt.value == "/code"  # nothing typed is lost
            assert not app.conversation.records
            assert not win.control.path.exists()
    finally:
        win.log.close()


async def test_the_session_log_and_its_replay_say_one_shot(tmp_path: Path) -> None:
    win = window("default", tmp_path)
    win.model.script(ScriptedReply("Drafted."), ScriptedReply("Hello."))
    try:
        async with build_app(win.services, tz=UTC).run_test(size=SIZE) as pilot:
            app = pilot.app
            assert isinstance(app, ModesApp)
            await until(pilot, lambda: app.conversation.engine is not None)
            await say(pilot, "/write a haiku about tea")
            await say(pilot, "hello there")
    finally:
        win.log.close()
    lines = [json.loads(line) for line in win.log.path.read_text().splitlines()]
    routes = [line["route"] for line in lines if line["type"] == "route"]
    assert routes[0]["decided_by"] == "caller" and routes[0]["one_shot"] is True
    assert "one_shot" not in routes[1]  # an ordinary route is written as before
    replayed = replay(load_session(win.log.id, app_dirs()))
    shown = [turn.route for turn in replayed.turns]
    assert [(r.mode_name, r.one_shot) for r in shown if r is not None] == [
        ("write", True),
        ("chat", False),
    ]


# --------------------------------------------------------------------------- the REPL


async def test_the_repl_sends_a_one_shot_and_a_literal_slash() -> None:
    model = ScriptedModel()
    out = io.StringIO()
    context = context_for(engine_with(model))
    lines = ["/write my python script segfaults", "my python script segfaults", "//etc/hosts?"]
    assert await run_lines(lines, context, Printer(out)) == 0
    routes = [line for line in out.getvalue().splitlines() if line.startswith("[")]
    assert routes[0] == "[write · by caller · one-shot]"
    assert routes[1].startswith("[code · by classifier")  # the next one routes again
    sent = [r.messages[-1]["content"] for r in model.requests]
    assert sent == ["my python script segfaults", "my python script segfaults", "/etc/hosts?"]


async def test_the_repl_refuses_a_bare_one_shot_and_runs_nothing() -> None:
    model = ScriptedModel()
    out = io.StringIO()
    assert await run_lines(["/code"], context_for(engine_with(model)), Printer(out)) == 0
    assert out.getvalue().startswith("error: type a message after /code")
    assert not model.requests


def test_a_piped_one_shot_leaves_no_control_file(modes_home: Path) -> None:
    result = run_piped_chat("/code why is this slow\nhello there\n", home=modes_home)
    assert result.returncode == 0, result.stderr
    routes = [line for line in result.stdout.splitlines() if line.startswith("[")]
    assert routes[0] == "[code · by caller · one-shot]"
    assert routes[1].startswith("[chat · by classifier")
    assert "You said: why is this slow" in result.stdout
    assert not any(modes_home.rglob("state.json"))


def test_the_support_pack_one_shot_reaches_its_mode() -> None:
    pack = load_pack("support")
    assert parse_command("/orders where is 1042", mode_settings(pack.names)) == OneShot(
        "orders", "where is 1042"
    )


async def test_a_one_shot_typed_while_the_app_starts_says_why_and_keeps_the_text(
    tmp_path: Path,
) -> None:
    import threading

    gate = threading.Event()
    win = window("default", tmp_path)
    win.model.script(ScriptedReply("Drafted."))

    def prepare() -> AppServices:
        gate.wait(5)  # the pack is not loaded yet: its modes are unknown
        return win.services

    try:
        async with build_app(prepare=prepare, tz=UTC).run_test(size=SIZE) as pilot:
            app = pilot.app
            assert isinstance(app, ModesApp)
            await pilot.pause(0.1)
            assert not app.started
            app.conversation.prompt.value = "/write a haiku about tea"
            await pilot.press("enter")
            await pilot.pause(0.05)
            shown = str(app.conversation.status.render())
            assert "unknown command /write" in shown and "modes-tui is still starting" in shown
            assert (
                app.conversation.prompt.value == "/write a haiku about tea"
            )  # nothing typed is lost
            gate.set()
            await until(pilot, lambda: app.conversation.engine is not None)
            await pilot.press("enter")  # the same line, once the modes are known
            await until(
                pilot, lambda: bool(app.conversation.records) and not app.conversation.turns.running
            )
            route = app.conversation.records[-1].route
            assert route is not None and (route.mode_name, route.one_shot) == ("write", True)
    finally:
        win.log.close()


# --------------------------------------------------------------------------- retry


async def test_a_retried_one_shot_is_answered_in_its_mode_again() -> None:
    # the keyword classifier sends this to code: a retry that routed it would lose the
    # `/write` the user typed; the message after it routes again
    from modes_tui.core.history.events import RouteDecided, TextDelta

    model = ScriptedModel()
    model.script(ScriptedReply("word " * 50, chunk_size=5), ScriptedReply("Drafted."))
    engine = engine_with(model)
    routes: list[Route] = []
    async for event in engine.run_turn("my python script segfaults", force="write"):
        if isinstance(event, RouteDecided):
            routes.append(event.route)
        if isinstance(event, TextDelta):
            engine.cancel()
    async for event in engine.retry():
        if isinstance(event, RouteDecided):
            routes.append(event.route)
    async for event in engine.run_turn("my python script segfaults"):
        if isinstance(event, RouteDecided):
            routes.append(event.route)
    assert [(r.mode_name, r.decided_by, r.one_shot) for r in routes] == [
        ("write", "caller", True),
        ("write", "caller", True),
        ("code", "classifier", False),
    ]


async def test_editing_a_one_shot_turn_replaces_it_in_its_mode(tmp_path: Path) -> None:
    # up shows the line as typed (`/write ...`): Enter replaces the turn ("Enter replaces
    # it", the status line says) in that mode; a literal slash comes back escaped
    win = window("default", tmp_path)
    win.model.script(
        ScriptedReply("One."), ScriptedReply("Two."), ScriptedReply("Three."), ScriptedReply("4")
    )
    try:
        async with build_app(win.services, tz=UTC).run_test(size=SIZE) as pilot:
            app = await started(pilot)
            await say(pilot, "/write my python scirpt segfaults")
            await pilot.press("up")
            assert app.conversation.prompt.value == "/write my python scirpt segfaults"
            assert "Editing turn 1" in str(app.conversation.status.render())
            await say(pilot, "/write my python script segfaults")
            assert app.conversation.records[0].superseded_by == 2
            route = app.conversation.records[-1].route
            assert route is not None and (route.mode_name, route.one_shot) == ("write", True)
            assert app.conversation.records[-1].user_text == "my python script segfaults"
            await say(pilot, "//etc/hosts is empty")
            await pilot.press("up")
            assert app.conversation.prompt.value == "//etc/hosts is empty"
            await say(pilot, "//etc/hosts is empty, why")
            assert app.conversation.records[2].superseded_by == 4
            assert app.conversation.records[-1].user_text == "/etc/hosts is empty, why"
            assert [r.messages[-1]["content"] for r in win.model.requests] == [
                "my python scirpt segfaults",
                "my python script segfaults",
                "/etc/hosts is empty",
                "/etc/hosts is empty, why",
            ]
    finally:
        win.log.close()
