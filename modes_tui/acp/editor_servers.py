"""MCP servers the editor passes in `session/new` (and `session/load`), offered to modes.

The editor's servers join the configured ones (config.yaml `mcp_servers`) for that session:
one `McpServers` holds both, so they start on first use and stop with the session. Which
modes get them: every mode that lists them by name in `mcp:` (as for configured servers),
and every mode that uses tools at all (`tools:` or `mcp:` not empty): an editor gives its
servers for the agent to use, and a mode with no tools (chat) stays without. Each mode's
`permissions:` apply to them as to any tool (`<server>__*` patterns), and an editor's server
is never trusted: without a rule, each call is asked about.

Names are made safe for tool names (`[a-z][a-z0-9_-]*`); one that collides with a configured
server gets a `-editor` suffix. stdio and streamable HTTP servers are supported; SSE and
ACP-transported servers are skipped with a note.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modes_tui.mcp.config import SERVER_NAME, McpServer

if TYPE_CHECKING:
    from modes_tui.core.packs.profiles import Pack

__all__ = ["editor_servers", "offer_to_modes"]

_UNSAFE = re.compile(r"[^a-z0-9_-]+")


def editor_servers(
    given: Sequence[Any], cwd: Path, taken: Mapping[str, McpServer]
) -> tuple[dict[str, McpServer], list[str]]:
    """The editor's servers as configured ones (by their safe name), and notes on the ones
    skipped. `taken`: the configured servers, whose names stay theirs."""
    found: dict[str, McpServer] = {}
    notes: list[str] = []
    for server in given:
        name = _safe_name(str(getattr(server, "name", "") or "editor"), {*taken, *found})
        kind = getattr(server, "type", None)
        if kind in (None, "stdio") and getattr(server, "command", None):
            env = {item.name: item.value for item in (getattr(server, "env", None) or [])}
            found[name] = McpServer(
                name=name,
                transport="stdio",
                command=server.command,
                args=tuple(server.args or ()),
                env=env,
                cwd=cwd,
            )
        elif kind == "http":
            headers = {item.name: item.value for item in (server.headers or [])}
            found[name] = McpServer(name=name, transport="http", url=server.url, headers=headers)
        else:
            notes.append(f"MCP server {server.name!r} ({kind}) skipped: only stdio and http work")
    return found, notes


def offer_to_modes(pack: Pack, names: Sequence[str]) -> Pack:
    """`pack` with the editor's server `names` added to every mode that uses tools."""
    if not names:
        return pack
    profiles = tuple(
        replace(profile, mcp=(*profile.mcp, *(n for n in names if n not in profile.mcp)))
        if profile.tools or profile.mcp
        else profile
        for profile in pack.profiles
    )
    return replace(pack, profiles=profiles)


def _safe_name(raw: str, taken: set[str]) -> str:
    name = _UNSAFE.sub("-", raw.strip().lower()).strip("-_") or "editor"
    if not SERVER_NAME.match(name):
        name = f"editor-{name}"
    if name in taken:
        name = f"{name}-editor"
    base, number = name, 2
    while name in taken:
        name, number = f"{base}{number}", number + 1
    return name
