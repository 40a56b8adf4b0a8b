"""Why the app could not start, in the words both front ends show: a bad setting names its
file, line and column (or its variable), in the note and in every message sent after it.

A `SettingsError`'s text starts with where the setting is (`<config.yaml>, line 3, column 1:`,
`MODES_TUI_BUDGET:`, `command line:`); that text is the headline, and the hint names the
same place, so no message says "the setting named in the note" without naming it.
"""

from __future__ import annotations

from modes_tui.core.errors import SettingsError

__all__ = ["setting_failure"]

_GENERIC_HINT = "fix the setting named above (its file or variable), then restart"


def setting_failure(error: SettingsError) -> tuple[str, str]:
    """(headline, hint) for a bad setting: `a setting is wrong: <file>, line 3, column 1:
    ...` and `fix <file>, line 3, column 1, then restart`."""
    text = str(error).strip()
    first = text.splitlines()[0] if text else ""
    headline = f"a setting is wrong: {first}" if first else "a setting is wrong"
    where, found, _ = first.partition(": ")
    if not found or not where or where == "command line":
        return headline, _GENERIC_HINT if where != "command line" else (
            "fix the command-line option named above, then restart"
        )
    return headline, f"fix {where.removeprefix('settings file ')}, then restart"
