"""One ACP session: an engine with its own conversation, mode setting, log and questions.

A session is what a chat window is in the app: the engine built by the runtime (same pack,
router, policies, tools, MCP servers), a session log in the usual store (created at its first
record, under the id the editor was given), and a mode setting of its own: `session/set_mode`
forces a mode for this session only (the control file is read until then, and never
written: another window's setting stays as it is). The mode the editor sees between turns is
that setting (`auto`, a mode, or `off`); during a turn it is the mode that answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from acp.helpers import update_agent_thought_text, update_current_mode, update_user_message_text

from modes_tui.acp.updates import translate
from modes_tui.core.control_setting import OFF
from modes_tui.core.history.events import RouteDecided, TurnCancelled

if TYPE_CHECKING:
    from modes_tui.acp.permissions import PermissionAsker
    from modes_tui.core.engine.ports import TurnEngine
    from modes_tui.core.packs.profiles import Pack
    from modes_tui.mcp.servers import McpServers
    from modes_tui.store.control import RunOnlySetting
    from modes_tui.store.replay import Replay
    from modes_tui.store.resume import CurrentSession

__all__ = ["AUTO_MODE", "AcpSession", "Send"]

log = logging.getLogger("modes_tui.acp")

AUTO_MODE = "auto"
Send = Callable[[Any], Awaitable[None]]
"""Sends one session update of this session to the editor."""


@dataclass
class AcpSession:
    """The parts of one session, and the turn running in it."""

    id: str
    """The ACP session id: the session log's id too (`modes-tui sessions` lists it)."""
    pack: Pack
    """The pack (with the editor's MCP servers offered to its modes)."""
    engine: TurnEngine
    """The engine, built by the runtime."""
    control: RunOnlySetting
    """This session's mode setting (the control file until set_mode)."""
    writer: CurrentSession
    """The session log."""
    asker: PermissionAsker
    """Asks the editor for permissions."""
    servers: McpServers | None = None
    """The MCP servers this session started (configured and the editor's); closed with it."""
    mode: str | None = None
    """The mode of the turn running or last run (None: none yet, or `off`)."""
    notes: list[str] = field(default_factory=list)
    """What to tell the user at the first turn (skipped MCP servers, a pack mismatch)."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """One turn at a time."""
    running: bool = False
    """A turn is running (shutdown cancels it and waits for its end)."""

    @property
    def setting(self) -> str:
        """`auto`, `off` or a forced mode: what the editor's mode selector shows between turns."""
        return self.control.read().mode

    def set_mode(self, mode: str) -> str:
        """Force `mode` (or `auto`, `off`) for the next turns; UnknownMode for a bad name."""
        return self.control.write(mode).mode

    async def run(self, text: str, send: Send) -> str:
        """Play one turn, sending its updates; the ACP stop reason (`end_turn`, `cancelled`)."""
        async with self.lock:
            self.running = True
            try:
                return await self._play(text, send)
            finally:
                self.running = False
                with contextlib.suppress(Exception):  # the editor may be gone
                    await send(update_current_mode(self.setting))

    async def _play(self, text: str, send: Send) -> str:
        for note in self.notes:
            await send(_thought(note))
        self.notes.clear()
        stop = "end_turn"
        events = self.engine.run_turn(text)
        try:
            async for event in events:
                if isinstance(event, RouteDecided):
                    self.mode = None if event.route.mode_name == OFF else event.route.mode_name
                if isinstance(event, TurnCancelled):
                    stop = "cancelled"
                for update in translate(event):
                    await send(update)
        finally:
            close = getattr(events, "aclose", None)  # the turn ends at once if we stop early
            if close is not None:
                await close()
        return stop

    def cancel(self) -> None:
        """Stop the running turn (its partial answer is kept and logged)."""
        self.engine.cancel()

    async def replay(self, replayed: Replay, send: Send) -> None:
        """Send a saved session's turns as updates: each user message, then what answered."""
        for turn in replayed.turns:
            if turn.user is not None:
                await send(update_user_message_text(turn.user))
            for event in turn.events:
                for update in translate(event):
                    await send(update)
            if turn.interrupted:
                await send(_thought("this turn did not finish when it was recorded"))
        await send(update_current_mode(self.setting))

    async def close(self) -> None:
        """Stop a running turn, then close the log and the MCP servers."""
        if self.running:
            self.cancel()
            with contextlib.suppress(Exception):
                async with asyncio.timeout(5):
                    async with self.lock:
                        pass
        self.writer.close()
        if self.servers is not None:
            await self.servers.close()


def _thought(text: str) -> Any:
    return update_agent_thought_text(f"({text})\n")
