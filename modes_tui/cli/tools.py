"""`modes-tui tools [--mode NAME] [--json]`: every tool each mode gets, with its source."""

from __future__ import annotations

import argparse
import asyncio

from modes_tui.cli.common import EXIT_FAILURE, EXIT_OK, runtime_for, say, say_json
from modes_tui.core.errors import UnknownMode


def cmd_tools(args: argparse.Namespace) -> int:
    """Every tool each mode gets, with its source; MCP servers are started to list theirs."""
    from modes_tui.core.edits.editor import session_tools
    from modes_tui.mcp.listing import list_mode_tools, listing_text
    from modes_tui.runtime import mcp_servers

    runtime = runtime_for(args)
    pack = runtime.pack
    if args.mode is not None and pack.get(args.mode) is None:
        raise UnknownMode(args.mode, pack.names)
    profiles = [p for p in pack.profiles if args.mode in (None, p.name)]
    registry = session_tools(runtime.cwd, pack=pack)
    servers = mcp_servers(runtime.settings, runtime.dirs)
    listing = asyncio.run(list_mode_tools(profiles, registry, servers))
    if args.json:
        data = {"pack": pack.name, "modes": [entry.to_dict() for entry in listing]}
        say_json(data)
    else:
        say(listing_text(listing))  # tool descriptions come from MCP servers
    return EXIT_FAILURE if any(entry.problems for entry in listing) else EXIT_OK
