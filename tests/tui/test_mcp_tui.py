"""MCP in the terminal UI, end to end: the real engine, real MCP servers (mcp-server-time
from PyPI, and one whose command does not exist), the scripted model, the app's dialog."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Callable
from datetime import UTC
from pathlib import Path

import pytest
from textual.pilot import Pilot

from modes_tui.core.packs.profiles import load_pack
from modes_tui.core.paths import app_dirs
from modes_tui.llm.fake import ScriptedModel, ScriptedReply
from modes_tui.mcp.config import McpServer
from modes_tui.mcp.servers import McpServers
from modes_tui.store.control import ControlFile
from modes_tui.tui.app import ModesApp, build_app
from modes_tui.tui.confirm import ConfirmToolScreen
from modes_tui.tui.turn_view import ToolCallView
from tests.support.mcp_support import MARK, marked_processes, wait_until_gone
from tests.support.tui_support import all_text, answer_dialog, plain, real_services


async def until(
    pilot: Pilot[None], check: Callable[[], bool], timeout: float = 60.0, seen: object = None
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for the screen to change; seen: {seen}")
        await pilot.pause(0.05)


async def test_the_dialog_asks_for_an_mcp_tool_and_the_panel_names_a_server_that_failed(
    write_pack: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mark = uuid.uuid4().hex
    modes = {
        "chat": {"description": "Everyday chat.", "keywords": ["hello"]},
        "clock": {"description": "Times.", "keywords": ["time"], "mcp": ["time", "nope"]},
    }
    folder = write_pack(router={"classifier": "keyword", "fallback": "chat"}, modes=modes)
    servers = McpServers(
        {
            "time": McpServer(
                "time",
                "stdio",
                command=sys.executable,
                args=("-m", "mcp_server_time", "--local-timezone", "UTC"),
                env={MARK: mark},
                start_timeout=60,
            ),
            "nope": McpServer("nope", "stdio", command="no-such-mcp-server-here"),
        },
        log_dir=tmp_path / "logs",
    )
    pack = load_pack(profiles_dir=folder, known_servers=servers.names())
    dirs = app_dirs()
    control = ControlFile(dirs.control_file, modes=lambda: pack.names)
    arguments = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    model = ScriptedModel().script(
        ScriptedReply(tool_calls=[("time__convert_time", arguments)]),
        ScriptedReply("Noon UTC is 21:00 in Tokyo."),
    )

    services = real_services(pack, cwd=tmp_path, control=control, model=model, servers=servers)
    try:
        async with build_app(services, tz=UTC).run_test(size=(120, 40)) as pilot:
            app = pilot.app
            assert isinstance(app, ModesApp)
            await until(pilot, lambda: app.conversation.engine is not None)
            # every activity the status line shows, however briefly (a poll can miss one)
            status = app.conversation.status
            shown_activities: list[str] = []
            show = status.busy

            def busy(activity: str) -> None:
                shown_activities.append(activity)
                show(activity)

            monkeypatch.setattr(status, "busy", busy)
            app.conversation.prompt.value = "what time is noon UTC in Tokyo"
            await pilot.press("enter")
            # the servers' first start takes seconds: the status line says what it waits for
            waiting = "Routed to clock; getting tools from MCP time, nope…"
            await until(pilot, lambda: waiting in shown_activities, seen=shown_activities)
            await until(
                pilot,
                lambda: (
                    isinstance(app.screen, ConfirmToolScreen)
                    and bool(app.screen.query("#confirm-title"))
                ),
            )
            assert "time__convert_time" in plain(app.screen.query_one("#confirm-title"))
            await answer_dialog(pilot, "y")
            await until(
                pilot, lambda: bool(app.conversation.records) and not app.conversation.turns.running
            )

            shown = all_text(app.conversation.chat.query(ToolCallView))
            assert "time__convert_time (" in shown and "ok ·" in shown
            assert '"datetime": "2026-' in shown  # the server's real answer, folded
            card = str(app.conversation.panel.options.get_option_at_index(0).prompt)
            panel = " ".join(card.split())  # its words, wrapped lines read as one
            assert "MCP server 'nope' could not start" in panel
            assert "command 'no-such-mcp-server-here' not found" in panel
            assert len(marked_processes(mark)) == 1  # started on the clock turn, still running
    finally:
        await servers.close()
    assert all(wait_until_gone(pid) for pid in marked_processes(mark))
    assert marked_processes(mark) == []
