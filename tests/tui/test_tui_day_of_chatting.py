"""Pilot tests of the faults found in a day of chatting (issue 20, item 9): typing reaches
the prompt after any overlay or click, a failed retry keeps the earlier partial answer,
ctrl+r retries a cancelled turn, failure cards never clip, soft line breaks stay in
answers, and a mistyped command gets a "did you mean"."""

from __future__ import annotations

import asyncio
import html
import io
import re
from datetime import UTC

import pytest
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Button, Static

from modes_tui.core.history.events import ReasoningDelta, TextDelta, TurnFailed
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.inspector import InspectorScreen
from modes_tui.tui.pending import PendingRow
from modes_tui.tui.turn_view import TurnNote
from tests.support.tui_support import ScriptEngine, answer_events, plain, services, until
from tests.tui.test_tui_app import FakeSessions, chat_text, idle, ready, replayed, send
from tests.tui.test_tui_prompt import first_running, slow_first

SIZE = (120, 40)


async def typing_reaches_the_prompt(pilot: Pilot[None], app: ModesApp) -> None:
    """What the user checks: the next keys land in the prompt."""
    await until(pilot, lambda: len(app.screen_stack) == 1)
    await pilot.pause()
    await pilot.press(*"hi there")
    assert app.conversation.prompt.value.endswith("hi there"), (
        app.focused,
        app.conversation.prompt.value,
    )


# --------------------------------------------------------------------------- focus


async def test_after_a_click_on_a_route_card_and_esc_typing_reaches_the_prompt() -> None:
    async with build_app(services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "hello")
        await until(pilot, idle(app))
        await pilot.click("#decisions")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await pilot.press("escape")
        await typing_reaches_the_prompt(pilot, app)


@pytest.mark.parametrize("where", ["chat", "panel", "reasoning"])
async def test_after_a_click_away_from_the_prompt_and_esc_typing_reaches_the_prompt(
    where: str,
) -> None:
    engine = ScriptEngine().script(
        [
            *answer_events("ok", "chat", "hello")[:2],
            ReasoningDelta("let me think"),
            *answer_events("ok", "chat", "hello")[2:],
        ]
    )
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "hello")
        await until(pilot, idle(app))
        if where == "chat":
            await pilot.click("#chat")
        elif where == "reasoning":
            await pilot.click("CollapsibleTitle")
        else:  # keyboard users reach the panel with tab
            app.conversation.panel.options.focus()
        await pilot.pause()
        assert app.focused is not app.conversation.prompt
        await pilot.press("escape")
        await typing_reaches_the_prompt(pilot, app)


async def test_after_the_cross_of_a_waiting_message_typing_reaches_the_prompt() -> None:
    steps, engine = slow_first()
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await first_running(pilot)
        await send(pilot, "drop me")
        await send(pilot, "keep me")
        await until(pilot, lambda: len(app.conversation.pending) == 2)
        row = app.conversation.pending.query(PendingRow).first()
        await pilot.click(f"#{row.query_one('.drop', Button).id}")
        await until(pilot, lambda: app.conversation.pending.texts == ["keep me"])
        await typing_reaches_the_prompt(pilot, app)
        for _ in range(20):
            steps.release()


async def open_and_close(pilot: Pilot[None], app: ModesApp, how: str) -> None:
    """Open an overlay `how`, with the focus away from the prompt, then close it with esc."""
    app.conversation.panel.options.focus()  # e.g. after a click on a route card
    await pilot.pause()
    if how.startswith("/"):
        app.conversation.prompt.value = how
        app.conversation.prompt.focus()
        await pilot.press("enter")
        await pilot.pause()
        app.conversation.panel.options.focus()
        await pilot.pause()
    else:
        await pilot.press(how)
    await until(pilot, lambda: len(app.screen_stack) > 1)
    await pilot.pause()
    await pilot.press("escape")


@pytest.mark.parametrize(
    "how",
    ["ctrl+t", "ctrl+e", "ctrl+p", "f1"],
    ids=["inspector", "correct picker", "palette", "help"],
)
async def test_after_an_overlay_closes_typing_reaches_the_prompt(how: str) -> None:
    async with build_app(services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "hello")
        await until(pilot, idle(app))
        if how == "f1":  # help is a note in the chat, not an overlay: esc from the panel
            app.conversation.panel.options.focus()
            await pilot.press("f1", "escape")
        else:
            await open_and_close(pilot, app, how)
        await typing_reaches_the_prompt(pilot, app)


async def test_after_the_sessions_picker_and_a_replay_close_typing_reaches_the_prompt() -> None:
    sessions = FakeSessions(replayed())
    async with build_app(services(sessions=sessions), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        app.conversation.panel.options.focus()
        await pilot.pause()
        await open_and_close(pilot, app, "/sessions")
        await typing_reaches_the_prompt(pilot, app)
        app.conversation.prompt.value = ""
        app.conversation.prompt.focus()
        await pilot.press(*"/sessions", "enter")
        await until(pilot, lambda: len(app.screen_stack) > 1)
        await pilot.pause()
        await pilot.press("enter")  # replay the highlighted session
        await until(pilot, lambda: type(app.screen).__name__ == "ReplayScreen")
        await pilot.pause()
        await pilot.press("escape")
        await typing_reaches_the_prompt(pilot, app)


async def test_after_the_retry_button_is_clicked_typing_reaches_the_prompt() -> None:
    failing = [*answer_events("", "chat", "hello")[:2], TurnFailed("Rate limit", "rate_limit")]
    engine = ScriptEngine().script(failing, answer_events("Hello again!", "chat", "hello"))
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "hello")
        await until(pilot, lambda: app.conversation.records[-1].status == "failed" and idle(app)())
        await pilot.click("#retry")
        await until(
            pilot, lambda: app.conversation.records[-1].status == "finished" and idle(app)()
        )
        await typing_reaches_the_prompt(pilot, app)


# --------------------------------------------------------------------------- retry


def failed_after(text: str) -> list:
    """A turn that streams `text`, then fails with a retryable error."""
    return [
        *answer_events("", "chat", "write a haiku")[:2],
        TextDelta(text),
        TurnFailed("Connection reset by peer", "connection", "Retry.", partial=text),
    ]


def failed_at_once(error: str = "Rate limit reached") -> list:
    """A retry that fails before any text."""
    return [
        *answer_events("", "chat", "write a haiku")[:2],
        TurnFailed(error, "rate_limit", "Wait a minute and retry."),
    ]


async def test_a_failed_retry_keeps_the_earlier_partial_answer_on_screen() -> None:
    engine = ScriptEngine().script(
        failed_after("Autumn moonlight,"), failed_at_once(), failed_at_once("Still limited")
    )
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "write a haiku")
        await until(pilot, lambda: app.conversation.records[-1].status == "failed" and idle(app)())
        for attempt in (2, 3):
            await pilot.press("ctrl+r")
            await until(
                pilot,
                lambda n=attempt: (
                    app.conversation.records[-1].attempt == n
                    and app.conversation.records[-1].status == "failed"
                    and idle(app)()
                ),
            )
            record = app.conversation.records[-1]
            assert record.answer == "Autumn moonlight,"  # recorded: /copy and /export read it
            segments = list(app.conversation.chat.query("AnswerSegment"))
            assert [s.source for s in segments] == ["Autumn moonlight,"]
            note = plain(app.conversation.chat.query_one(".note-text"))
            assert "Still limited" in note or "Rate limit reached" in note
            assert f"attempt {attempt} gave no text" in note
            assert "attempt 1's" in note


async def test_a_retry_with_text_of_its_own_replaces_the_earlier_partial_answer() -> None:
    engine = ScriptEngine().script(
        failed_after("Autumn moonlight,"), answer_events("A whole haiku.", "chat", "haiku")
    )
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "write a haiku")
        await until(pilot, lambda: app.conversation.records[-1].status == "failed" and idle(app)())
        await pilot.press("ctrl+r")
        await until(
            pilot, lambda: app.conversation.records[-1].status == "finished" and idle(app)()
        )
        assert [s.source for s in app.conversation.chat.query("AnswerSegment")] == [
            "A whole haiku."
        ]
        assert "attempt 1" not in chat_text(app)


async def test_ctrl_r_retries_a_cancelled_turn() -> None:
    steps = asyncio.Semaphore(0)
    engine = ScriptEngine(steps=steps).script(
        answer_events("first part. second part.", "chat", "tell me", chunk=6),
        answer_events("The whole answer.", "chat", "tell me"),
    )
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "tell me")
        await until(
            pilot, lambda: app.conversation.turns.running and bool(app.conversation.records)
        )
        steps.release()
        await until(pilot, lambda: len(app.conversation.records[-1].answer) == 6)
        await pilot.press("escape")
        steps.release()
        await until(
            pilot, lambda: app.conversation.records[-1].status == "cancelled" and idle(app)()
        )
        assert "ctrl+r" in plain(app.conversation.status)
        for _ in range(20):
            steps.release()
        await pilot.press("ctrl+r")
        await until(
            pilot, lambda: app.conversation.records[-1].status == "finished" and idle(app)()
        )
        record = app.conversation.records[-1]
        assert record.attempt == 2 and record.answer == "The whole answer."
        assert [s.source for s in app.conversation.chat.query("AnswerSegment")] == [
            "The whole answer."
        ]
        assert "cancelled" not in chat_text(app)


async def test_ctrl_r_on_a_finished_turn_says_why_nothing_runs() -> None:
    engine = ScriptEngine().script(answer_events("Done.", "chat", "hello"))
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "hello")
        await until(pilot, idle(app))
        app.conversation.action_retry()
        await pilot.pause()
        assert "Only a failed or cancelled last turn can be retried" in plain(
            app.conversation.status
        )
        assert len(engine.texts) == 1


# --------------------------------------------------------------------------- failure cards

LONG_ERROR = (
    "litellm.APIConnectionError: OpenAIException - Connection error: the server at "
    "http://127.0.0.1:8080/v1/chat/completions closed the connection before answering "
    "(errno 104, connection reset by peer) while streaming"
)
LONG_HINT = (
    "Check that the server is running and reachable, or pick another model with --model; "
    "the conversation is kept and Retry sends the same request again. LAST-WORDS-SHOWN"
)


def screen_text(app: ModesApp) -> str:
    """The characters on screen, from the app's own screenshot."""
    svg = app.export_screenshot()
    return html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")


def wrapped_lines(widget: Static) -> int:
    """How many lines the widget's text takes at the width it is drawn at."""
    width = widget.content_size.width
    console = Console(width=width, file=io.StringIO(), color_system=None)
    return len(console.render_lines(widget.content, console.options.update_width(width)))


@pytest.mark.parametrize("retryable", [True, False], ids=["with Retry", "without Retry"])
@pytest.mark.parametrize("width", [80, 88, 100, 110, 120, 126, 135, 138, 150, 174, 200])
async def test_a_failure_card_shows_its_last_line_at_any_width(width: int, retryable: bool) -> None:
    failing = [
        *answer_events("", "chat", "hello")[:2],
        TurnFailed(LONG_ERROR, "connection", LONG_HINT, retryable=retryable),
    ]
    engine = ScriptEngine().script(failing)
    async with build_app(services(engine), tz=UTC).run_test(size=(width, 40)) as pilot:
        app = await ready(pilot)
        await send(pilot, "hello")
        await until(pilot, lambda: app.conversation.records[-1].status == "failed" and idle(app)())
        await pilot.pause(0.1)
        text = app.conversation.chat.query_one(".note-text", Static)
        card = text.parent if isinstance(text.parent, TurnNote) else text
        needed = wrapped_lines(text)
        assert text.content_size.height >= needed
        assert card.region.height >= needed, (card.region, needed)
        assert "LAST-WORDS-SHOWN" in screen_text(app)


# --------------------------------------------------------------------------- line breaks

HAIKU = "Autumn moonlight,\na worm digs silently\ninto the chestnut."
MIXED = (
    "Roses are red,\nviolets are blue.\n\n"
    "```python\nx = 1\ny = 2\n```\n\n"
    "- first item\n- second item\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n"
)


def lines_on_screen(app: ModesApp) -> list[str]:
    """The screen's lines without spaces (the screenshot's text runs lose some)."""
    return [line.replace(" ", "") for line in screen_text(app).splitlines()]


def on_own_lines(app: ModesApp, *texts: str) -> None:
    """Each of `texts` is on screen, and no two of them share a line."""
    lines = lines_on_screen(app)
    texts = tuple(text.replace(" ", "") for text in texts)
    for text in texts:
        line = line_with(lines, text)
        others = [other for other in texts if other != text and other in line]
        assert not others, f"{text!r} shares its line with {others}: {line!r}"


def line_with(lines: list[str], words: str) -> str:
    found = [line for line in lines if words in line]
    assert found, f"{words!r} is not on screen"
    return found[0]


@pytest.mark.parametrize("chunk", [1, 7, 100])
async def test_single_line_breaks_of_an_answer_show_as_line_breaks(chunk: int) -> None:
    steps = asyncio.Semaphore(0)
    engine = ScriptEngine(steps=steps).script(answer_events(HAIKU, "chat", "a haiku", chunk=chunk))
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "a haiku")
        await until(
            pilot, lambda: app.conversation.turns.running and bool(app.conversation.records)
        )
        # while it streams: the first line is on its own line as soon as the second starts
        while "a worm" not in app.conversation.records[-1].answer:
            steps.release()
            await until(pilot, lambda: steps._value == 0)
            await pilot.pause()
        await pilot.pause(0.1)
        if app.conversation.turns.running:
            on_own_lines(app, "Autumn moonlight,", "a worm")
        for _ in range(200):
            steps.release()
        await until(pilot, idle(app))
        await pilot.pause(0.1)
        on_own_lines(app, "Autumn moonlight,", "a worm digs silently", "into the chestnut.")


async def test_kept_line_breaks_leave_code_lists_and_tables_as_they_were() -> None:
    engine = ScriptEngine().script(answer_events(MIXED, "chat", "mixed", chunk=5))
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "mixed")
        await until(pilot, idle(app))
        await pilot.pause(0.1)
        on_own_lines(app, "Roses are red,", "violets are blue.")
        on_own_lines(app, "x = 1", "y = 2")
        on_own_lines(app, "first item", "second item")
        assert "•" in line_with(lines_on_screen(app), "firstitem")
        segment = app.conversation.chat.query_one("AnswerSegment")
        assert len(segment.query("MarkdownTable")) == 1
        assert len(segment.query("MarkdownFence")) == 1


async def test_a_finished_turn_drawn_again_keeps_its_line_breaks() -> None:
    sessions = FakeSessions(replayed(turns=1, answer=HAIKU))
    async with build_app(services(sessions=sessions), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "/replay 20260314-092653-abcd")
        await until(pilot, lambda: type(app.screen).__name__ == "ReplayScreen")
        await pilot.pause(0.2)
        on_own_lines(app, "Autumn moonlight,", "a worm digs silently", "into the chestnut.")


# --------------------------------------------------------------------------- did you mean


async def test_a_mistyped_command_gets_a_did_you_mean_and_keeps_the_text() -> None:
    async with build_app(services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await pilot.press(*"/mdoe code", "enter")
        await pilot.pause()
        assert "unknown command /mdoe; did you mean /mode?" in plain(app.conversation.status)
        assert app.conversation.prompt.value == "/mdoe code"  # kept, to fix
        await pilot.press("home", "delete", "delete", "delete", "delete", "delete", *"/mode")
        await pilot.press("enter")
        await until(pilot, lambda: app.conversation.reading.mode == "code")
