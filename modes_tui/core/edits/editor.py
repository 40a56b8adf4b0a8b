"""The edit tools' core: plan a change, show it, checkpoint it, write it.

`Editor.plan` turns a `write_file` or `edit_file` call into a `Change` (the file as it is,
the text it would hold, the diff) without writing anything; `edit_file` needs exactly one
match of `old_text` and says how many there were otherwise. The confirmation shows the
plan's diff (`Editor.preview` keeps it for the call); when the call runs, `Editor.apply`
writes exactly that change, and only if the file still holds what the diff was made from
(else `ChangedOnDisk`: the user said yes to a diff, not to whatever is there now). Before
the write, the file's previous content goes to `record` as a `Checkpoint` (the engine
writes it to the session log); the session's `Checkpoints` keep it for `/undo`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modes_tui.core.edits.changes import FileState, commit, digest, look
from modes_tui.core.edits.checkpoints import Checkpoint, Checkpoints
from modes_tui.core.edits.diffs import diff_stats, unified_diff
from modes_tui.core.edits.policy import Policy
from modes_tui.core.errors import ToolError
from modes_tui.core.tools.access import FileRules
from modes_tui.core.tools.confined import ConfinedRoot, shown_path
from modes_tui.core.tools.registry import Tool, ToolRegistry, tool

__all__ = ["EDIT_TOOL_NAMES", "Change", "Editor", "edit_tools", "session_tools"]

EDIT_TOOL_NAMES = frozenset({"write_file", "edit_file"})


@dataclass(frozen=True, slots=True)
class Change:
    """A planned change of one file, not written yet."""

    tool: str
    """write_file or edit_file."""
    state: FileState
    """The file as it was when planned."""
    after: str
    """The text it would hold."""
    diff: str
    """The change as a unified diff (terminal-safe)."""

    @property
    def path(self) -> str:
        """The file's real path under the working directory."""
        return self.state.relative

    @property
    def summary(self) -> str:
        """One line: what happens to which file, and how many lines change."""
        added, removed = diff_stats(self.diff)
        verb = "create" if self.state.content is None else "change"
        return f"{verb} {shown_path(self.path)} (+{added} -{removed})"


def _key(tool_name: str, arguments: Mapping[str, Any]) -> str:
    return tool_name + json.dumps(dict(arguments), sort_keys=True, default=str)


class Editor:
    """Plans and writes file changes under `root` for one session."""

    def __init__(
        self,
        root: Path,
        *,
        checkpoints: Checkpoints | None = None,
        record: Callable[[Checkpoint], None] | None = None,
        turn: Callable[[], int] = lambda: 0,
    ) -> None:
        self.root = root
        """The working directory."""
        self.checkpoints = checkpoints if checkpoints is not None else Checkpoints()
        """Every checkpoint of the session (for /undo)."""
        self.record = record
        """Writes a checkpoint to the session log before the file is written."""
        self.turn = turn
        """The current user turn."""
        self.policy = Policy()
        """The answering mode's policy (the policy guard sets it before each call)."""
        self._shown: dict[str, Change] = {}

    def bind(
        self,
        *,
        checkpoints: Checkpoints,
        record: Callable[[Checkpoint], None] | None,
        turn: Callable[[], int],
    ) -> None:
        """Work for a session: its checkpoints, its log and its turn count (the engine)."""
        self.checkpoints, self.record, self.turn = checkpoints, record, turn

    def rules(self) -> FileRules:
        """The answering mode's `paths:` rules, as the file tools apply them to the file
        they open (a search skips what they refuse, a read refuses it)."""
        return self.policy.file_rules()

    def plan(self, tool_name: str, arguments: Mapping[str, Any]) -> Change:
        """The change a call would make; ToolError when it cannot be made."""
        path = str(arguments.get("path", ""))
        with ConfinedRoot(self.root) as root:
            state = look(root, path, self.rules())
        if tool_name == "write_file":
            after = str(arguments.get("content", ""))
        elif tool_name == "edit_file":
            after = _edited(
                state, str(arguments.get("old_text", "")), str(arguments.get("new_text", ""))
            )
        else:
            raise ToolError(f"{tool_name} does not change files")
        return Change(tool_name, state, after, unified_diff(state.relative, state.content, after))

    def preview(self, tool_name: str, arguments: Mapping[str, Any]) -> Change:
        """`plan`, kept so that the call writes exactly what was shown."""
        change = self.plan(tool_name, arguments)
        self._shown[_key(tool_name, arguments)] = change
        return change

    def forget(self, tool_name: str, arguments: Mapping[str, Any]) -> None:
        """Drop a shown plan (the user said no)."""
        self._shown.pop(_key(tool_name, arguments), None)

    def apply(self, tool_name: str, arguments: Mapping[str, Any], call_id: str = "") -> str:
        """Write the change (the one shown, if any); the tool's result for the model."""
        change = self._shown.pop(_key(tool_name, arguments), None)
        if change is None:
            change = self.plan(tool_name, arguments)
        if change.after == change.state.content:
            return f"{shown_path(change.path)} already holds that text; nothing was written"
        checkpoint = Checkpoint(
            turn=self.turn(),
            path=change.path,
            before=change.state.content,
            after_digest=digest(change.after.encode("utf-8")),
            diff=change.diff,
            tool=tool_name,
            call_id=call_id,
        )
        with ConfinedRoot(self.root) as root:
            if self.record is not None:
                self.record(checkpoint)  # before the write: a crash mid-write keeps the old text
            commit(root, change.state, change.after, self.rules())
        self.checkpoints.add(checkpoint)
        return f"{change.summary}\n{change.diff}"


def _edited(state: FileState, old_text: str, new_text: str) -> str:
    """The file's text with the one match of `old_text` replaced; ToolError otherwise."""
    if state.content is None:
        raise ToolError(f"`{state.shown}` does not exist; use write_file to create it")
    if not old_text:
        raise ToolError("old_text is empty; give the exact text to replace (a few whole lines)")
    if old_text == new_text:
        raise ToolError("old_text and new_text are the same; nothing would change")
    count = _matches(state.content, old_text)
    if count != 1:
        how = "nothing" if count == 0 else f"{count} places"
        fix = (
            "read the file again and copy the text exactly, whitespace included"
            if count == 0
            else "include more of the surrounding lines so that it matches exactly one place"
        )
        raise ToolError(
            f"old_text matched {how} in `{state.shown}` (it must match exactly one); {fix}"
        )
    return state.content.replace(old_text, new_text, 1)


def _matches(text: str, part: str) -> int:
    """How many places `part` starts at in `text`, overlapping ones included."""
    count = 0
    start = text.find(part)
    while start >= 0:
        count += 1
        if count > 99:
            break
        start = text.find(part, start + 1)
    return count


def edit_tools(editor: Editor) -> list[Tool]:
    """write_file and edit_file over `editor`; both ask first unless the mode's policy allows."""

    @tool(needs_confirmation=True)
    def write_file(path: str, content: str) -> str:
        """Create a text file, or replace all of an existing one, in the working directory.

        The user sees the change as a diff and may refuse it. To change part of a file, use
        edit_file instead.

        Args:
            path: The file, relative to the working directory; missing folders are created.
            content: The whole new content of the file.
        """
        return editor.apply("write_file", {"path": path, "content": content})

    @tool(needs_confirmation=True)
    def edit_file(path: str, old_text: str, new_text: str) -> str:
        """Replace one exact piece of text in a file of the working directory.

        old_text must match exactly one place in the file (copy it from read_file, with its
        whitespace, and include enough lines to make it unique). The user sees the change as
        a diff and may refuse it.

        Args:
            path: The file, relative to the working directory.
            old_text: The exact text to replace; it must occur exactly once.
            new_text: The text to put in its place.
        """
        return editor.apply("edit_file", {"path": path, "old_text": old_text, "new_text": new_text})

    return [write_file, edit_file]


def session_tools(
    cwd: Path | str | None = None, *, pack: Any = None, command_timeout: float = 30.0
) -> ToolRegistry:
    """Every tool one session offers: `core.tools.toolbox.default_registry` (files,
    commands, the pack's own tools) plus write_file, edit_file and switch_mode. The registry
    keeps the editor (`.editor`) for the engine, whose policy guard tells it the answering
    mode's rules (the read tools apply them to every file they open)."""
    from modes_tui.core.edits.handoff import switch_mode_tool
    from modes_tui.core.tools.toolbox import default_registry

    root = Path(cwd) if cwd is not None else Path.cwd()
    editor = Editor(root)
    registry = default_registry(
        root, pack=pack, command_timeout=command_timeout, rules=editor.rules
    )
    registry.editor = editor
    for item in (*edit_tools(editor), switch_mode_tool()):
        registry.add(item)
    return registry
