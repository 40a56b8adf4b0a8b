"""`serve`: run the agent on stdin/stdout until the editor closes stdin.

Order matters: stdout is guarded before anything else is imported or printed; the settings
and the pack are loaded before the first message (a broken config.yaml is said on stderr and
the process exits 1, as every verb does); at the end of input every running turn is
cancelled and waited for (its partial answer is logged), the logs closed, the MCP servers
stopped, and only then the connection closed.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from acp.interfaces import Agent

    from modes_tui.acp.stdio import ProtocolStreams
    from modes_tui.runtime import Runtime

__all__ = ["serve"]


def serve(runtime: Runtime, streams: ProtocolStreams) -> int:
    """Serve `runtime` over `streams` (see `stdio.guard_stdout`); the exit code."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="modes-tui acp: %(levelname)s %(message)s"
    )
    asyncio.run(_serve(runtime, streams))
    return 0


async def _serve(runtime: Runtime, streams: ProtocolStreams) -> None:
    from acp.agent.connection import AgentSideConnection

    from modes_tui.acp.agent import ModesAgent
    from modes_tui.acp.stdio import LineTransport, open_streams

    if runtime.stand_in() is None:
        from modes_tui.llm.litellm_import import preload

        # warm litellm while the editor starts a session, so the first answer does not wait
        preload(offline=runtime.offline)
    reader, writer = await open_streams(streams)
    transport = LineTransport(reader, writer)
    agent = ModesAgent(runtime)
    connection = AgentSideConnection(cast("Agent", agent), transport, listening=False)
    try:
        await connection.listen()
    finally:
        await agent.shutdown()
        await connection.close()
