"""The app is one class, and its workers report through typed messages: read here from the
messages that arrive (`run_test(message_hook=...)`) and from the screen, never from state."""

from __future__ import annotations

from datetime import UTC

from textual.message import Message

from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.messages import EngineBuilt, EngineFailed, ServicesPrepared, TurnEnded
from tests.support.tui_support import ScriptEngine, answer_events, plain, services
from tests.tui.test_tui_app import chat_text, idle, ready, send, until

SIZE = (120, 40)


def test_the_app_is_one_class() -> None:
    ours = [cls.__qualname__ for cls in ModesApp.__mro__ if cls.__module__.startswith("modes_tui")]
    assert ours == ["ModesApp"]


async def test_the_engine_and_each_turn_report_through_their_own_messages() -> None:
    seen: list[Message] = []
    engine = ScriptEngine().script(
        answer_events("hello there", "chat", "hi"),
        answer_events("a second answer", "chat", "and again"),
    )
    app = build_app(services(engine), tz=UTC)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await ready(pilot)
        await send(pilot, "hi")
        await until(pilot, lambda: len(app.conversation.records) == 1 and idle(app)())
        await send(pilot, "and again")
        await until(pilot, lambda: len(app.conversation.records) == 2 and idle(app)())
        reports = [m for m in seen if isinstance(m, EngineBuilt | TurnEnded)]
        assert [type(m) for m in reports] == [EngineBuilt, TurnEnded, TurnEnded]
        assert all(m.crash is None for m in reports if isinstance(m, TurnEnded))
        assert "a second answer" in chat_text(app)


async def test_services_prepared_after_the_first_frame_arrive_as_a_message() -> None:
    seen: list[Message] = []
    ready_services = services(ScriptEngine())
    app = build_app(prepare=lambda: ready_services, tz=UTC)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await until(pilot, lambda: app.conversation.engine is not None)
        prepared = [m for m in seen if isinstance(m, ServicesPrepared)]
        assert [m.services for m in prepared] == [ready_services]
        assert seen.index(prepared[0]) < next(
            i for i, m in enumerate(seen) if isinstance(m, EngineBuilt)
        )


async def test_an_engine_that_cannot_be_built_reports_why() -> None:
    seen: list[Message] = []
    broken_services = services(ScriptEngine())

    def broken(confirmer: object) -> object:
        raise RuntimeError("no model file")

    broken_services.build_engine = broken  # type: ignore[assignment]
    app = build_app(broken_services, tz=UTC)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await until(pilot, lambda: any(isinstance(m, EngineFailed) for m in seen))
        failed = next(m for m in seen if isinstance(m, EngineFailed))
        assert "no model file" in failed.error
        assert "The model could not start" in plain(app.conversation.status)


async def test_a_turn_broken_by_a_bug_says_so_on_its_turn_and_the_chat_goes_on() -> None:
    def tripped(text: str) -> list[object]:
        raise RuntimeError(f"tripped over {text}")

    seen: list[Message] = []
    engine = ScriptEngine().script(tripped, answer_events("fine now", "chat", "and now?"))
    app = build_app(services(engine), tz=UTC)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await ready(pilot)
        await send(pilot, "the stone")
        await until(pilot, lambda: any(isinstance(m, TurnEnded) for m in seen))
        ended = next(m for m in seen if isinstance(m, TurnEnded))
        assert ended.crash is not None and "tripped over the stone" in ended.crash
        await until(pilot, lambda: app.conversation.records[-1].status == "failed")
        assert "This is a bug in modes-tui" in chat_text(app)
        await send(pilot, "and now?")
        await until(pilot, lambda: len(app.conversation.records) == 2 and idle(app)())
        assert app.conversation.records[-1].answer == "fine now"
