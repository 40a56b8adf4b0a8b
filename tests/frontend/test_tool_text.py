"""Tool calls read as a person would write them, the same in the TUI, the REPL and exports
(issue 30, item 2): the command as the title, the output's lines as lines, the exit code."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace
from typing import Any, cast

import pytest

from modes_tui.core.history.conversation import Message
from modes_tui.core.history.events import (
    RouteDecided,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
    TurnFinished,
)
from modes_tui.core.history.transcript import TurnTranscript
from modes_tui.frontend.tool_text import fold, tool_result, tool_title
from modes_tui.repl.printer import Printer
from modes_tui.store.export import conversation_markdown
from modes_tui.tui.app import build_app
from modes_tui.tui.inspector import InspectorScreen
from tests.support.tui_support import ScriptEngine, request, route, services, tool_call, until

TEN_LINES = "".join(f"line {n}\n" for n in range(1, 11))
RESULT = json.dumps({"exit_code": 1, "output": TEN_LINES})
CALL = tool_call("run_command", command="ls -la /srv")


def screen_text(app: Any) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


@pytest.mark.parametrize(
    ("name", "arguments", "title"),
    [
        ("run_command", {"command": "ls -la"}, "$ ls -la"),
        (
            "run_command",
            {"command": "sleep 9", "timeout_seconds": 5},
            "$ sleep 9 (timeout_seconds=5)",
        ),
        ("read_file", {"path": "src/a.py", "start_line": 3}, "read_file src/a.py (start_line=3)"),
        ("search_files", {"pattern": "TODO", "path": "src"}, 'search_files "TODO" in src'),
        ("lookup", {"query": "two words"}, 'lookup "two words"'),
        ("lookup", {"a": 1, "b": [2]}, "lookup (a=1, b=[2])"),
        ("run_command", {"command": "echo \x1b[31mred"}, "$ echo red"),
    ],
)
def test_a_call_is_titled_by_its_command_path_or_query(
    name: str, arguments: dict[str, Any], title: str
) -> None:
    assert tool_title(name, arguments) == title


@pytest.mark.parametrize(
    ("outcome", "result", "lines", "status", "failed"),
    [
        (
            "ok",
            '{"exit_code": 0, "output": "one\\ntwo\\n"}',
            ("one", "two"),
            "ok · exit code 0",
            False,
        ),
        ("ok", '{"exit_code": 2, "output": "boom"}', ("boom",), "failed: exit code 2", True),
        (
            "ok",
            '{"exit_code": null, "output": "", "timed_out": "stopped after 5 seconds"}',
            (),
            "failed: timed out (stopped after 5 seconds)",
            True,
        ),
        ("cancelled", '{"cancelled": true, "reason": "refused"}', (), "cancelled: refused", True),
        ("ok", '{"content": "a", "lines": 3}', ("a", "lines: 3"), "ok", False),
        ("ok", '"just\\ntext"', ("just", "text"), "ok", False),
        ("ok", '["x", 1]', ("x", "1"), "ok", False),
        ("error", "not json", ("not json",), "error", True),
        ("ok", '{"output": "\\u001b[2Jcleared"}', ("cleared",), "ok", False),
    ],
)
def test_a_result_is_its_lines_and_a_status(
    outcome: str, result: str, lines: tuple[str, ...], status: str, failed: bool
) -> None:
    found = tool_result(outcome, result)
    assert (found.lines, found.status, found.failed) == (lines, status, failed)


def test_long_output_folds_with_the_count_of_hidden_lines() -> None:
    folded = fold([f"l{n}" for n in range(10)], 6)
    assert folded.lines == ("l0", "l1", "l2", "l3", "l4", "l5")
    assert folded.note == "… 4 more lines"
    assert fold(["x"], 6).note == ""
    assert fold(["y" * 500], 6, width=10).lines == ("y" * 10 + "…",)


def tool_turn() -> list[Any]:
    answer = "The listing failed."
    return [
        RouteDecided(route("shell")),
        request("shell", "list /srv", tools=["run_command"]),
        ToolCallRequested(CALL),
        ToolCallFinished(CALL, "ok", RESULT, 12.0),
        request("shell", "list /srv", round=2),
        TextDelta(answer),
        TurnFinished(Message("assistant", answer, mode="shell", model="scripted/demo")),
    ]


async def test_the_tool_card_shows_the_command_and_the_outputs_lines() -> None:
    app = build_app(services(ScriptEngine().script(tool_turn())))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.conversation.engine is not None)
        app.conversation.prompt.value = "list /srv"
        await pilot.press("enter")
        await until(pilot, lambda: "The listing failed." in screen_text(app))
        shown = screen_text(app)
        assert "⚙ $ ls -la /srv  failed: exit code 1" in shown
        assert all(f"line {n}" in shown for n in range(1, 7))
        assert "line 7" not in shown
        assert "… 4 more lines (the inspector shows all)" in shown
        assert "\\n" not in shown and "exit_code" not in shown
        await pilot.press("ctrl+t")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await pilot.pause(0.1)
        inspector = screen_text(app)
        assert "$ ls -la /srv" in inspector and "line 10" in inspector


def test_the_repl_prints_the_command_and_the_outputs_lines() -> None:
    out = io.StringIO()
    printer = Printer(out)
    context = cast(Any, SimpleNamespace(last_turn=None))
    printer.event(ToolCallRequested(CALL), context)
    printer.event(ToolCallFinished(CALL, "ok", RESULT, 12.0), context)
    assert out.getvalue() == (
        "→ $ ls -la /srv\n"
        "← run_command: failed: exit code 1\n"
        + "".join(f"  line {n}\n" for n in range(1, 7))
        + "  … 4 more lines (/export writes all)\n"
    )


def test_an_export_has_the_command_and_every_line_of_the_output() -> None:
    turn = TurnTranscript(1, "list /srv")
    for event in tool_turn():
        turn.apply(event)
    markdown = conversation_markdown([turn])
    assert "Tool call: `$ ls -la /srv`\n" in markdown
    assert "Result of `run_command`: failed: exit code 1 (12.0 ms)\n\n```\n" in markdown
    assert "```\n" + TEN_LINES + "```\n" in markdown
    assert "exit_code" not in markdown
