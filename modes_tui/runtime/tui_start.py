"""The terminal UI's start-up, one way: options -> runtime -> services -> app.

The command line hands the app a `prepare` function that the app calls in a worker thread
after its first frame: it reads the arguments into `RunOptions` and returns
`TuiStart(options).services()` (this package, the settings, the pack, the stores and the MCP
configuration load there, never before the first paint). What the runtime opened (the
session writer, the MCP servers) is kept here, so the command line closes it when the app
has ended; nothing calls back into the command line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from modes_tui.runtime import RunOptions, Runtime

if TYPE_CHECKING:
    from modes_tui.mcp.servers import McpServers
    from modes_tui.store.resume import CurrentSession
    from modes_tui.tui.services import AppServices


@dataclass
class TuiStart:
    """One start of the terminal UI: its options, and what its runtime opened."""

    options: RunOptions
    """What the command line asked for."""
    sessions: list[CurrentSession] = field(default_factory=list)
    """The session writer the runtime opened (closed after the app)."""
    servers: list[McpServers] = field(default_factory=list)
    """The MCP servers the runtime configured (stopped on the app's loop, after it)."""

    def services(self) -> AppServices:
        """The runtime of a chat, and everything the app needs from it (in a thread)."""
        runtime = Runtime.for_chat(self.options)
        if runtime.servers is not None:
            self.servers.append(runtime.servers)
        if runtime.current is not None:
            self.sessions.append(runtime.current)
        from modes_tui.runtime.local_parts import check_for_answers  # after the first frame

        check_for_answers(runtime)  # no model: the start-up note says how to get one, whole
        return runtime.tui_services()

    async def stop_servers(self) -> None:
        """Stop the MCP servers the run started (on the loop they ran on)."""
        for servers in self.servers:
            await servers.close()

    def close_sessions(self) -> None:
        """Close the session writer (the log keeps every record written)."""
        for session in self.sessions:
            session.close()
