"""The tools one session offers: the built-in ones and the pack's own."""

from __future__ import annotations

from pathlib import Path

from modes_tui.core.edits.editor import Editor, edit_tools
from modes_tui.core.edits.handoff import switch_mode_tool
from modes_tui.core.packs.profiles import Pack
from modes_tui.core.tools.registry import ToolRegistry
from modes_tui.core.tools.workspace import Workspace, command_tool, file_tools


def default_registry(
    cwd: Path | str | None = None,
    *,
    pack: Pack | None = None,
    command_timeout: float = 30.0,
    editor: Editor | None = None,
) -> ToolRegistry:
    """Files, edits and commands confined to `cwd`, plus `pack`'s own tools made fresh for a
    session. `editor` plans and checkpoints the edits; the registry keeps it (`.editor`) for
    the engine, whose policy guard also tells it what the answering mode may not read."""
    root = Path(cwd) if cwd is not None else Path.cwd()
    editor = editor if editor is not None else Editor(root)
    workspace = Workspace(root, denied=editor.denied)
    registry = ToolRegistry(file_tools(workspace), editor=editor)
    registry.add(command_tool(workspace, timeout=command_timeout))
    for item in (*edit_tools(editor), switch_mode_tool()):
        registry.add(item)
    for item in pack.make_tools() if pack is not None else ():
        registry.add(item)
    return registry
