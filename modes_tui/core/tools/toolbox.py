"""The tools one session offers: the built-in ones and the pack's own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from modes_tui.core.tools.access import FileRules
from modes_tui.core.tools.ports import ToolMaker
from modes_tui.core.tools.registry import ToolRegistry
from modes_tui.core.tools.workspace import Workspace, command_tool, file_tools


def default_registry(
    cwd: Path | str | None = None,
    *,
    pack: ToolMaker | None = None,
    command_timeout: float = 30.0,
    rules: Callable[[], FileRules] | None = None,
) -> ToolRegistry:
    """Files and commands confined to `cwd`, plus `pack`'s own tools made fresh for a
    session (`core.edits.session_tools` adds the edit tools and switch_mode on top).
    `rules`: the answering mode's `paths:` rules, which the file tools apply to every file
    they open (None: no deny rules; hard-linked files are still refused)."""
    workspace = Workspace(Path(cwd) if cwd is not None else Path.cwd(), rules=rules)
    registry = ToolRegistry(file_tools(workspace))
    registry.add(command_tool(workspace, timeout=command_timeout))
    for item in pack.make_tools() if pack is not None else ():
        registry.add(item)
    return registry
