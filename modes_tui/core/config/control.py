"""The control file's keys: what a pack name may be (a name, never a path).

The control setting itself (`auto`, `off` or a mode, and `ControlReading`) is a value at
core's top level, `core/control_setting.py`.
"""

from __future__ import annotations

import re

PACK_NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""A pack name: a folder's name (never a path) and a key of the control file."""
PACK_NAME_RULE = (
    "a pack name is a name, not a path: letters, digits, '_', '-' and '.', starting with a "
    "letter or a digit, at most 64 characters (e.g. default, support)"
)


def pack_name_problem(name: object) -> str | None:
    """Why `name` is not a pack name (`is empty`, `is a path`, ...), or None when it is one."""
    if not isinstance(name, str):
        return "is not text"
    if not name:
        return f"is empty; {PACK_NAME_RULE}"
    if name in (".", "..") or "/" in name or "\\" in name:
        return f"is a path; {PACK_NAME_RULE}"
    if not PACK_NAME_PATTERN.fullmatch(name):
        return f"is not a pack name; {PACK_NAME_RULE}"
    return None
