"""Tool servers as the core sees them: the configured MCP servers
(`mcp.servers.McpServers`), or a fake in tests. What they answer with is
`tools.servers.ServerTools`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from modes_tui.core.tools.servers import ServerTools

__all__ = ["ToolServers"]


@runtime_checkable
class ToolServers(Protocol):
    """The configured tool servers (`modes_tui.mcp.servers.McpServers`)."""

    def names(self) -> frozenset[str]:
        """Every configured server name."""
        ...

    async def tools(self, servers: Sequence[str]) -> ServerTools:
        """The tools of `servers`, starting any that is not running yet; never raises."""
        ...

    async def close(self) -> None:
        """Stop every server that was started (idempotent)."""
        ...
