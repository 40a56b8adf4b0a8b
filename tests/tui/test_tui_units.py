"""The app's pure parts: mode keys, command parsing and completion, turn records."""

from __future__ import annotations

import pytest

from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import (
    RequestBuilt,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    TurnCancelled,
    TurnFinished,
)
from modes_tui.core.history.transcript import TurnTranscript
from modes_tui.core.model.wire import ModelRequest, ToolCall
from modes_tui.core.packs.profiles import Profile
from modes_tui.frontend.commands import CommandError, complete, mode_settings
from modes_tui.frontend.lines import read_line as parse_command
from modes_tui.route_format import duration
from modes_tui.tui.keys import mode_keys, next_setting
from modes_tui.tui.render import format_time

MODES = ["chat", "code", "reason"]
SETTINGS = mode_settings(MODES)


def profile(name: str, key: str | None = None) -> Profile:
    return Profile(name=name, description=f"{name} things", key=key)


def test_profile_keys_win_and_others_get_free_function_keys_in_order() -> None:
    keys = mode_keys([profile("a"), profile("b", key="f2"), profile("c"), profile("d", "ctrl+k")])
    assert [(k.mode, k.key) for k in keys] == [
        ("a", "f3"),
        ("b", "f2"),
        ("c", "f4"),
        ("d", "ctrl+k"),
    ]
    assert keys[0].binding_id == "mode.a"


def test_modes_beyond_the_free_function_keys_get_none() -> None:
    keys = mode_keys([profile(f"m{i}") for i in range(10)])
    assert [k.key for k in keys][-2:] == [None, None]
    assert "f10" not in {k.key for k in keys} and "f1" not in {k.key for k in keys}


@pytest.mark.parametrize(
    ("current", "expected"),
    [("auto", "chat"), ("chat", "code"), ("reason", "auto"), ("off", "chat"), ("gone", "chat")],
)
def test_cycling(current: str, expected: str) -> None:
    assert next_setting(current, MODES) == expected


@pytest.mark.parametrize(
    ("line", "name", "argument"),
    [
        ("/mode code", "/mode", "code"),
        ("/MODE auto", "/mode", "auto"),
        ("/why", "/why", ""),
        ("/replay 2026-abc", "/replay", "2026-abc"),
        ("/help", "/help", ""),
    ],
)
def test_commands_parse(line: str, name: str, argument: str) -> None:
    command = parse_command(line, SETTINGS)
    assert (command.name, command.argument) == (name, argument)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("/frob", "unknown command /frob"),
        ("/mod code", "did you mean /mode or /modes?"),
        ("/mode", "/mode needs a value: chat | code | reason | auto | off"),
        ("/mode shell", "unknown mode 'shell'; choose one of: chat, code, reason, auto, off"),
        ("/replay", "/replay needs a session id"),
        ("/clear now", "/clear takes no argument"),
    ],
)
def test_bad_commands_say_what_to_fix(line: str, message: str) -> None:
    with pytest.raises(CommandError) as caught:
        parse_command(line, SETTINGS)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [
        ("/m", "/mode"),
        ("/mode ", "/mode chat"),
        ("/mode co", "/mode code"),
        ("/mode a", "/mode auto"),
        ("/mode code", None),
        ("/re", "/replay"),
        ("/replay 20", "/replay 2026-x"),
        ("hello", None),
        ("//mode", None),
    ],
)
def test_completion(typed: str, suggested: str | None) -> None:
    assert complete(typed, SETTINGS, ["2026-x"]) == suggested


def test_a_record_keeps_rounds_and_tool_calls_in_order() -> None:
    record = TurnTranscript(1, "list files")
    request = ModelRequest("m", ({"role": "user", "content": "list files"},))
    call = ToolCall("c1", "list_files", {"path": "."})
    for event in [
        RequestBuilt(request, "shell"),
        TextDelta("Looking."),
        ToolCallRequested(call),
        ToolCallFinished(call, "ok", "[]", 2.0),
        RequestBuilt(request, "shell", round=2),
        TextDelta("Empty."),
        TurnFinished(Message("assistant", "Empty.", mode="shell", model="m")),
    ]:
        record.apply(event)
    assert record.segments == ["Looking.", "Empty."]
    assert record.tools[0].segment == 0 and record.tools[0].outcome == "ok"
    assert record.status == "finished" and record.mode == "shell" and record.model == "m"
    assert record.answer == "Looking.\n\nEmpty."


def test_a_cancelled_record_keeps_its_partial_answer() -> None:
    record = TurnTranscript(1, "long story")
    record.apply(TextDelta("Once upon"))
    record.apply(TurnCancelled("Once upon"))
    assert record.status == "cancelled" and record.answer == "Once upon"


def test_formats() -> None:
    from datetime import UTC

    assert format_time("2026-03-14T09:26:53.000+00:00", UTC) == "09:26:53"
    assert format_time("not a time") == ""
    assert [duration(v) for v in (0.42, 120.4, 2300)] == ["0.4 ms", "120 ms", "2.3 s"]


def test_short_keymap_names_mean_mode_bindings() -> None:
    from modes_tui.tui.keys import normal_keymap

    keymap = {"auto": "f12", "code": "ctrl+k", "cycle": "ctrl+n", "panel.toggle": "f11"}
    assert normal_keymap(keymap, ["chat", "code"]) == {
        "mode.auto": "f12",
        "mode.code": "ctrl+k",
        "mode.cycle": "ctrl+n",
        "panel.toggle": "f11",
    }
