"""Tools a model can call: registry, built-ins, the workspace, file rules, MCP servers.

The registry and `@tool`, the built-in toolbox, the workspace and its confined file
access, the file rules applied to the real file, regex search (with a time limit), and tool
servers (MCP) as the core sees them.

    access.py        The answering mode's file rules, applied to the file a tool actually
                     opened
    confined.py      Opening paths under the working directory by descriptor, never following a
                     link out of it
    ignores.py       .gitignore files, as search_files and list_files honour them (like ripgrep
                     does)
    ports.py         Where tools come from besides the built-ins: tool servers (MCP) and a
                     pack's own tools (`ToolMaker`), as the core sees them
    regex_search.py  search_files' matching: the `regex` library with its own time limit
    registry.py      Tools: plain Python functions the model may call, and the registry that
                     holds them
    resolver.py      Where a path really is: its real path under the working directory, walked
                     by descriptor
    searching.py     Which files search_files reads, each opened confined and judged by the
                     mode's rules
    servers.py       Tool servers: tools that live outside the app (MCP servers), as the core
                     sees them
    toolbox.py       The tools one session offers: the built-in ones and the pack's own
    workspace.py     The working-directory tools: read, list and search files, and run a command

Public names: `__all__`, imported from the module that defines them (see core/__init__.py).
"""

from __future__ import annotations

from .access import FileRules, Refusal, check, denied_refusal, literal_globs
from .confined import ConfinedRoot, MissingError, OutsideError, shown_path
from .ports import ServerTools, ToolMaker, ToolServers
from .registry import Tool, ToolError, ToolRegistry, known_tool_names, tool

# Eager, so that a pack's `from modes_tui.core.tools import tool` (README) is typed; the
# registry imports only the standard library and the model seam's values (first paint).
from .resolver import Resolved, missing_real, resolve
from .servers import server_tools
from .toolbox import default_registry

__all__ = ["FileRules", "Refusal", "check", "denied_refusal", "literal_globs"]
__all__ += ["ConfinedRoot", "MissingError", "OutsideError", "shown_path"]
__all__ += ["ServerTools", "ToolMaker", "ToolServers"]
__all__ += ["Tool", "ToolError", "ToolRegistry", "known_tool_names", "tool"]
__all__ += ["Resolved", "default_registry", "missing_real", "resolve", "server_tools"]
