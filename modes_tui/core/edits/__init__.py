"""Modes that change files, safely: edit tools, diffs, a policy per mode, checkpoints.

    globs.py        `paths:` globs matched like .gitignore (pathspec's gitignore patterns)
    policy.py       `Policy`: a mode's `permissions:` per tool and `paths:` (write, deny);
                    `read_policy` reads them from a profile and names each bad key
    diffs.py        unified diffs, with what a terminal would obey written out (`visible`)
    changes.py      look at a file and write it under the working directory's descriptor:
                    no link followed out, special files refused, atomic replace, and only
                    if it still holds what was looked at (`ChangedOnDisk`)
    editor.py       `Editor`: plan a write_file / edit_file call as a `Change` (the diff
                    the confirmation shows), checkpoint it, write it; `edit_tools`
    checkpoints.py  `Checkpoint`s of a session and `/undo N` (files changed since are kept)
    handoff.py      the `switch_mode` tool a pack may offer (its guard and the rest of
                    the turn: core.engine.hand_off)

The policy guard that decides each call with these is `core.engine.policy_guard`, `/undo`
as both front ends run it `frontend.undo`.

Headless like the rest of core: the TUI and the REPL show a `Change`'s diff, they never
compute one.
"""

from modes_tui.core.edits.changes import MAX_TEXT_BYTES, ChangedOnDisk, FileState, commit, look
from modes_tui.core.edits.checkpoints import (
    Checkpoint,
    CheckpointRecord,
    Checkpoints,
    Restore,
    UndoPlan,
    UndoResult,
)
from modes_tui.core.edits.diffs import DiffLine, diff_lines, diff_stats, unified_diff, visible
from modes_tui.core.edits.editor import EDIT_TOOL_NAMES, Change, Editor, edit_tools, session_tools
from modes_tui.core.edits.globs import PathGlobs, check_glob
from modes_tui.core.edits.handoff import SWITCH_MODE, switch_mode_tool
from modes_tui.core.edits.policy import (
    ASKS_BY_NATURE,
    DEFAULT_DENY,
    PERMISSIONS,
    Permission,
    Policy,
    Rule,
    hand_off_problems,
    read_policy,
)

__all__ = ["MAX_TEXT_BYTES", "ChangedOnDisk", "FileState", "commit", "look"]
__all__ += ["Checkpoint", "CheckpointRecord", "Checkpoints", "Restore", "UndoPlan", "UndoResult"]
__all__ += ["DiffLine", "diff_lines", "diff_stats", "unified_diff", "visible"]
__all__ += ["EDIT_TOOL_NAMES", "Change", "Editor", "edit_tools", "session_tools"]
__all__ += ["SWITCH_MODE", "PathGlobs", "check_glob", "switch_mode_tool"]
__all__ += ["ASKS_BY_NATURE", "DEFAULT_DENY", "PERMISSIONS", "Permission", "Policy", "Rule"]
__all__ += ["hand_off_problems", "read_policy"]
