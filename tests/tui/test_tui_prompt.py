"""Pilot tests of the prompt and the flows around it: multi-line input, type-ahead, editing
the last message, copying the answer, small terminals, errors that stay, palette actions,
the saved theme, failing tools and plural forms."""

from __future__ import annotations

import asyncio
from datetime import UTC

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import Button

from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import ToolCallFinished, ToolCallRequested, TurnFinished
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.pending import PendingRow
from modes_tui.tui.turn_view import ToolCallView, TurnView
from tests.support.tui_support import (
    ScriptEngine,
    answer_events,
    palette_lists,
    plain,
    request,
    services,
    tool_call,
    type_word,
)
from tests.tui.test_tui_app import (
    FakeSessions,
    chat_text,
    header,
    idle,
    ready,
    replayed,
    send,
    until,
)

SIZE = (120, 40)


# --------------------------------------------------------------------------- drafts


async def test_what_is_typed_is_prepared_for_its_route_after_a_pause_but_not_a_command() -> None:
    """After a pause in typing the text goes to the engine (`TurnEngine.prepare`), which
    encodes it ahead so the route after Enter finds it encoded; a command is not routed."""
    engine = ScriptEngine()
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        typed = "restart the docker container"
        await type_word(pilot, typed, lambda: typed in engine.prepared)
        # prefixes when the machine paused between keys, the whole text last
        assert engine.prepared[-1] == typed
        assert all(typed.startswith(d) for d in engine.prepared)
        await pilot.press("enter")
        await until(pilot, idle(app))
        await pilot.pause(0.3)
        assert engine.texts == [typed] and engine.prepared[-1] == typed  # nothing for ""
        engine.prepared.clear()
        await type_word(pilot, "/mode shell", lambda: app.conversation.prompt.value != "")
        await pilot.pause(0.3)
        assert engine.prepared == []


async def test_a_paste_is_prepared_at_once_and_a_key_typed_after_it_waits_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A paste arrives whole: no more keys are coming and Enter may follow within the pause,
    so it goes to the engine at once; typing on waits for a pause again (here a minute)."""
    monkeypatch.setattr("modes_tui.tui.prompt.DRAFT_PAUSE", 60.0)
    engine = ScriptEngine()
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        pasted = "why does this fail: KeyError: 'user'"
        app.post_message(events.Paste(pasted))
        await until(pilot, lambda: engine.prepared == [pasted])
        await pilot.press("x")
        await pilot.pause(0.3)
        assert engine.prepared == [pasted] and app.conversation.prompt.value == pasted + "x"


async def test_a_burst_of_typed_keys_waits_for_the_pause_like_typing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Keys queued while the app was busy (a slow link) reach the prompt before its change
    event: many characters change at once, but it is typing, not a paste."""
    monkeypatch.setattr("modes_tui.tui.prompt.DRAFT_PAUSE", 60.0)
    engine = ScriptEngine()
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        prompt = app.conversation.prompt
        for key in "restart nginx":
            prompt.post_message(events.Key("space" if key == " " else key, key))
        await until(pilot, lambda: prompt.value == "restart nginx")
        await pilot.pause(0.3)
        assert engine.prepared == []


# --------------------------------------------------------------------------- multi-line


async def test_new_lines_are_typed_with_ctrl_j_or_shift_enter_and_enter_sends_them_all() -> None:
    engine = ScriptEngine()
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await pilot.press(*"first", "ctrl+j", *"second", "shift+enter", *"third")
        assert app.conversation.prompt.value == "first\nsecond\nthird"
        assert engine.texts == []  # nothing was sent by the new lines
        await pilot.press("enter")
        await until(pilot, idle(app))
        assert engine.texts == ["first\nsecond\nthird"]
        assert "first\nsecond\nthird" in chat_text(app)
        assert app.conversation.prompt.value == ""


async def test_a_pasted_traceback_stays_whole_until_enter() -> None:
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n'
        "    main()\n"
        "NameError: name 'main' is not defined"
    )
    engine = ScriptEngine()
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        app.post_message(events.Paste(traceback))
        await until(pilot, lambda: app.conversation.prompt.value == traceback)
        assert engine.texts == []
        await pilot.press("enter")
        await until(pilot, lambda: engine.texts == [traceback])


async def test_the_prompt_grows_with_its_text_then_scrolls() -> None:
    async with build_app(services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        empty = app.conversation.prompt.outer_size.height
        app.conversation.prompt.value = "one\ntwo\nthree"
        await pilot.pause(0.1)
        three = app.conversation.prompt.outer_size.height
        assert three == empty + 2
        app.conversation.prompt.value = "\n".join(f"line {n}" for n in range(30))
        await pilot.pause(0.1)
        assert (
            app.conversation.prompt.outer_size.height == 8
        )  # six lines and the border; the rest scrolls
        assert app.conversation.prompt.max_scroll_y > 0


async def test_completion_shows_as_ghost_text_and_tab_takes_it() -> None:
    async with build_app(services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await pilot.press(*"/mo")
        await pilot.pause(0.05)
        assert app.conversation.prompt.suggestion == "de"
        await pilot.press("tab")
        assert app.conversation.prompt.value == "/mode"
        await pilot.press("ctrl+j", *"/mo")
        await pilot.pause(0.05)
        assert (
            app.conversation.prompt.suggestion == ""
        )  # a multi-line text is a message, not a command


# --------------------------------------------------------------------------- type-ahead


async def test_messages_sent_while_a_turn_runs_wait_and_then_run_in_order() -> None:
    steps = asyncio.Semaphore(0)
    engine = ScriptEngine(steps=steps).script(
        answer_events("slow answer", "chat", "first", chunk=4),
        answer_events("b", "chat", "second"),
        answer_events("c", "chat", "third"),
    )
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "first")
        await until(pilot, lambda: app.conversation.turns.running)
        await send(pilot, "second")
        await send(pilot, "third\nwith a second line")
        await until(pilot, lambda: len(app.conversation.pending) == 2)
        assert app.conversation.prompt.value == ""  # taken, not refused
        assert app.conversation.pending.display
        rows = [
            plain(row.query_one(".pending-text"))
            for row in app.conversation.pending.query(PendingRow)
        ]
        assert "second" in rows[0] and "third  (+1 line)" in rows[1]
        assert "2 messages waiting" in plain(app.conversation.status)
        assert engine.texts == ["first"]
        for _ in range(20):
            steps.release()
        await until(pilot, lambda: len(engine.texts) == 3 and idle(app)())
        assert engine.texts == ["first", "second", "third\nwith a second line"]
        assert [r.user_text for r in app.conversation.records] == engine.texts
        assert not app.conversation.pending.display


def burst(app: object, text: str) -> None:
    """`text` as a terminal hands it over in one read ("\r" is Enter): every key is queued
    before the app handles any of them, as when someone types on right after Enter."""
    driver = app._driver  # type: ignore[attr-defined]
    for char in text:
        key = {"\r": "enter", " ": "space"}.get(char, char)
        driver.send_message(events.Key(key, char))


async def test_keys_typed_right_after_enter_stay_in_the_prompt() -> None:
    engine = ScriptEngine().script(answer_events("hi", "chat", "hello there"))
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        burst(app, "hello there\rmore text")
        await until(pilot, lambda: engine.texts == ["hello there"] and idle(app)())
        assert app.conversation.prompt.value == "more text"  # was wiped with the sent line
        assert [r.user_text for r in app.conversation.records] == ["hello there"]


async def test_two_messages_sent_in_one_terminal_read_are_both_answered_in_order() -> None:
    engine = ScriptEngine().script(
        answer_events("one", "chat", "first"), answer_events("two", "chat", "second")
    )
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        burst(app, "first\rsecond\r")  # the second Enter comes before the first turn starts
        await until(pilot, lambda: len(app.conversation.records) == 2 and idle(app)())
        assert engine.texts == ["first", "second"]
        assert [r.status for r in app.conversation.records] == ["finished", "finished"]
        assert [r.answer for r in app.conversation.records] == ["one", "two"]


async def test_a_refused_command_comes_back_before_what_was_typed_after_it() -> None:
    async with build_app(services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        burst(app, "/mdoe code\rhello")
        await until(pilot, lambda: "did you mean /mode" in plain(app.conversation.status))
        assert (
            app.conversation.prompt.value == "/mdoe code\nhello"
        )  # both kept, the command to be fixed


def slow_first() -> tuple[asyncio.Semaphore, ScriptEngine]:
    """An engine whose one turn, "first", streams a chunk per `steps.release()`."""
    steps = asyncio.Semaphore(0)
    return steps, ScriptEngine(steps=steps).script(answer_events("slow", "chat", "first", chunk=1))


async def first_running(pilot: Pilot[None]) -> ModesApp:
    """The app once its engine is built, with "first" sent and still running."""
    app = await ready(pilot)
    await send(pilot, "first")
    await until(pilot, lambda: app.conversation.turns.running)
    return app


async def test_a_waiting_message_can_be_edited_or_removed_before_it_starts() -> None:
    steps, engine = slow_first()
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await first_running(pilot)
        await send(pilot, "drop me")
        await send(pilot, "fix me")
        await send(pilot, "keep me")
        await until(pilot, lambda: len(app.conversation.pending) == 3)
        rows = list(app.conversation.pending.query(PendingRow))
        await pilot.click(f"#{rows[0].query_one('.drop', Button).id}")
        await until(pilot, lambda: app.conversation.pending.texts == ["fix me", "keep me"])
        await pilot.click(f"#{rows[1].query_one('.edit', Button).id}")
        await until(pilot, lambda: app.conversation.pending.texts == ["keep me"])
        assert app.conversation.prompt.value == "fix me"
        app.conversation.prompt.focus()
        app.conversation.prompt.value = "fixed"
        await pilot.press("enter")
        await until(pilot, lambda: app.conversation.pending.texts == ["keep me", "fixed"])
        # Up in an empty prompt takes the newest waiting message back.
        await pilot.press("up")
        await until(pilot, lambda: app.conversation.prompt.value == "fixed")
        assert app.conversation.pending.texts == ["keep me"]
        await pilot.press("enter")
        for _ in range(20):
            steps.release()
        await until(pilot, lambda: len(engine.texts) == 3 and idle(app)())
        assert engine.texts == ["first", "keep me", "fixed"]


# --------------------------------------------------------------------------- edit and copy


async def test_up_in_an_empty_prompt_edits_the_last_message_and_resend_replaces_the_turn() -> None:
    engine = ScriptEngine().script(
        answer_events("one", "chat", "first"),
        answer_events("wrong", "chat", "secnod"),
        answer_events("right", "code", "second"),
    )
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "first")
        await until(pilot, lambda: len(app.conversation.records) == 1 and idle(app)())
        await send(pilot, "secnod")
        await until(pilot, lambda: len(app.conversation.records) == 2 and idle(app)())
        await pilot.press("up")
        assert app.conversation.prompt.value == "secnod"
        assert "Editing turn 2" in plain(app.conversation.status)
        app.conversation.prompt.value = "second"
        await pilot.press("enter")
        await until(pilot, lambda: len(app.conversation.records) == 3 and idle(app)())
        assert engine.resent == ["second"]
        assert [m.content for m in engine.conversation] == ["first", "one", "second", "right"]
        old = app.conversation.records[1]
        assert old.superseded_by == 3
        shown = [view.record.number for view in app.conversation.chat.query(TurnView)]
        assert shown == [1, 3]  # the edited turn took the old one's place
        assert "wrong" not in chat_text(app) and "right" in chat_text(app)
        card = str(app.conversation.panel.options.get_option_at_index(1).prompt)
        assert "#2" in card and "edited → #3" in card


async def test_escape_drops_an_edit_and_keeps_the_turn() -> None:
    engine = ScriptEngine().script(answer_events("one", "chat", "first"))
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "first")
        await until(pilot, lambda: len(app.conversation.records) == 1 and idle(app)())
        await pilot.press("up")
        assert app.conversation.prompt.value == "first"
        await pilot.press("escape")
        assert app.conversation.prompt.value == "" and app.conversation.turns.editing is None
        await send(pilot, "another")
        await until(pilot, lambda: len(app.conversation.records) == 2 and idle(app)())
        assert engine.resent == [] and engine.texts == ["first", "another"]


async def test_copy_puts_the_last_answer_on_the_clipboard_and_says_how() -> None:
    engine = ScriptEngine().script(answer_events("the **answer**", "chat", "q"))
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await pilot.press("ctrl+l")
        assert "No answer to copy yet" in plain(app.conversation.status)
        await send(pilot, "q")
        await until(pilot, lambda: len(app.conversation.records) == 1 and idle(app)())
        await pilot.press("ctrl+l")
        assert app.clipboard == "the **answer**"
        assert "Copied the answer of turn 1 (14 characters)" in plain(app.conversation.status)
        assert "/export" in plain(app.conversation.status)  # what to do if the terminal ignored it
        app.copy_to_clipboard("")
        await send(pilot, "/copy")
        await until(pilot, lambda: app.clipboard == "the **answer**")


# --------------------------------------------------------------------------- small terminals


async def test_below_100_columns_the_panel_floats_over_the_chat_on_demand() -> None:
    engine = ScriptEngine().script(answer_events("hi", "code", "bug"))
    async with build_app(services(engine, model="local/gemma-3-270m"), tz=UTC).run_test(
        size=(80, 24)
    ) as pilot:
        app = await ready(pilot)
        await send(pilot, "bug")
        await until(pilot, lambda: len(app.conversation.records) == 1 and idle(app)())
        assert not app.conversation.panel.display
        assert app.conversation.chat.size.width >= 78  # the chat has the whole width
        route_line = app.conversation.chat.query_one(TurnView).query_one(".route")
        assert route_line.size.height == 1  # the one-line route strip
        screen = app.export_screenshot().replace("&#160;", " ")
        assert "local/gemma-3-270m" in screen  # the header keeps the model whole
        await pilot.press("ctrl+b")
        await pilot.pause(0.1)
        assert app.conversation.panel.display and app.conversation.panel.has_class("-overlay")
        assert app.conversation.panel.region.right == 80 and app.conversation.chat.size.width >= 78
        await pilot.press("ctrl+b")
        await pilot.pause(0.05)
        assert not app.conversation.panel.display


async def test_the_panel_comes_back_beside_the_chat_when_the_terminal_widens() -> None:
    async with build_app(services(), tz=UTC).run_test(size=(80, 24)) as pilot:
        app = await ready(pilot)
        assert not app.conversation.panel.display
        await pilot.resize_terminal(150, 45)
        await pilot.pause(0.1)
        assert app.conversation.panel.display and not app.conversation.panel.has_class("-overlay")
        assert app.conversation.chat.size.width + app.conversation.panel.size.width <= 150


async def test_header_and_footer_never_show_a_value_cut_short() -> None:
    from modes_tui.tui.footer import KeysFooter

    async with build_app(services(model="local/gemma-3-270m"), tz=UTC).run_test(
        size=(80, 24)
    ) as pilot:
        app = await ready(pilot)
        await pilot.press("f3")
        await until(pilot, lambda: "forced code" in header(app))
        drawn = app.conversation.header.render_text(app.conversation.header.size.width - 2).plain
        for value in ("code", "forced\u00a0code", "default", "local/gemma-3-270m"):
            assert value in drawn
        footer = app.query_one(KeysFooter)
        keys = [k for k in footer.query("FooterKey") if not k.has_class("-command-palette")]
        assert keys and max(k.region.right for k in keys) <= 80 - 12  # none under ^p palette


# --------------------------------------------------------------------------- errors


async def test_command_errors_stay_visible_after_the_prompt_clears() -> None:
    async with build_app(services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "/why")
        await pilot.pause(0.2)
        assert app.conversation.prompt.value == ""
        assert "No turn yet" in plain(
            app.conversation.status
        ) and app.conversation.status.has_class("-error")
        await send(pilot, "/export")
        await pilot.pause(0.2)
        assert "Nothing to export yet" in plain(app.conversation.status)
        await pilot.press(*"typing on")
        await pilot.pause(0.1)
        assert "Nothing to export yet" in plain(app.conversation.status)  # typing does not hide it


async def test_quit_command_leaves_the_app() -> None:
    app = build_app(services(), tz=UTC)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/quit")
        await pilot.pause(0.2)
        assert not app.is_running


async def test_quitting_with_a_draft_asks_for_a_second_quit_and_keeps_the_draft() -> None:
    app = build_app(services(), tz=UTC)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press(*"half a thought")
        await pilot.press("ctrl+q")
        await pilot.pause(0.2)
        assert app.is_running  # not dropped unseen
        assert app.conversation.prompt.value == "half a thought"
        status = plain(app.conversation.status)
        assert "Quitting drops your draft" in status and "ctrl+q or /quit again" in status
        await pilot.press("ctrl+q")
        await pilot.pause(0.2)
        assert not app.is_running


async def test_quit_with_waiting_messages_names_them_and_an_empty_prompt_quits_at_once() -> None:
    steps = asyncio.Semaphore(0)
    engine = ScriptEngine(steps=steps).script(answer_events("slow answer", "chat", "first"))
    app = build_app(services(engine), tz=UTC)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "first")
        await until(pilot, lambda: app.conversation.turns.running)
        await send(pilot, "second")
        await send(pilot, "third")
        await until(pilot, lambda: len(app.conversation.pending) == 2)
        await send(pilot, "/quit")
        await pilot.pause(0.2)
        assert app.is_running
        assert "Quitting drops 2 waiting messages" in plain(app.conversation.status)
        await send(pilot, "/quit")
        await pilot.pause(0.2)
        assert not app.is_running
    quiet = build_app(services(), tz=UTC)
    async with quiet.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press(*"   ")  # only spaces: nothing worth keeping
        await pilot.press("ctrl+q")
        await pilot.pause(0.2)
        assert not quiet.is_running


async def test_the_palette_lists_every_action_of_the_chat_screen() -> None:
    async with build_app(services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        titles = [title for title, _, _ in app.conversation.palette_actions()]
        for wanted in ("route panel (ctrl+b)", "Why?", "Copy the last answer (ctrl+l)", "Quit"):
            assert any(wanted in title for title in titles), wanted
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        await pilot.press(*"route panel")
        await palette_lists(pilot, "route panel")
        await pilot.press("enter")
        await until(pilot, lambda: not app.conversation.panel.display)


async def test_a_theme_picked_while_running_is_saved() -> None:
    saved: list[str] = []

    def save(name: str) -> str:
        saved.append(name)
        return "/config/config.yaml"

    async with build_app(services(save_theme=save, theme="textual-dark"), tz=UTC).run_test(
        size=SIZE
    ) as pilot:
        app = await ready(pilot)
        await pilot.pause(0.05)
        assert saved == []  # the theme given at start is not written back
        app.theme = "nord"
        await until(pilot, lambda: saved == ["nord"])
        assert "Theme nord saved to /config/config.yaml" in plain(app.conversation.status)


async def test_a_theme_that_does_not_exist_is_named_as_a_settings_error_not_a_crash() -> None:
    # it used to end the app with Textual's InvalidThemeError traceback, and exit code 0
    given = services(theme="nosuchtheme", theme_origin="/home/me/.config/modes-tui/config.yaml")
    async with build_app(given, tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        assert app.is_running and app.theme == "textual-dark"
        said = " ".join(str(n.message) for n in app._notifications)
        assert "/home/me/.config/modes-tui/config.yaml: theme 'nosuchtheme' is not one" in said
        assert "Themes: ansi-dark" in said and "nord" in said


async def test_a_command_that_exits_with_128_shows_as_failed_not_ok() -> None:
    call = tool_call("run_command", command="git push")
    engine = ScriptEngine().script(
        [
            *answer_events("", "shell", "push")[:2],
            ToolCallRequested(call),
            ToolCallFinished(call, "ok", '{"exit_code": 128, "output": "fatal: no remote"}', 9.0),
            request("shell", "push", round=2),
            TurnFinished(Message("assistant", "It failed.", mode="shell")),
        ]
    )
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "push")
        await until(pilot, lambda: len(app.conversation.records) == 1 and idle(app)())
        shown = plain(app.conversation.chat.query_one(ToolCallView))
        assert "failed: exit code 128" in shown and "  ok" not in shown


async def test_one_turn_is_one_turn() -> None:
    sessions = FakeSessions(replayed(1))
    async with build_app(services(sessions=sessions), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "/replay 20260314-092653-abcd")
        await until(pilot, lambda: app.screen.__class__.__name__ == "ReplayScreen")
        title = plain(app.screen.query_one("#replay-title"))
        assert "1 turn ·" in title and "1 turns" not in title


# --------------------------------------------------------------------------- first start


async def test_the_status_line_shows_a_bar_with_the_model_loading_phases() -> None:
    import threading

    from modes_tui.tui.startup import LoadProgress

    progress = LoadProgress()
    gate = threading.Event()
    engine = ScriptEngine()
    app_services = services(engine, load_progress=progress)
    build = app_services.build_engine

    def slow_build(confirmer):  # the CLI's factory reports as it goes, in a worker thread
        progress.report("assembling gemma-3-270m-q4_k_m.gguf: part 2 of 4", 0.45)
        gate.wait(5)
        return build(confirmer)

    app_services.build_engine = slow_build
    async with build_app(app_services, tz=UTC).run_test(size=SIZE) as pilot:
        app = pilot.app
        await until(pilot, lambda: "part 2 of 4" in plain(app.conversation.status))
        status = plain(app.conversation.status)
        assert "█████░░░░░░░ 45%" in status and "Loading scripted/demo" in status
        progress.report("loading the model into llama.cpp", 0.8)
        await until(pilot, lambda: "80% · loading the model" in plain(app.conversation.status))
        gate.set()
        await until(pilot, lambda: app.conversation.engine is not None)
        await pilot.pause(0.2)
        assert "Enter sends" in plain(app.conversation.status) and "%" not in plain(
            app.conversation.status
        )
