"""`modes-tui tools`: every tool each mode gets, built-in or from an MCP server, and what
the mode's policy lets it do with each (allow, ask, deny, and the rule that says so).

MCP servers are really started to list their tools (and stopped again), so the listing is
what a turn of that mode would offer the model, and a server that cannot start says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from modes_tui.core.edits.policy import Policy, Rule
from modes_tui.core.packs.profiles import Profile
from modes_tui.core.tools.ports import ToolServers
from modes_tui.core.tools.registry import Tool, ToolRegistry
from modes_tui.core.tools.servers import server_tools


@dataclass(frozen=True, slots=True)
class ModeTools:
    """The tools one mode gets."""

    mode: str
    """The mode's name."""
    tools: tuple[Tool, ...]
    """Built-ins first (in the profile's order), then each MCP server's tools."""
    problems: tuple[str, ...]
    """Tools or servers it lists that are not available here, and why."""
    policy: Policy = field(default_factory=Policy)
    """What the mode may do with them (`permissions:`, `paths:`)."""

    def rule(self, tool: Tool) -> Rule:
        """The mode's permission for `tool`, and where it comes from."""
        return self.policy.rule(tool.name, asks=tool.needs_confirmation)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for `--json`."""
        return {
            "mode": self.mode,
            "tools": [
                {
                    "name": tool.name,
                    "source": tool.source,
                    "confirm": tool.needs_confirmation,
                    "permission": self.rule(tool).permission,
                    "rule": self.rule(tool).source,
                    "description": tool.description,
                }
                for tool in self.tools
            ],
            "policy": self.policy.summary(),
            "problems": list(self.problems),
        }


async def list_mode_tools(
    profiles: Sequence[Profile], registry: ToolRegistry, servers: ToolServers | None
) -> list[ModeTools]:
    """What each profile gets; starts the servers they list and stops them before returning."""
    try:
        listing: list[ModeTools] = []
        for profile in profiles:
            problems: list[str] = []
            missing = [name for name in profile.tools if name not in registry]
            if missing:
                problems.append(f"tools not available here: {', '.join(missing)}")
            found = await server_tools(profile.mcp, servers)
            tools = (*registry.select(profile.tools), *found.tools)
            listing.append(
                ModeTools(profile.name, tools, (*problems, *found.problems), profile.policy)
            )
        return listing
    finally:
        if servers is not None:
            await servers.close()


def listing_text(listing: Sequence[ModeTools]) -> str:
    """One block per mode: each tool with its source, and what is missing."""
    lines: list[str] = []
    for entry in listing:
        lines.append(f"{entry.mode}:")
        if not entry.tools:
            lines.append("  (no tools)")
        width = max((len(tool.name) for tool in entry.tools), default=0)
        for tool in entry.tools:
            rule = entry.rule(tool)
            permission = f"{rule.permission} ({rule.source})"
            summary = tool.description.splitlines()[0][:60] if tool.description else ""
            lines.append(f"  {tool.name:<{width}}  {permission:<32} [{tool.source}]  {summary}")
        lines.append(f"  policy: {entry.policy.paths_text()}")
        lines += [f"  ! {problem}" for problem in entry.problems]
    return "\n".join(lines)
