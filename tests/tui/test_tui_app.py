"""Pilot tests of the app, driven by scripted event streams: what the user sees."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from unittest.mock import patch

import pytest
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Button, Static

from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import (
    ModeChanged,
    ReasoningDelta,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    TurnFailed,
    TurnFinished,
    Usage,
)
from modes_tui.core.history.transcript import Reroute
from modes_tui.store.replay import ReplayedTurn
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.chat import ChatLog, EarlierTurns, LiteTurn
from modes_tui.tui.confirm import ConfirmToolScreen
from modes_tui.tui.inspector import InspectorScreen
from modes_tui.tui.panel import RoutePanel
from modes_tui.tui.replay import ReplayScreen
from modes_tui.tui.services import ReplayedSession, RerouteResult
from modes_tui.tui.turn_view import AnswerSegment, SystemNote, ToolCallView, TurnNote, TurnView
from tests.support.tui_support import (
    MemoryControl,
    ScriptEngine,
    all_text,
    answer_dialog,
    answer_events,
    default_pack,
    palette_lists,
    plain,
    request,
    route,
    services,
    tool_call,
    until,
)

SIZE = (120, 40)


async def send(pilot: Pilot[None], text: str) -> None:
    app = pilot.app
    assert isinstance(app, ModesApp)
    app.conversation.prompt.value = text
    await pilot.press("enter")


def header(app: ModesApp) -> str:
    return app.conversation.header.render_text().plain


def chat_text(app: ModesApp) -> str:
    return all_text(app.conversation.chat.query("Static, AnswerSegment, SystemNote"))


def idle(app: ModesApp) -> Callable[[], bool]:
    return lambda: app.conversation.engine is not None and not app.conversation.turns.running


async def ready(pilot: Pilot[None]) -> ModesApp:
    app = pilot.app
    assert isinstance(app, ModesApp)
    await until(pilot, lambda: app.conversation.engine is not None)
    return app


async def test_a_message_is_routed_streamed_and_its_decision_is_in_the_panel() -> None:
    answer = "Use `gdb`:\n\n```sh\ngdb ./a.out\n```\n\n- run\n- bt\n"
    engine = ScriptEngine().script(
        answer_events(
            answer,
            "code",
            "my program segfaults",
            the_route=route("code", probabilities={"code": 0.8, "chat": 0.2}),
        )
    )
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "my program segfaults")
        await until(
            pilot,
            lambda: (
                bool(app.conversation.records) and app.conversation.records[-1].status == "finished"
            ),
        )
        await until(pilot, idle(app))
        assert engine.texts == ["my program segfaults"]
        segment = app.conversation.chat.query_one(AnswerSegment)
        assert segment.source == answer
        assert "my program segfaults" in chat_text(app)
        assert "→ code" in chat_text(app)
        cards = [str(o.prompt) for o in app.conversation.panel.options.options]
        assert len(cards) == 1
        card = app.conversation.panel.entries[0]
        assert card.route is not None and card.route.mode_name == "code"
        assert "mode code" in header(app)
        assert app.conversation.prompt.value == ""


async def test_the_panel_lists_decisions_newest_first_with_bars() -> None:
    engine = ScriptEngine().script(
        answer_events("a", "chat", "hi"),
        answer_events(
            "b",
            "code",
            "bug",
            the_route=route("code", probabilities={"code": 0.7, "shell": 0.3}),
        ),
    )
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "hi")
        await until(pilot, lambda: len(app.conversation.records) == 1 and idle(app)())
        await send(pilot, "bug")
        await until(pilot, lambda: len(app.conversation.records) == 2 and idle(app)())
        options = app.conversation.panel.options
        assert options.option_count == 2
        newest = options.get_option_at_index(0).prompt
        console = Console(width=60, file=io.StringIO(), color_system=None)
        with console.capture() as captured:
            console.print(newest)
        text = captured.get()
        assert text.startswith("#2 code")
        assert "█" in text and "shell" in text and "runner-up: shell" in text
        assert "09:26:53" in text


async def test_forcing_a_mode_by_key_writes_the_control_file_and_shows_in_header() -> None:
    app_services = services()
    async with build_app(app_services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        assert "setting auto" in header(app)
        await pilot.press("f3")  # second mode of the default pack: code
        await until(pilot, lambda: "setting forced code" in header(app))
        control = app_services.control
        assert isinstance(control, MemoryControl)
        assert control.writes == ["code"]
        assert "mode code" in header(app)
        await pilot.press("ctrl+g")
        await until(pilot, lambda: "setting auto" in header(app))
        assert control.writes == ["code", "auto"]


async def test_forcing_by_command_and_cycling_with_shift_tab() -> None:
    app_services = services()
    async with build_app(app_services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "/mode write")
        await until(pilot, lambda: "forced write" in header(app))
        await send(pilot, "/mode off")
        await until(pilot, lambda: "setting off" in header(app))
        assert "mode no mode" in header(app)
        await pilot.press("shift+tab")  # off -> first mode
        await until(pilot, lambda: "forced chat" in header(app))
        await pilot.press("shift+tab")
        await until(pilot, lambda: "forced code" in header(app))
        control = app_services.control
        assert isinstance(control, MemoryControl)
        assert control.writes == ["write", "off", "chat", "code"]


async def test_an_external_control_file_edit_shows_in_header_and_panel() -> None:
    app_services = services()
    async with build_app(app_services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        control = app_services.control
        assert isinstance(control, MemoryControl)
        control.external("reason")
        await until(pilot, lambda: "forced reason" in header(app))
        assert app.conversation.panel.setting == "forced reason"
        control.external("auto", warning="control file state.json: not valid JSON; using auto")
        await until(pilot, lambda: "not valid JSON" in header(app))


async def test_a_keymap_rebinds_a_mode_key() -> None:
    app_services = services(keymap={"mode.code": "f8", "panel.toggle": "ctrl+n"})
    async with build_app(app_services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await pilot.press("f8")
        await until(pilot, lambda: "forced code" in header(app))
        assert app.conversation.panel.display
        await pilot.press("ctrl+n")
        await until(pilot, lambda: not app.conversation.panel.display)


async def test_a_keymap_with_mistakes_is_named_as_a_settings_error() -> None:
    # an unknown action, a key Textual never reports, and a key taken from a mode: all three
    # used to be taken without a word (the mode simply lost its key)
    keymap = {"code": "notakey", "auto": "f2", "nosuch.action": "f9"}
    given = services(keymap=keymap, keymap_origin="/home/me/config.yaml")
    async with build_app(given, tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        said = " ".join(str(n.message) for n in app._notifications)
        assert "/home/me/config.yaml: keymap: " in said
        assert "mode.code: 'notakey' is no key" in said
        assert "mode.auto: f2 was chat's key; chat has none now" in said
        assert "'nosuch.action' is no action" in said
        await pilot.press("f2")  # the rest of the keymap still applies
        await until(pilot, lambda: "setting auto" in header(app))


async def test_escape_cancels_mid_stream_and_keeps_the_partial_answer() -> None:
    steps = asyncio.Semaphore(0)
    engine = ScriptEngine(steps=steps).script(
        answer_events("first part. second part. third part.", "chat", "tell me", chunk=6)
    )
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "tell me")
        await until(
            pilot, lambda: app.conversation.turns.running and bool(app.conversation.records)
        )
        steps.release()
        steps.release()
        await until(pilot, lambda: len(app.conversation.records[-1].answer) == 12)
        await pilot.press("escape")
        for _ in range(10):
            steps.release()
        await until(pilot, lambda: app.conversation.records[-1].status == "cancelled")
        await until(pilot, lambda: not app.conversation.turns.running)
        record = app.conversation.records[-1]
        assert record.answer and record.answer != "first part. second part. third part."
        assert "cancelled" in plain(app.conversation.chat.query_one(".note-text"))
        assert app.conversation.chat.query_one(AnswerSegment).source == record.answer


def tool_script(confirm: bool) -> list:
    call = tool_call(command="ls -la")
    return [
        *answer_events("", "shell", "list files")[:2],
        TextDelta("Let me look."),
        ToolCallRequested(call, needs_confirmation=True),
        ToolCallFinished(call, "ok", '{"output": "a.txt b.txt"}', 12.0),
        request("shell", "list files", round=2),
        TextDelta("There are two files."),
        Usage("scripted/demo", 100, 10),
        TurnFinished(Message("assistant", "There are two files.", mode="shell")),
    ]


@pytest.mark.parametrize("accept", [True, False])
async def test_a_tool_confirmation_accepted_or_refused(accept: bool) -> None:
    engine = ScriptEngine().script(tool_script(accept))
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "list files")
        await until(pilot, lambda: isinstance(app.screen, ConfirmToolScreen))
        assert "ls -la" in plain(app.screen.query_one("#confirm-title", Static))
        await answer_dialog(pilot, "y" if accept else "n")
        await until(pilot, idle(app))
        tools = app.conversation.chat.query(ToolCallView)
        assert len(tools) == 1
        shown = plain(tools.first())
        record = app.conversation.records[-1]
        if accept:
            assert record.tools[0].outcome == "ok"
            assert "ok" in shown
            assert record.answer.endswith("There are two files.")
        else:
            assert record.tools[0].outcome == "cancelled"
            assert "cancelled" in shown
            assert "refused" in record.answer


async def test_the_inspector_shows_the_request_of_a_turn() -> None:
    engine = ScriptEngine().script(
        [
            *answer_events("", "code", "fix it")[:1],
            request(
                "code",
                "fix it",
                tools=["read_file"],
                history=[{"role": "user", "content": "earlier question"}],
            ),
            TextDelta("done"),
            Usage("scripted/demo", 321, 7, 0.0012),
            TurnFinished(Message("assistant", "done", mode="code", model="scripted/demo")),
        ]
    )
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "fix it")
        await until(pilot, idle(app))
        app.conversation.panel.options.focus()
        app.conversation.panel.options.highlighted = 0
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        screen = app.screen
        texts = all_text(screen.query(Static)) + "\n".join(
            c.title for c in screen.query("Collapsible")
        )
        assert "System prompt" in texts
        assert "Tools: 1" in texts
        assert "History window: 2 messages" in texts
        assert "321 prompt + 7 completion tokens" in texts
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, InspectorScreen))
        await send(pilot, "/why")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))


async def test_a_provider_error_shows_with_retry_and_retry_works() -> None:
    failing = [
        answer_events("", "chat", "hello")[0],
        request("chat", "hello"),
        TurnFailed(
            "Rate limit reached for scripted/demo",
            kind="rate_limit",
            hint="Wait a minute and retry.",
        ),
    ]
    engine = ScriptEngine().script(failing, answer_events("Hello again!", "chat", "hello"))
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "hello")
        await until(pilot, lambda: app.conversation.records[-1].status == "failed" and idle(app)())
        note = app.conversation.chat.query_one(TurnNote)
        assert "Rate limit reached" in plain(note.query_one(Static))
        assert "Wait a minute" in plain(note.query_one(Static))
        await pilot.click("#retry")
        await until(pilot, lambda: app.conversation.records[-1].status == "finished")
        await until(pilot, idle(app))
        assert not app.conversation.chat.query(TurnNote)
        assert app.conversation.chat.query_one(AnswerSegment).source == "Hello again!"
        assert len(app.conversation.records) == 1 and app.conversation.records[0].attempt == 2
        assert len(app.conversation.panel.entries) == 2  # both decisions are kept


async def test_an_unknown_command_keeps_the_typed_text() -> None:
    async with build_app(services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "/frobnicate now")
        await pilot.pause()
        assert app.conversation.prompt.value == "/frobnicate now"
        assert "unknown command /frobnicate" in plain(app.conversation.status)
        await send(pilot, "/mode nosuchmode")
        await pilot.pause()
        assert app.conversation.prompt.value == "/mode nosuchmode"
        assert "unknown mode 'nosuchmode'" in plain(app.conversation.status)


async def test_commands_complete_as_you_type() -> None:
    async with build_app(services(), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        app.conversation.prompt.focus()
        await pilot.press(*"/mo")
        await pilot.pause(0.1)
        await pilot.press("tab")
        assert app.conversation.prompt.value == "/mode"
        await pilot.press("space", "c", "o")
        await pilot.pause(0.1)
        await pilot.press("tab")
        assert app.conversation.prompt.value == "/mode code"


async def test_help_modes_and_clear() -> None:
    engine = ScriptEngine().script(answer_events("hi!", "chat", "hi"))
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "hi")
        await until(pilot, idle(app))
        await send(pilot, "/modes")
        await until(pilot, lambda: bool(app.conversation.chat.query(SystemNote)))
        assert "| reason |" in app.conversation.chat.query(SystemNote).last().source
        await send(pilot, "/help")  # an overlay (tests/test_tui_keyboard.py), not a note
        await until(pilot, lambda: app.screen is not app.conversation)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.conversation)
        assert len(app.conversation.chat.query(SystemNote)) == 1
        await send(pilot, "/clear")
        await until(pilot, lambda: not app.conversation.chat.query("TurnView"))
        assert engine.cleared == 1
        assert len(app.conversation.panel.entries) == 1


async def test_the_palette_forces_a_mode() -> None:
    app_services = services()
    async with build_app(app_services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause(0.1)
        await pilot.press(*"Force mode: shell")
        await palette_lists(pilot, "Force mode: shell")
        await pilot.press("enter")
        await until(pilot, lambda: "forced shell" in header(app))


def replayed(
    turns: int = 3, answer: str = "Answer **{n}** in {mode}."
) -> tuple[ReplayedSession, dict[int, Reroute]]:
    items = []
    reroutes = {}
    for index in range(turns):
        mode = ("chat", "code", "shell")[index % 3]
        text = f"question {index + 1}"
        events = answer_events(answer.format(n=index + 1, mode=mode), mode, text)
        if index == 1:
            events.insert(1, ModeChanged("chat", "code"))
            events.insert(3, ReasoningDelta("thinking it over"))
        reroute = Reroute(route("chat" if index == 1 else mode), differs=index == 1)
        items.append(ReplayedTurn(index + 1, text, mode, None, tuple(events)))
        reroutes[index + 1] = reroute
    return ReplayedSession("20260314-092653-abcd", "question 1", items), reroutes


async def open_replay(pilot: Pilot[None], app: ModesApp) -> tuple[ReplayScreen, ChatLog]:
    """`/replay` the fake session; its screen and chat once they are up."""
    await send(pilot, "/replay 20260314-092653-abcd")
    await until(pilot, lambda: isinstance(app.screen, ReplayScreen))
    screen = app.screen
    assert isinstance(screen, ReplayScreen)
    await until(pilot, lambda: bool(screen.query("#replay-chat")))  # composed
    return screen, screen.query_one("#replay-chat", ChatLog)


class FakeSessions:
    def __init__(self, recorded: tuple[ReplayedSession, dict[int, Reroute]]) -> None:
        self.session, self.reroutes = recorded
        self.opened: list[str] = []

    def list(self):
        from modes_tui.tui.services import SessionSummary

        return [SessionSummary(self.session.id, "question 1", "2026-03-14T09:26:53+00:00", 3)]

    def load(self, session_id: str) -> ReplayedSession:
        self.opened.append(session_id)
        return self.session

    def reroute(self, session_id: str) -> RerouteResult:
        return RerouteResult(dict(self.reroutes), "2 of 3 agree")

    def export(self, session_id: str) -> Path:
        raise NotImplementedError


async def test_replay_shows_a_saved_session_without_calling_a_model() -> None:
    engine = ScriptEngine()
    sessions = FakeSessions(replayed())
    async with build_app(services(engine, sessions=sessions), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "/sessions")
        await until(pilot, lambda: app.screen.__class__.__name__ == "SessionsScreen")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        screen = app.screen
        await pilot.pause(0.2)
        assert sessions.opened == ["20260314-092653-abcd"]
        assert engine.texts == []
        sources = [m.source for m in screen.query(AnswerSegment)]
        assert sources == [
            "Answer **1** in chat.",
            "Answer **2** in code.",
            "Answer **3** in shell.",
        ]
        await until(pilot, lambda: "2 of 3 agree" in plain(screen.query_one("#replay-title")))
        reroutes = [plain(s) for s in screen.query(".route")]
        assert any("was code" in r for r in reroutes)
        assert "2 of 3 agree" in plain(screen.query_one("#replay-title", Static))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ReplayScreen))


class FailingReroute(FakeSessions):
    def reroute(self, session_id: str) -> RerouteResult:
        raise RuntimeError("the encoder is gone")


async def test_a_failed_re_route_says_so_in_the_title_and_the_replay_stays() -> None:
    engine = ScriptEngine()
    sessions = FailingReroute(replayed())
    async with build_app(services(engine, sessions=sessions), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        screen, chat = await open_replay(pilot, app)
        title = screen.query_one("#replay-title", Static)
        await until(pilot, lambda: "re-route: failed: the encoder is gone" in plain(title))
        assert len(chat.query(AnswerSegment)) == 3  # the recorded answers stay
        assert "failed" not in plain(
            app.conversation.status
        )  # the replay's own title says it, once


def marker_text(log: ChatLog) -> str:
    """What the top of the chat says about the turns not drawn yet: shown once the turns
    below it are mounted ("" before; `earlier_count` is set before they are)."""
    return "".join(plain(marker) for marker in log.query(EarlierTurns))


async def test_a_long_session_draws_from_the_bottom_and_loads_as_you_scroll_up() -> None:
    engine = ScriptEngine()
    sessions = FakeSessions(replayed(30))
    async with build_app(services(engine, sessions=sessions), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        _, log = await open_replay(pilot, app)
        await until(pilot, lambda: "10 earlier turns" in marker_text(log))
        assert log.earlier_count == 10
        assert not log.query("#turn-1, #lite-1")
        assert log.query(LiteTurn)  # mounted but not yet drawn in full
        assert log.query_one("#turn-30", TurnView)
        log.scroll_home(animate=False)
        await until(pilot, lambda: log.earlier_count == 0)
        log.scroll_home(animate=False)
        await until(pilot, lambda: bool(log.query("#turn-1")))
        assert not log.query(EarlierTurns)


LONG_ANSWER = "Answer **{n}** in {mode}.\n\n" + "".join(
    f"- step {step}: check the obvious cause first\n" for step in range(30)
)


@pytest.mark.parametrize(("answer", "full"), [("Answer **{n}** in {mode}.", 10), (LONG_ANSWER, 2)])
async def test_a_long_session_opens_with_full_turns_on_screen_and_no_more(
    answer: str, full: int
) -> None:
    """What the screen shows is drawn in full (never the plain stand-in); turns above it
    stay cheap until scrolled to, so long answers leave fewer turns in full."""
    sessions = FakeSessions(replayed(30, answer))
    async with build_app(services(sessions=sessions), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        _, log = await open_replay(pilot, app)
        await until(pilot, lambda: "10 earlier turns" in marker_text(log), timeout=20)

        def full_turns() -> list[int]:
            return [v.record.number for v in log.query_children(TurnView)]

        # the turns on screen are upgraded to full views after a refresh or two: wait for
        # them (a fixed pause failed one run in five), then check that no more follow
        expected = list(range(31 - full, 31))
        await until(pilot, lambda: full_turns() == expected, timeout=20)  # slow when loaded
        await pilot.pause(0.3)
        assert full_turns() == expected
        seen = log.scroll_offset.y, log.scroll_offset.y + log.size.height
        for lite in log.query_children(LiteTurn):
            assert lite.virtual_region.bottom <= seen[0], f"turn {lite.record.number} on screen"


LINKS_ANSWER = "Answer {n} in {mode}: " + " ".join(
    f"[doc{i}](https://example.com/{'x' * 150}/{i})" for i in range(30)
)
"""Short on screen, long as plain text (the addresses): the plain stand-ins overestimate."""


def plain_on_screen(log: ChatLog) -> list[int]:
    top, bottom = log.scroll_y, log.scroll_y + log.size.height
    return [
        lite.record.number
        for lite in log.query_children(LiteTurn)
        if lite.virtual_region.bottom > top and lite.virtual_region.y < bottom
    ]


async def test_turns_that_come_into_view_as_others_load_are_drawn_in_full_too() -> None:
    sessions = FakeSessions(replayed(3, LINKS_ANSWER))
    async with build_app(services(sessions=sessions), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        _, log = await open_replay(pilot, app)
        await until(pilot, lambda: bool(log.query("#turn-3")))
        await until(pilot, lambda: not plain_on_screen(log))
        await pilot.pause(0.3)
        assert not plain_on_screen(log)


def answering(answer: str, turns: int) -> ScriptEngine:
    """An engine answering `turns` messages q1, q2, ... with `answer` (formatted per turn)."""
    engine = ScriptEngine()
    for n in range(1, turns + 1):
        engine.script(answer_events(answer.format(n=n, mode="chat"), "chat", f"q{n}"))
    return engine


async def chat_through(pilot: Pilot[None], turns: int) -> ModesApp:
    """Send q1 .. q`turns`, each after the previous answer has ended (a long answer into a
    growing chat takes seconds on a loaded 2-core machine: the wait ends when it has)."""
    app = await ready(pilot)
    for n in range(1, turns + 1):
        await send(pilot, f"q{n}")
        await until(
            pilot,
            lambda n=n: len(app.conversation.records) == n and not app.conversation.turns.running,
            30,
        )
    return app


async def test_scrolling_up_a_live_chat_keeps_the_text_on_screen_still_as_turns_load() -> None:
    engine = answering(LINKS_ANSWER + "".join(f"\n\nparagraph {j}" for j in range(20)), 6)
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await chat_through(pilot, 6)
        log = app.conversation.chat
        lite = log.query_children(LiteTurn).last()  # far above: plain again
        after = log.query_one(f"#turn-{lite.record.number + 1}", TurnView)
        # Scroll up until the plain turn's last lines are at the top of the screen.
        log.scroll_to(y=lite.virtual_region.bottom - 3, animate=False, immediate=True)
        reading = after.virtual_region.y - log.scroll_y  # where the next turn starts on screen
        await until(pilot, lambda: not plain_on_screen(log))
        await pilot.pause(0.3)
        assert log.query_one(f"#turn-{lite.record.number}", TurnView)  # drawn in full now
        assert after.virtual_region.y - log.scroll_y == reading  # and nothing moved


async def test_no_frame_shows_the_text_on_screen_moved_as_a_turn_above_loads() -> None:
    """The scroll is corrected in the layout pass that gives the loaded turn its height:
    corrected a refresh later, the frame in between showed the text jumped (for as long
    as that refresh took on a loaded machine)."""
    engine = answering(LINKS_ANSWER + "".join(f"\n\nparagraph {j}" for j in range(20)), 6)
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await chat_through(pilot, 6)
        log = app.conversation.chat
        lite = log.query_children(LiteTurn).last()
        after = log.query_one(f"#turn-{lite.record.number + 1}", TurnView)
        log.scroll_to(y=lite.virtual_region.bottom - 3, animate=False, immediate=True)
        reading = after.virtual_region.y - log.scroll_y
        drawn: list[int] = []
        paint = app.screen._compositor_refresh  # each frame drawn, as laid out for it

        def painted() -> None:
            drawn.append(after.virtual_region.y - round(log.scroll_y))
            paint()

        with patch.object(app.screen, "_compositor_refresh", painted):
            await until(pilot, lambda: not plain_on_screen(log))
            await pilot.pause(0.3)
        assert log.query_one(f"#turn-{lite.record.number}", TurnView)
        assert drawn and set(drawn) == {reading}


async def test_a_long_live_chat_keeps_only_the_newest_turns_in_full() -> None:
    """Turns far above the screen go plain as the conversation grows; scrolling up draws
    them in full again, with the same answer."""
    engine = answering(LONG_ANSWER, 8)
    async with build_app(services(engine), tz=UTC).run_test(size=SIZE) as pilot:
        app = await chat_through(pilot, 8)
        await pilot.pause(0.2)
        full = [v.record.number for v in app.conversation.chat.query_children(TurnView)]
        plain_turns = [
            lite.record.number for lite in app.conversation.chat.query_children(LiteTurn)
        ]
        assert full == [4, 5, 6, 7, 8]  # the newest four finished ones, and the last
        assert plain_turns == [1, 2, 3]
        app.conversation.chat.scroll_home(animate=False)
        await until(pilot, lambda: bool(app.conversation.chat.query("#turn-1")))
        first = app.conversation.chat.query_one("#turn-1", TurnView)
        assert "step 29: check the obvious cause first" in first.query_one(AnswerSegment).source


async def test_the_panel_lists_a_page_of_decisions_and_more_on_demand() -> None:
    sessions = FakeSessions(replayed(205))
    async with build_app(services(sessions=sessions), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        screen, _ = await open_replay(pilot, app)
        panel = screen.query_one(RoutePanel)
        await until(pilot, lambda: panel.options.option_count == 201)
        last = panel.options.get_option_at_index(200)
        assert "5 older decisions" in str(last.prompt)
        panel.options.focus()
        panel.options.highlighted = 200
        await pilot.press("enter")
        await until(pilot, lambda: panel.options.option_count == 205)


async def test_a_startup_failure_is_shown_not_raised() -> None:
    app_services = services()

    def broken(confirmer):
        raise RuntimeError("no model file")

    app_services.build_engine = broken
    async with build_app(app_services, tz=UTC).run_test(size=SIZE) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await until(pilot, lambda: "The model could not start" in plain(app.conversation.status))
        await send(pilot, "hello")
        await until(
            pilot,
            lambda: (
                bool(app.conversation.records) and app.conversation.records[-1].status == "failed"
            ),
        )
        assert "could not start" in plain(app.conversation.chat.query_one(".note-text"))
        assert not app.conversation.chat.query(Button)
        # the message was never routed, and its line says so (it said "routing…" forever)
        await until(pilot, lambda: "not routed" in plain(app.conversation.chat.query_one(".route")))
        assert "routing…" not in plain(app.conversation.chat.query_one(".route"))


async def test_replay_of_a_real_session_log_with_rerouting(tmp_path: Path) -> None:
    from modes_tui.core.packs.profiles import load_pack
    from modes_tui.core.paths import app_dirs
    from modes_tui.core.routing.classifiers.keyword import KeywordClassifier
    from modes_tui.core.routing.router import Router
    from modes_tui.tui.sessions import StoreSessions
    from tests.support.store_records import write_demo_session

    dirs = app_dirs()
    demo = write_demo_session(dirs, pack="default")
    demo.log.close()
    pack = load_pack("default")
    catalog = StoreSessions(dirs, lambda: Router(pack, KeywordClassifier()), export_dir=tmp_path)
    engine = ScriptEngine()
    async with build_app(services(engine, sessions=catalog), tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await send(pilot, "/replay latest")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        screen = app.screen
        await until(pilot, lambda: "turns agree" in plain(screen.query_one("#replay-title")))
        shown = all_text(screen.query(".user"))
        for text in demo.users:
            assert text.splitlines()[0] in shown
        routes = [plain(s) for s in screen.query(".route")]
        assert len(routes) == len(demo.users) and all("re-route:" in r for r in routes)
        assert engine.texts == []
    path = catalog.export(demo.log.id)
    assert path.parent == tmp_path and demo.users[0].splitlines()[0] in path.read_text()


async def test_another_process_editing_the_control_file_shows_within_a_second() -> None:
    import json

    from modes_tui.core.paths import app_dirs
    from modes_tui.store.control import ControlFile

    pack = default_pack()
    path = app_dirs().control_file
    control = ControlFile(path, modes=lambda: pack.names, pack=pack.name)
    app_services = services(pack=pack)
    app_services.control = control
    async with build_app(app_services, tz=UTC).run_test(size=SIZE) as pilot:
        app = await ready(pilot)
        await pilot.press("f3")
        await until(pilot, lambda: "forced code" in header(app))
        assert json.loads(path.read_text())["packs"]["default"] == "code"
        path.write_text('{"packs": {"default": "shell"}}\n')  # as `modes-tui mode shell` would
        await until(pilot, lambda: "forced shell" in header(app))
        assert app.conversation.panel.setting == "forced shell (this pack)"
        path.write_text("{not json")
        await until(pilot, lambda: "not valid JSON" in header(app))
        assert "setting auto" in header(app)


async def test_the_app_paints_first_and_prepares_its_services_in_a_worker() -> None:
    import threading

    gate = threading.Event()
    engine = ScriptEngine().script(answer_events("Hi!", "chat", "hello"))

    def prepare():
        gate.wait(5)  # the pack, the settings, the stores: slow on a cold disk
        return services(engine)

    async with build_app(prepare=prepare, tz=UTC).run_test(size=SIZE) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await pilot.pause(0.1)
        assert not app.started and "Starting" in plain(app.conversation.status)
        await pilot.press(*"hello")  # typing works at once
        await pilot.press("enter")
        await until(pilot, lambda: bool(app.conversation.records))
        gate.set()
        await until(pilot, lambda: app.conversation.records[-1].status == "finished")
        assert "pack default" in header(app)
        await pilot.press("f3")
        await until(pilot, lambda: "forced code" in header(app))


async def test_a_broken_setup_is_shown_whole_and_sending_names_the_pack_file() -> None:
    from modes_tui.core.errors import DeclarationError, Problem

    long_message = "unknown tool 'rm'; the tools are read_file, list_files, " + "x" * 150 + " END"

    def prepare():
        raise DeclarationError(
            [
                Problem("code.yaml", "tools", long_message),
                Problem("router.yaml", "fallback", "fallback 'nope' is not a mode"),
            ],
            pack="mine",
        )

    async with build_app(prepare=prepare, tz=UTC).run_test(size=(80, 30)) as pilot:
        app = pilot.app
        assert isinstance(app, ModesApp)
        await until(pilot, lambda: bool(app.conversation.chat.query(".plain-note")))
        note = app.conversation.chat.query_one(".plain-note", Static)
        await pilot.pause(0.1)
        # Whole: every problem, and the end of the long line wrapped onto the screen.
        shown = plain(note)
        assert "fallback 'nope' is not a mode" in shown
        assert "END" in shown and "END" in app.export_screenshot()  # wrapped, not clipped
        assert "code.yaml" in plain(app.conversation.status) and "router.yaml" in plain(
            app.conversation.status
        )
        await send(pilot, "hello")
        await until(
            pilot,
            lambda: (
                bool(app.conversation.records) and app.conversation.records[-1].status == "failed"
            ),
        )
        failure = app.conversation.records[-1].failure
        assert failure is not None and "code.yaml, router.yaml in pack 'mine'" in failure.hint
        assert "model settings" not in failure.hint
        assert app.conversation.chat.query_one(TurnView).query(".note-text")


async def test_a_reroute_that_lands_before_a_turn_is_drawn_shows_once_it_is() -> None:
    """Re-routing a replay can finish while a turn is being drawn in full (its route line
    not composed yet). That used to raise NoMatches and close the app; now the turn takes
    today's decision when it composes."""
    from textual.app import App, ComposeResult

    from modes_tui.core.history.transcript import fold_turn

    session, reroutes = replayed(2)
    turn = session.turns[1]
    record = fold_turn(turn.turn, turn.user or "", turn.events)
    view = TurnView(record, live=False, tz=UTC)
    record.reroute = reroutes[2]
    await view.show_reroute()  # not composed: nothing to redraw, and no error

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield view

    async with Host().run_test(size=SIZE) as pilot:
        await until(pilot, lambda: bool(view.query(".route")))
        line = str(view.query_one(".route", Static).render())
        assert "re-route: chat 0.80 (was code)" in line, line
