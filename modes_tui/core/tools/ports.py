"""Where tools come from besides the built-ins: tool servers as the core sees them (the
configured MCP servers, `mcp.servers.McpServers`, or a fake in tests; they answer with
`ServerTools`), and a pack's own tools (`packs.profiles.Pack`, which sits above
this part, so the toolbox sees it through `ToolMaker`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from modes_tui.core.tools.registry import Tool

__all__ = ["ServerTools", "ToolMaker", "ToolServers"]


@dataclass(frozen=True, slots=True)
class ServerTools:
    """What some servers offer one turn."""

    tools: tuple[Tool, ...] = ()
    """Their tools, server by server in the order asked."""
    problems: tuple[str, ...] = ()
    """What went wrong (a server that did not start or had stopped), for the turn's notes."""


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


class ToolMaker(Protocol):
    """What makes a session's own tools: a loaded pack (`packs.profiles.Pack`)."""

    def make_tools(self) -> list[Tool]:
        """The tools, fresh for one session; raises DeclarationError when they cannot be made."""
        ...
