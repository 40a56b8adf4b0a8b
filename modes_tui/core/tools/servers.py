"""Tool servers: tools that live outside the app (MCP servers), as the core sees them.

A profile's `mcp: [name, ...]` names servers; the engine asks a `ToolServers` for their tools
when a turn of that mode is set up, and gets ordinary `Tool`s (namespaced `<server>__<tool>`,
`source="mcp:<server>"`) plus the problems met on the way. A server that cannot start, or has
stopped, is a problem the turn shows as a note; the turn goes on without that server's tools.
The adapter (`modes_tui.mcp.servers`) starts servers on first use and stops them at exit; the
core never imports it or the `mcp` SDK.
"""

from __future__ import annotations

from collections.abc import Sequence

from modes_tui.core.tools.ports import ServerTools, ToolServers


async def server_tools(names: Sequence[str], servers: ToolServers | None) -> ServerTools:
    """The tools of the servers a profile lists, with a problem for each name not configured."""
    if not names:
        return ServerTools()
    known = servers.names() if servers is not None else frozenset()
    missing = [name for name in names if name not in known]
    problems: list[str] = []
    if missing:
        problems.append(
            f"MCP server{'s' if len(missing) > 1 else ''} not configured here: "
            f"{', '.join(missing)} (add {'them' if len(missing) > 1 else 'it'} to mcp_servers "
            "in config.yaml)"
        )
    present = [name for name in names if name in known]
    if not present or servers is None:
        return ServerTools(problems=tuple(problems))
    found = await servers.tools(present)
    return ServerTools(found.tools, (*problems, *found.problems))
